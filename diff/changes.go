package diff

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/internal/markdown"
	"github.com/capirepo/capirepo/release"
)

// Changes are what an upgrade from Old to New changes for the release's
// users, provider by provider: the facts release notes tell ("Upgrading
// from ..."), beside the findings that judge them. Compare gathers them in
// the same walk as the findings.
type Changes struct {
	Old       string            `json:"old"`
	New       string            `json:"new"`
	Providers []ProviderChanges `json:"providers"`
}

// ProviderChanges are the changes of one provider.
type ProviderChanges struct {
	Label string `json:"label"`
	// OldContract and Contract are the contracts of the old and the new
	// version's release series; "" when metadata.yaml names none.
	OldContract string `json:"oldContract,omitempty"`
	Contract    string `json:"contract,omitempty"`
	// CRDs are the CRDs added, removed, or whose served or storage
	// versions change.
	CRDs []CRDChange `json:"crds,omitempty"`
	// Variables are the variables the new components need without a
	// default that the old ones did not (CAPI712): clusterctl init and
	// upgrade need them set.
	Variables []string `json:"variables,omitempty"`
	// FlavorVariables are, by flavor ("" the default), the variables it
	// newly needs without a default (CAPI716).
	FlavorVariables map[string][]string `json:"flavorVariables,omitempty"`
	// FlavorsAdded and FlavorsRemoved name flavors ("" the default).
	FlavorsAdded   []string `json:"flavorsAdded,omitempty"`
	FlavorsRemoved []string `json:"flavorsRemoved,omitempty"`
	// Classes are the ClusterClasses whose variables change.
	Classes []ClassChange `json:"classes,omitempty"`
	// ImagesAdded and ImagesRemoved are the images the components pull
	// (variables at their defaults) that only the new, or only the old,
	// release runs: what a mirror must copy, and may drop.
	ImagesAdded   []string `json:"imagesAdded,omitempty"`
	ImagesRemoved []string `json:"imagesRemoved,omitempty"`
}

// CRDChange is a CRD whose versions change: served and storage versions
// on each side; a CRD only one side has has no versions on the other.
type CRDChange struct {
	Name       string   `json:"name"`
	OldServed  []string `json:"oldServed,omitempty"`
	Served     []string `json:"served,omitempty"`
	OldStorage string   `json:"oldStorage,omitempty"`
	Storage    string   `json:"storage,omitempty"`
}

