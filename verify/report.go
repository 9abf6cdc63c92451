package verify

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Report is what clusterctl read from each provider repository.
type Report struct {
	Providers []*ProviderReport `json:"providers"`
}

// ProviderReport is one provider version as clusterctl sees it. Fields stay
// empty for the steps that failed or did not run.
type ProviderReport struct {
	Label   string `json:"label"`
	URL     string `json:"url"`
	Version string `json:"version"`
	// Versions is what clusterctl lists for the repository.
	Versions []string `json:"versions,omitempty"`
	// Contract is the contract of the release series covering Version.
	Contract       string `json:"contract,omitempty"`
	ComponentsFile string `json:"componentsFile"`
	// Objects counts the components' objects as clusterctl would install them.
	Objects int `json:"objects"`
	// Namespace is the namespace the components install into by default.
	Namespace string     `json:"namespace,omitempty"`
	Images    []string   `json:"images,omitempty"`
	Variables []Variable `json:"variables,omitempty"`
	// Flavors holds every cluster-template*.yaml read ("" is the default flavor).
	Flavors []*TemplateReport `json:"flavors,omitempty"`
	// ClusterClasses holds every clusterclass-*.yaml read on its own.
	ClusterClasses []*TemplateReport `json:"clusterClasses,omitempty"`
	// TemplatesListed is false when the caller could not list the
	// repository's files (a remote target without Files): no template was read.
	TemplatesListed bool `json:"templatesListed"`
	// Waived are the template files clusterctl failed to read whose lint
	// finding the maintainer waived (Options.Waived): not errors.
	Waived []WaivedFile `json:"waived,omitempty"`
}

// WaivedFile is a template file clusterctl cannot read, known to the
// maintainer: clusterctl's error and the waived finding.
type WaivedFile struct {
	File   string `json:"file"`
	Error  string `json:"error"`
	Waiver string `json:"waiver"`
}

