package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
)

// Templates says where a provider's cluster templates come from. In
// capirepo.yaml it is either a folder name (`templates: templates`) or an
// object with these fields. Paths are slash-separated and relative to the
// provider tree.
type Templates struct {
	// Dir holds cluster-template[-flavor].yaml and clusterclass-<name>.yaml
	// files, published as they are (default: templates, when it exists or
	// when neither Flavors nor Files is set).
	Dir string `json:"dir,omitempty"`
	// Flavors lists folders whose sub-folders are flavor kustomizations
	// (default: <dir>/flavors, when it exists).
	Flavors []string `json:"flavors,omitempty"`
	// LoadRestrictor "none" renders flavors as `kustomize build
	// --load-restrictor LoadRestrictionsNone` does: they may load files
	// outside their own folder, but never outside the provider tree.
	LoadRestrictor string `json:"loadRestrictor,omitempty" enum:"rootOnly,none,LoadRestrictionsRootOnly,LoadRestrictionsNone"`
	// Committed says what happens when a flavor and its committed render
	// (<dir>/cluster-template-<flavor>.yaml) hold different objects: "check"
	// (default) refuses, "source" publishes the render, "committed" publishes
	// the committed file.
	Committed string `json:"committed,omitempty" enum:"check,source,committed"`
	// Regenerate is the command that regenerates the committed renders,
	// named when one is stale (default: guessed from the Makefile).
	Regenerate string `json:"regenerate,omitempty"`
	// Exclude lists published names (path.Match patterns) left out of the release.
	Exclude []string `json:"exclude,omitempty"`
	// Files maps a published name to a file or kustomization folder of the
	// tree. Names clusterctl reads as templates (cluster-template*.yaml,
	// clusterclass-*.yaml) are templates; any other file (a ClusterClass
	// example, a script, a variables file) is published as it is.
	Files map[string]string `json:"files,omitempty"`
	// Set fills named variables with fixed values in the files a pattern
	// names, after rendering (templates_set.go).
	Set []TemplateSet `json:"set,omitempty"`
	// None: this provider ships no templates.
	None bool `json:"none,omitempty"`

	// Conventional is true when the config did not ask and capirepo took
	// the tree's templates folder by convention.
	Conventional bool `json:"-"`
}

// Load restrictions and committed-render policies.
const (
	LoadRestrictorRootOnly = "rootOnly"
	LoadRestrictorNone     = "none"

	CommittedCheck  = "check"
	CommittedSource = "source"
	CommittedKeep   = "committed"
)

// shorthandField: templates: <folder> is templates: {dir: <folder>}.
func (Templates) shorthandField() string { return "dir" }

// UnmarshalJSON takes a folder name or an object, strictly.
func (t *Templates) UnmarshalJSON(data []byte) error {
	var dir string
	if err := json.Unmarshal(data, &dir); err == nil {
		*t = Templates{Dir: dir}
		return nil
	}
	type plain Templates
	var p plain
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("templates: a folder name or an object with dir, flavors, loadRestrictor, committed, regenerate, exclude, files, set, none: %w", err)
	}
	*t = Templates(p)
	return nil
}

// Enabled reports whether the provider collects templates at all.
func (t *Templates) Enabled() bool {
	return t != nil && !t.None && (t.Dir != "" || len(t.Flavors) > 0 || len(t.Files) > 0)
}

// takesTemplatesByDefault: only infrastructure providers conventionally
// ship cluster templates. Bootstrap, control-plane, IPAM, addon and
// runtime-extension trees often keep templates for other providers' use, so
// they (and core) publish none unless the config asks.
func takesTemplatesByDefault(t Type) bool {
	return t == clusterctlv1.InfrastructureProviderType
}

// defaultTemplates fills in the templates settings of s and checks them.
func (s *Spec) defaultTemplates(dir string, all []Spec, field func(string) string) error {
	t := s.Templates
	if t == nil {
		id, err := s.ID()
		if err != nil {
			return err
		}
		if !takesTemplatesByDefault(id.Type) || !isDir(filepath.Join(dir, DefaultTemplates)) {
			return nil
		}
		// In a monorepo, templates go to the providers configured for them.
		for _, o := range all {
			if o.Name != s.Name && o.Templates != nil && !o.Templates.Conventional && o.Templates.Enabled() {
				return nil
			}
		}
		s.Templates = &Templates{Dir: DefaultTemplates, Conventional: true}
		t = s.Templates
	}
	if t.None {
		if t.Dir != "" || len(t.Flavors) > 0 || len(t.Files) > 0 || len(t.Exclude) > 0 || len(t.Set) > 0 || t.LoadRestrictor != "" || t.Committed != "" {
			return fmt.Errorf("%s: none: true ships no templates; remove the other templates settings or none", field("templates"))
		}
		return nil
	}
	if t.Dir == "" && (isDir(filepath.Join(dir, DefaultTemplates)) || len(t.Flavors) == 0 && len(t.Files) == 0) {
		t.Dir = DefaultTemplates
	}
	if err := CheckRelPath(t.Dir); err != nil {
		return fmt.Errorf("%s: %w", field("templates.dir"), err)
	}
	for i, f := range t.Flavors {
		if f == "" {
			return fmt.Errorf("%s: empty folder", field(fmt.Sprintf("templates.flavors[%d]", i)))
		}
		if err := CheckRelPath(f); err != nil {
			return fmt.Errorf("%s: %w", field(fmt.Sprintf("templates.flavors[%d]", i)), err)
		}
	}
	switch t.LoadRestrictor {
	case "", LoadRestrictorRootOnly, "LoadRestrictionsRootOnly":
		t.LoadRestrictor = LoadRestrictorRootOnly
	case LoadRestrictorNone, "LoadRestrictionsNone":
		t.LoadRestrictor = LoadRestrictorNone
	default:
		return fmt.Errorf("%s: %q: use rootOnly (the default) or none", field("templates.loadRestrictor"), t.LoadRestrictor)
	}
	switch t.Committed {
	case "":
		t.Committed = CommittedCheck
	case CommittedCheck, CommittedSource, CommittedKeep:
	default:
		return fmt.Errorf("%s: %q: use check (the default), source or committed", field("templates.committed"), t.Committed)
	}
	for i, p := range t.Exclude {
		if _, err := path.Match(p, ""); err != nil || p == "" || strings.Contains(p, "/") {
			return fmt.Errorf("%s: %q is not a file name pattern (path.Match, no '/')", field(fmt.Sprintf("templates.exclude[%d]", i)), p)
		}
	}
	if err := checkTemplateSets(t.Set, field); err != nil {
		return err
	}
	names := make([]string, 0, len(t.Files))
	for name := range t.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f := field("templates.files[" + name + "]")
		if err := CheckFileName("published file name", name); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if t.Files[name] == "" {
			return fmt.Errorf("%s: empty source path", f)
		}
		if err := CheckRelPath(t.Files[name]); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return nil
}