// ClassChange is a ClusterClass whose variables change.
type ClassChange struct {
	Name    string   `json:"name"`
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// empty says nothing a user needs to know changes.
func (p ProviderChanges) empty() bool {
	return p.OldContract == p.Contract && len(p.CRDs)+len(p.Variables)+len(p.FlavorVariables)+len(p.FlavorsAdded)+len(p.FlavorsRemoved)+
		len(p.Classes)+len(p.ImagesAdded)+len(p.ImagesRemoved) == 0
}

// changes gathers what the findings do not hold of one provider pair:
// contracts, CRD versions, flavors, ClusterClass variables and images. The
// flavors and variables are recorded by the rules that find them.
func (c *collector) changes(o, n *side) {
	ch := &c.ch
	ch.Label = n.p.Label()
	ch.OldContract, ch.Contract = seriesContract(o.meta, o.sv), seriesContract(n.meta, n.sv)
	union := setOf(o.crdNames)
	maps.Copy(union, setOf(n.crdNames))
	names := slices.Sorted(maps.Keys(union))
	for _, name := range names {
		cc := CRDChange{Name: name}
		if oc := o.crds[name]; oc != nil {
			cc.OldServed, cc.OldStorage = servedVersions(oc), strings.Join(storageVersions(oc), ", ")
		}
		if nc := n.crds[name]; nc != nil {
			cc.Served, cc.Storage = servedVersions(nc), strings.Join(storageVersions(nc), ", ")
		}
		if !slices.Equal(cc.OldServed, cc.Served) || cc.OldStorage != cc.Storage {
			ch.CRDs = append(ch.CRDs, cc)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(n.classes)) {
		oc, ok := o.classes[name]
		if !ok {
			continue
		}
		ov, nv := classVariables(oc.obj.Object), classVariables(n.classes[name].obj.Object)
		cl := ClassChange{Name: name, Added: missing(nv, ov), Removed: missing(ov, nv)}
		if len(cl.Added)+len(cl.Removed) > 0 {
			ch.Classes = append(ch.Classes, cl)
		}
	}
	oi, ni := pulledImages(o), pulledImages(n)
	ch.ImagesAdded, ch.ImagesRemoved = missing(ni, oi), missing(oi, ni)
}

// missing lists what of names is not in other, in order.
func missing(names, other []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(other, n) {
			out = append(out, n)
		}
	}
	return out
}

func setOf(names []string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	return out
}

// pulledImages are the images a side's components pull, variables at
// their defaults (release.ComponentImages, the one walk of pod specs),
// sorted; an image whose variable has no default is left out.
func pulledImages(s *side) []string {
	uses, err := release.ComponentImages(s.p.Label(), s.p.ComponentsFile, s.p.Components().Data)
	if err != nil {
		return nil // CAPI001 reports components that do not parse
	}
	var out []string
	for _, u := range uses {
		if u.Pulls != "" && !slices.Contains(out, u.Pulls) {
			out = append(out, u.Pulls)
		}
	}
	slices.Sort(out)
	return out
}

// WriteMarkdown prints the changes for release notes or a job summary: a
// heading "Upgrading from OLD" at the level given, then each provider's
// contract, CRD versions, variables to set, flavors, ClusterClass variables
// and images, those that change only. A provider without changes gets a
// line that says so.
func (c Changes) WriteMarkdown(w io.Writer, level int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s Upgrading from %s\n\n", strings.Repeat("#", level), markdown.Text(c.Old))
	for _, p := range c.Providers {
		fmt.Fprintf(&b, "%s %s\n\n", strings.Repeat("#", level+1), markdown.Code(p.Label))
		if p.empty() {
			b.WriteString("Nothing its users need to know changes.\n\n")
			continue
		}
		var items []string
		switch {
		case p.OldContract != p.Contract && p.OldContract != "" && p.Contract != "":
			items = append(items, fmt.Sprintf("**Contract** %s, was %s: upgrade every provider of a management cluster to a release of %s together.", markdown.Code(p.Contract), markdown.Code(p.OldContract), markdown.Code(p.Contract)))
		case p.Contract != "":
			items = append(items, fmt.Sprintf("Contract %s, unchanged.", markdown.Code(p.Contract)))
		}
		if len(p.Variables) > 0 {
			items = append(items, fmt.Sprintf("**Set before upgrading** (the components need them, without a default): %s.", codes(p.Variables, "${%s}")))
		}
		for _, f := range slices.Sorted(maps.Keys(p.FlavorVariables)) {
			items = append(items, fmt.Sprintf("**%s** needs %s, without a default: set %s to generate clusters from it.", markdown.Text(strings.ToUpper(flavorLabel(f)[:1])+flavorLabel(f)[1:]),
				codes(p.FlavorVariables[f], "${%s}"), map[bool]string{true: "it", false: "them"}[len(p.FlavorVariables[f]) == 1]))
		}
		if len(p.FlavorsRemoved) > 0 {
			items = append(items, fmt.Sprintf("**Flavors removed:** %s (`clusterctl generate cluster --flavor` with them fails).", flavorCodes(p.FlavorsRemoved)))
		}
		if len(p.FlavorsAdded) > 0 {
			items = append(items, fmt.Sprintf("Flavors added: %s.", flavorCodes(p.FlavorsAdded)))
		}
		for _, cl := range p.Classes {
			s := fmt.Sprintf("ClusterClass %s:", markdown.Code(cl.Name))
			if len(cl.Added) > 0 {
				s += " variables added " + codes(cl.Added, "%s") + ";"
			}
			if len(cl.Removed) > 0 {
				s += " **variables removed** " + codes(cl.Removed, "%s") + " (Clusters that set them no longer validate);"
			}
			items = append(items, strings.TrimSuffix(s, ";")+".")
		}
		if len(p.ImagesAdded) > 0 {
			items = append(items, fmt.Sprintf("Images added (a mirror must copy them): %s.", codes(p.ImagesAdded, "%s")))
		}
		if len(p.ImagesRemoved) > 0 {
			items = append(items, fmt.Sprintf("Images no longer used: %s.", codes(p.ImagesRemoved, "%s")))
		}
		for _, it := range items {
			b.WriteString("- " + it + "\n")
		}
		b.WriteString("\n")
		if len(p.CRDs) > 0 {
			rows := make([][]string, len(p.CRDs))
			for i, cc := range p.CRDs {
				rows[i] = []string{markdown.Code(cc.Name), versionsCell(cc.OldServed, cc.OldStorage), versionsCell(cc.Served, cc.Storage)}
			}
			if err := markdown.Table(&b, []string{"CRD", "served (storage) in " + markdown.Text(c.Old), "served (storage) in " + markdown.Text(c.New)}, rows); err != nil {
				return err
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func versionsCell(served []string, storage string) string {
	if len(served) == 0 && storage == "" {
		return "not in the release"
	}
	s := markdown.Text(cmp.Or(strings.Join(served, ", "), "none served"))
	if storage != "" {
		s += " (" + markdown.Text(storage) + ")"
	}
	return s
}

// codes is names as code spans, each formatted, joined with commas.
func codes(names []string, format string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = markdown.Code(fmt.Sprintf(format, n))
	}
	return strings.Join(out, ", ")
}

func flavorCodes(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		if n == "" {
			out[i] = "the default flavor"
			continue
		}
		out[i] = markdown.Code(n)
	}
	return strings.Join(out, ", ")
}
