package diff

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/values"
)

// flavor is one cluster-template flavor of a side: what `clusterctl
// generate cluster --flavor NAME` reads, and the variables it needs.
type flavor struct {
	file string
	// vars are the variables of the template and of the clusterclass files
	// its topology Clusters name, as clusterctl generate cluster processes
	// them: each file on its own, so a variable any of them uses without a
	// default must be set (nil); else the default the template gives, or
	// the first class file's. nil when a file does not parse (CAPI002
	// reports it).
	vars map[string]flavorVar
}

// flavorVar is a flavor's variable: its default (nil: required) and the
// file that makes it so.
type flavorVar struct {
	def  *string
	file string
}

// parseFlavors reads the side's flavors (release.FlavorOf names them) and
// their variables.
func (s *side) parseFlavors() {
	s.flavors = map[string]flavor{}
	for _, f := range s.p.Files {
		name, ok := release.FlavorOf(f.Name)
		if !ok {
			continue
		}
		files := []release.File{f}
		for _, class := range topologyClasses(f.Data) {
			if cf, ok := s.p.File("clusterclass-" + class + ".yaml"); ok && !slices.ContainsFunc(files, func(x release.File) bool { return x.Name == cf.Name }) {
				files = append(files, cf)
			}
		}
		fl := flavor{file: f.Name, vars: map[string]flavorVar{}}
		for _, ff := range files {
			vars := variables(ff.Data)
			if vars == nil {
				fl.vars = nil
				break
			}
			for _, name := range slices.Sorted(maps.Keys(vars)) {
				def := vars[name]
				was, seen := fl.vars[name]
				switch {
				case !seen, def == nil && was.def != nil:
					fl.vars[name] = flavorVar{def: def, file: ff.Name}
				}
			}
		}
		s.flavors[name] = fl
	}
}

// topologyClasses are the classes a template's topology Clusters name
// (values.TopologyClass), those named by a variable left out: which file
// clusterctl fetches for them depends on the value.
func topologyClasses(data []byte) []string {
	var out []string
	for _, d := range contract.Documents(data) {
		class, ok := values.TopologyClass(&unstructured.Unstructured{Object: d.Object})
		if ok && class != "" && !strings.Contains(class, "${") && !slices.Contains(out, class) {
			out = append(out, class)
		}
	}
	return out
}

// clusterctlSets are the variables clusterctl generate cluster sets itself
// (values.Fixed: the target namespace, the cluster name, the machine counts
// and --kubernetes-version): a flavor that starts using one needs nothing
// new of its users.
var clusterctlSets = values.Fixed("", "")

// flavorLabel names a flavor for people: "flavor NAME", or "the default
// flavor" (cluster-template.yaml, generate cluster without --flavor).
func flavorLabel(name string) string {
	if name == "" {
		return "the default flavor"
	}
	return "flavor " + name
}

// generateCommand is what users of a flavor run.
func generateCommand(name string) string {
	if name == "" {
		return "clusterctl generate cluster"
	}
	return "clusterctl generate cluster --flavor " + name
}

// flavors warns about what breaks for users of clusterctl generate cluster:
// a flavor old has and new lacks (CAPI715), a variable a flavor newly needs
// without a default (CAPI716), a default that changed (CAPI717).
func (c *collector) flavors(o, n *side) {
	var added []string
	for _, name := range slices.Sorted(maps.Keys(n.flavors)) {
		if _, ok := o.flavors[name]; !ok {
			added = append(added, name)
		}
	}
	c.ch.FlavorsAdded = added
	for _, name := range slices.Sorted(maps.Keys(o.flavors)) {
		of := o.flavors[name]
		nf, ok := n.flavors[name]
		if !ok {
			c.ch.FlavorsRemoved = append(c.ch.FlavorsRemoved, name)
			hint := "keep it, or say in the release notes what its users use instead"
			if len(added) > 0 {
				hint = fmt.Sprintf("%s adds %s: if it was renamed, keep the old name too, or say so in the release notes", n.version, flavorList(added))
			}
			c.add(contract.RuleUpgradeFlavor, o.path(of.file), "", "", "%s has %s (%s), which %s drops: `%s` fails for its users, as the release has no %s; %s",
				o.version, flavorLabel(name), of.file, n.version, generateCommand(name), of.file, hint)
			continue
		}
		if of.vars == nil || nf.vars == nil {
			continue // CAPI002 reports the file that does not parse
		}
		for _, v := range slices.Sorted(maps.Keys(nf.vars)) {
			if _, set := clusterctlSets[v]; set {
				continue // generate cluster sets it from its arguments and flags
			}
			nv := nf.vars[v]
			ov, had := of.vars[v]
			from := ""
			if nv.file != nf.file {
				from = " (in " + nv.file + ", which it uses)"
			}
			switch {
			case nv.def == nil && (!had || ov.def != nil):
				was := "did not use it"
				if had {
					was = fmt.Sprintf("gave it the default %q", *ov.def)
				}
				if c.ch.FlavorVariables == nil {
					c.ch.FlavorVariables = map[string][]string{}
				}
				c.ch.FlavorVariables[name] = append(c.ch.FlavorVariables[name], v)
				c.add(contract.RuleUpgradeFlavorVariable, n.path(nf.file), "", "${"+v+"}", "%s needs ${%s} without a default in %s%s, where %s %s: `%s` fails ('value for variables [%s] is not set') until its users set it, and their clusters need a value for it; give it a default, or say so in the release notes",
					flavorLabel(name), v, n.version, from, o.version, was, generateCommand(name), v)
			case nv.def != nil && had && ov.def != nil && *nv.def != *ov.def:
				c.add(contract.RuleUpgradeFlavorDefault, n.path(nf.file), "", "${"+v+"}", "%s gives ${%s} the default %q in %s%s, and %q in %s: clusters its users generate without setting it get the new value; say so in the release notes",
					flavorLabel(name), v, *nv.def, n.version, from, *ov.def, o.version)
			}
		}
	}
}

// flavorList is "flavor a" or "flavors a, b".
func flavorList(names []string) string {
	shown := make([]string, len(names))
	for i, n := range names {
		shown[i] = n
		if n == "" {
			shown[i] = "(default)"
		}
	}
	if len(names) == 1 {
		return "flavor " + shown[0]
	}
	return "flavors " + strings.Join(shown, ", ")
}