// StandIns are the templates' variables that got a stand-in (no real value
// was given: --var, --values), each once, sorted; the components' are said
// on their own lines.
func (p *ProviderReport) StandIns() []string {
	seen := map[string]bool{}
	for _, t := range slices.Concat(p.Flavors, p.ClusterClasses) {
		for _, v := range t.Variables {
			if v.Placeholder {
				seen[v.Name] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// TemplateReport is one cluster template flavor or ClusterClass file.
type TemplateReport struct {
	// Name is the flavor or ClusterClass name.
	Name string `json:"name"`
	File string `json:"file"`
	// Objects counts the objects after processing, with the ClusterClasses a
	// template's topology Clusters use merged in.
	Objects int `json:"objects"`
	// Variables are the template's and its classes' variables, as merged by
	// clusterctl (the template's defaults win).
	Variables []Variable `json:"variables,omitempty"`
	// ClusterClasses are the classes merged into a flavor, as namespace/name.
	ClusterClasses []string `json:"clusterClasses,omitempty"`
	// After are the classes a flavor's topology Clusters name that the
	// release ships only inside other flavors: the flavor works once one of
	// those was applied (clusterctl fetches no clusterclass file for a class
	// the management cluster has), and fails before. Read as against such a
	// cluster; a warning in the text.
	After []ClassFlavor `json:"after,omitempty"`
}

// ClassFlavor is a class a topology flavor needs, and the flavors that ship it.
type ClassFlavor struct {
	// Class is the class as clusterctl names it, namespace/name.
	Class string `json:"class"`
	// As is the class as the template writes it: a name, or one holding
	// variables (${CLUSTER_CLASS_NAME}).
	As string `json:"as"`
	// Flavors ship it, each in the file of Files at the same index; applying
	// one of them first puts the class in the management cluster.
	Flavors []string `json:"flavors"`
	Files   []string `json:"files"`
}

// Warning says that the flavor needs another applied first, naming both.
func (c ClassFlavor) Warning(flavor, file string) string {
	var them []string
	for i, f := range c.Files {
		them = append(them, fmt.Sprintf("%s (%s)", flavorName(c.Flavors[i]), f))
	}
	which := "flavor " + them[0]
	if len(them) > 1 {
		which = "one of the flavors " + strings.Join(them, ", ")
	}
	_, name, _ := strings.Cut(c.Class, "/")
	return fmt.Sprintf("flavor %s (%s) needs %s applied first: the release ships ClusterClass %s only there, and clusterctl generate cluster fetches %s%s%s for a class the management cluster does not have yet, and fails without it",
		flavorName(flavor), file, which, c.As, clusterClassPrefix, name, yamlSuffix)
}

// flavorName names a flavor for people: the default flavor is "(default)".
func flavorName(flavor string) string {
	if flavor == "" {
		return "(default)"
	}
	return flavor
}

// Variable is one ${NAME} of a file, as clusterctl lists it.
type Variable struct {
	Name string `json:"name"`
	// Required is true when the file gives no default.
	Required bool    `json:"required"`
	Default  *string `json:"default,omitempty"`
	// Value is what verify substituted.
	Value string `json:"value"`
	// Placeholder is true when Value is verify's placeholder, not a given value.
	Placeholder bool `json:"placeholder,omitempty"`
}

// WriteText prints the report for people: the components' variables one a
// line (what clusterctl init asks for), every template file on one line
// with its count of variables, and the templates' variables once per
// provider, each with its default; the values substituted are in the JSON.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, p := range r.Providers {
		fmt.Fprintf(&b, "%s %s  (%s)\n", p.Label, p.Version, p.URL)
		if p.Contract != "" {
			fmt.Fprintf(&b, "  contract:   %s\n", p.Contract)
		}
		fmt.Fprintf(&b, "  components: %s: %d objects", p.ComponentsFile, p.Objects)
		if p.Namespace != "" {
			fmt.Fprintf(&b, ", namespace %s", p.Namespace)
		}
		b.WriteString("\n")
		for _, img := range p.Images {
			fmt.Fprintf(&b, "    image    %s\n", img)
		}
		writeVariables(&b, "    ", p.Variables)
		if !p.TemplatesListed {
			b.WriteString("  templates:  not listed (remote repository without a file list)\n")
		}
		var templateVars []fileVariables
		for _, t := range p.Flavors {
			name := t.Name
			if name == "" {
				name = "(default)"
			}
			fmt.Fprintf(&b, "  flavor %s: %s: %d objects%s", name, t.File, t.Objects, variableCount(t.Variables))
			if len(t.ClusterClasses) > 0 {
				fmt.Fprintf(&b, ", with ClusterClass %s", strings.Join(t.ClusterClasses, ", "))
			}
			for _, c := range t.After {
				flavors := make([]string, len(c.Flavors))
				for i, f := range c.Flavors {
					flavors[i] = flavorName(f)
				}
				fmt.Fprintf(&b, ", after flavor %s (ClusterClass %s)", strings.Join(flavors, " or "), c.Class)
			}
			b.WriteString("\n")
			for _, c := range t.After {
				fmt.Fprintf(&b, "    warning: %s\n", c.Warning(t.Name, t.File))
			}
			templateVars = append(templateVars, fileVariables{"flavor " + name, t.Variables})
		}
		for _, t := range p.ClusterClasses {
			fmt.Fprintf(&b, "  clusterclass %s: %s: %d objects%s\n", t.Name, t.File, t.Objects, variableCount(t.Variables))
			templateVars = append(templateVars, fileVariables{"clusterclass " + t.Name, t.Variables})
		}
		if names := distinctVariables(templateVars); len(names) > 0 {
			fmt.Fprintf(&b, "  template variables: %s\n", strings.Join(names, ", "))
		}
		for _, w := range p.Waived {
			fmt.Fprintf(&b, "  not read: %s (%s): %s\n", w.File, w.Waiver, w.Error)
		}
		if s := p.StandIns(); len(s) > 0 {
			fmt.Fprintf(&b, "  template stand-ins (no real value given): %s\n", strings.Join(s, ", "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// variableCount is ", N variables" for a template's line.
func variableCount(vars []Variable) string {
	switch len(vars) {
	case 0:
		return ""
	case 1:
		return ", 1 variable"
	}
	return fmt.Sprintf(", %d variables", len(vars))
}

// fileVariables are one template file's variables; name says which file
// ("flavor ha", "flavor (default)", "clusterclass quick-start").
type fileVariables struct {
	name string
	vars []Variable
}

// distinctVariables lists each variable of the templates once, sorted,
// with its default (or "required"). Where the files differ (one requires
// it, another gives a default, or two give different defaults), each
// is said with the files that say it: `NAME (required: flavor (default),
// flavor ha; default "x": flavor md)`.
func distinctVariables(files []fileVariables) []string {
	type said struct {
		what  string
		files []string
	}
	seen := map[string][]*said{}
	for _, f := range files {
		for _, v := range f.vars {
			d := "required"
			if !v.Required && v.Default != nil {
				d = fmt.Sprintf("default %q", *v.Default)
			}
			i := slices.IndexFunc(seen[v.Name], func(s *said) bool { return s.what == d })
			if i < 0 {
				seen[v.Name] = append(seen[v.Name], &said{what: d})
				i = len(seen[v.Name]) - 1
			}
			seen[v.Name][i].files = append(seen[v.Name][i].files, f.name)
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(seen)) {
		ways := seen[name]
		if len(ways) == 1 {
			out = append(out, fmt.Sprintf("%s (%s)", name, ways[0].what))
			continue
		}
		parts := make([]string, len(ways))
		for i, w := range ways {
			parts[i] = w.what + ": " + strings.Join(w.files, ", ")
		}
		out = append(out, fmt.Sprintf("%s (%s)", name, strings.Join(parts, "; ")))
	}
	return out
}

func writeVariables(b *strings.Builder, indent string, vars []Variable) {
	for _, v := range vars {
		switch {
		case v.Required && v.Placeholder:
			fmt.Fprintf(b, "%svariable %s (required) = %q placeholder\n", indent, v.Name, v.Value)
		case v.Required:
			fmt.Fprintf(b, "%svariable %s (required) = %q\n", indent, v.Name, v.Value)
		default:
			fmt.Fprintf(b, "%svariable %s (default %q) = %q\n", indent, v.Name, *v.Default, v.Value)
		}
	}
}
