package diff

import (
	"bytes"
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/contract/finding"
	"github.com/capirepo/capirepo/internal/clusterctlvars"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// Result is what Compare found.
type Result struct {
	// Findings are sorted by file, object, field, rule and message, each
	// once.
	Findings []finding.Finding
	// Notes say what was not compared and why: a provider only one of the
	// releases has.
	Notes []string
	// Changes are what the upgrade changes for users, by provider (the
	// providers compared): for release notes.
	Changes Changes
}

// Compare says what breaks when a management cluster moves from old to new
// with clusterctl upgrade. Providers are paired by label (one provider of a
// type on each side whose labels differ is paired too, with a CAPI711
// warning). Findings name new's files, or old's where new has none.
//
// The sides are parsed and the providers compared concurrently: each
// provider's comparison reads only its own files.
func Compare(old, new *release.Release) Result {
	pairs, notes := pairProviders(old, new)
	sides := parseAll(pairs, old.Version, new.Version)
	cs := make([]collector, len(pairs))
	var wg sync.WaitGroup
	for i := range pairs {
		wg.Go(func() { cs[i].provider(sides[i][0], sides[i][1]) })
	}
	wg.Wait()
	var fs []finding.Finding
	ch := Changes{Old: describe(old), New: describe(new), Providers: []ProviderChanges{}}
	for _, c := range cs {
		fs = append(fs, c.fs...)
		ch.Providers = append(ch.Providers, c.ch)
	}
	return Result{Findings: sortFindings(fs), Notes: notes, Changes: ch}
}

// parseAll parses both sides of every pair, each on its own goroutine.
func parseAll(pairs [][2]*release.Provider, oldVersion, newVersion string) [][2]*side {
	out := make([][2]*side, len(pairs))
	var wg sync.WaitGroup
	for i, pp := range pairs {
		wg.Go(func() { out[i][0] = parse(pp[0], oldVersion) })
		wg.Go(func() { out[i][1] = parse(pp[1], newVersion) })
	}
	wg.Wait()
	return out
}

// pairProviders pairs old's and new's providers by label, then the one
// provider of a type left on each side; the rest are named in notes.
func pairProviders(old, new *release.Release) (pairs [][2]*release.Provider, notes []string) {
	var restOld, restNew []*release.Provider
	for _, n := range new.Providers {
		if o, ok := old.Provider(n.Label()); ok {
			pairs = append(pairs, [2]*release.Provider{o, n})
			continue
		}
		restNew = append(restNew, n)
	}
	for _, o := range old.Providers {
		if _, ok := new.Provider(o.Label()); !ok {
			restOld = append(restOld, o)
		}
	}
	byType := func(ps []*release.Provider, t provider.Type) []*release.Provider {
		return slices.DeleteFunc(slices.Clone(ps), func(p *release.Provider) bool { return p.ID.Type != t })
	}
	for _, n := range restNew {
		os, ns := byType(restOld, n.ID.Type), byType(restNew, n.ID.Type)
		if len(os) == 1 && len(ns) == 1 {
			pairs = append(pairs, [2]*release.Provider{os[0], n})
			restOld = slices.DeleteFunc(restOld, func(p *release.Provider) bool { return p == os[0] })
			continue
		}
		notes = append(notes, fmt.Sprintf("%s: not in %s, nothing to compare (a new provider)", n.Label(), describe(old)))
	}
	for _, o := range restOld {
		notes = append(notes, fmt.Sprintf("%s: in %s but not in %s, not compared", o.Label(), describe(old), describe(new)))
	}
	return pairs, notes
}

func describe(r *release.Release) string {
	if r.Version != "" {
		return r.Version
	}
	if len(r.Providers) > 0 {
		return r.Providers[0].Version
	}
	return "the release"
}

// side is one provider of one release, parsed.
type side struct {
	p       *release.Provider
	version string
	sv      *version.Version // nil when version is no semantic version
	prefix  string
	meta    *provider.Metadata
	metaErr error

	crds     map[string]*apiextensionsv1.CustomResourceDefinition // by metadata.name
	crdNames []string                                             // sorted
	// dups are the components' objects held more than once (each
	// Document is what the cluster ends up with).
	dups []contract.Document
	// namespaces and managers are the components' Namespace objects and
	// the Deployments with a container named manager (namespace/name).
	namespaces []string
	managers   []string
	vars       map[string]*string // nil when the variables do not parse
	// classes are the ClusterClasses of the templates and ClusterClass
	// files, by name.
	classes map[string]class
	// flavors are the cluster-template flavors, by name ("" the default).
	flavors map[string]flavor
}

type class struct {
	file string
	obj  contract.Document
}

func parse(p *release.Provider, relVersion string) *side {
	s := &side{p: p, version: cmp.Or(p.Version, relVersion), crds: map[string]*apiextensionsv1.CustomResourceDefinition{}, classes: map[string]class{}}
	s.prefix = path.Join(p.Label(), s.version)
	s.sv, _ = version.ParseSemantic(s.version)
	if f, ok := p.File(provider.MetadataFile); ok {
		s.meta, s.metaErr = provider.ParseMetadata(provider.MetadataFile, f.Data)
	} else {
		s.metaErr = fmt.Errorf("no %s", provider.MetadataFile)
	}
	comps := p.Components()
	for _, d := range contract.Documents(comps.Data) {
		if d.Duplicate != nil {
			s.dups = append(s.dups, d)
		}
		switch {
		case d.CRD != nil:
			if _, dup := s.crds[d.Name]; !dup {
				s.crds[d.Name] = d.CRD
				s.crdNames = append(s.crdNames, d.Name)
			}
		case d.Kind == "Namespace" && d.APIVersion == "v1":
			s.namespaces = append(s.namespaces, d.Name)
		case d.Kind == "Deployment" && hasManager(d.Object):
			s.managers = append(s.managers, d.Namespace+"/"+d.Name)
		}
	}
	slices.Sort(s.crdNames)
	s.vars = variables(comps.Data)
	for _, f := range p.Files {
		if !isTemplate(f.Name) {
			continue
		}
		for _, d := range contract.Documents(f.Data) {
			if d.Kind == "ClusterClass" && strings.HasPrefix(d.APIVersion, "cluster.x-k8s.io/") {
				if _, dup := s.classes[d.Name]; !dup {
					s.classes[d.Name] = class{file: f.Name, obj: d}
				}
			}
		}
	}
	s.parseFlavors()
	return s
}

// variables returns what clusterctl's GetVariableMap returns for data, nil
// when it does not parse. Only the lines that hold a variable are parsed
// (the rest cannot change the map, and components are megabytes); if they
// do not parse on their own, the whole file is.
func variables(data []byte) map[string]*string {
	var b bytes.Buffer
	for line := range bytes.Lines(data) {
		if bytes.Contains(line, []byte("${")) {
			b.Write(line)
		}
	}
	if vars, err := clusterctlvars.Map(b.Bytes()); err == nil {
		return vars
	}
	if vars, err := clusterctlvars.Map(data); err == nil {
		return vars
	}
	return nil
}

func isTemplate(name string) bool {
	return strings.HasSuffix(name, ".yaml") && (strings.HasPrefix(name, "cluster-template") || strings.HasPrefix(name, "clusterclass-"))
}

// hasManager says whether a Deployment runs a container named manager
// (release.Containers, the one walk of pod specs).
func hasManager(obj map[string]any) bool {
	return slices.ContainsFunc(release.Containers(obj), func(c release.Container) bool { return c.List == "containers" && c.Name == "manager" })
}

// path is a file's path in the release: <label>/<version>/<name>.
func (s *side) path(name string) string { return s.prefix + "/" + name }

func (s *side) components() string { return s.path(s.p.ComponentsFile) }

// collector gathers the findings of one comparison, and the changes.
type collector struct {
	fs []finding.Finding
	ch ProviderChanges
}

// add records a finding of rule at its default severity.
func (c *collector) add(rule, file, obj, field, format string, args ...any) {
	r, ok := contract.LookupRule(rule)
	if !ok {
		panic("diff: rule " + rule + " is not in the catalogue")
	}
	c.addSev(rule, r.Severity, file, obj, field, format, args...)
}

func (c *collector) addSev(rule string, sev finding.Severity, file, obj, field, format string, args ...any) {
	c.fs = append(c.fs, finding.Finding{Rule: rule, Severity: sev, File: file, Object: obj, Field: field, Message: fmt.Sprintf(format, args...)})
}

// provider compares one provider of both releases.
func (c *collector) provider(o, n *side) {
	c.series(o, n)
	c.contract(o, n)
	c.skip(o, n)
	c.crds(o, n)
	c.identity(o, n)
	c.variables(o, n)
	c.clusterClasses(o, n)
	c.flavors(o, n)
	c.changes(o, n)
}

func sortFindings(fs []finding.Finding) []finding.Finding {
	slices.SortFunc(fs, finding.Compare)
	return slices.Compact(fs)
}

func crdID(name string) string { return "CustomResourceDefinition/" + name }
