package diff_test

import (
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/contract/finding"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/release"
)

// ClusterAPIPrevious is the cluster-api release before the pinned one whose
// tree the tests build: the real pair of the default suite.
const ClusterAPIPrevious = "sigs.k8s.io/cluster-api@v1.13.0"

var (
	builtMu sync.Mutex
	built   = map[string]*release.Release{}
)

// build renders a real tree from the module proxy once per test binary and
// returns a copy to change.
func build(t testing.TB, module string) *release.Release {
	t.Helper()
	builtMu.Lock()
	defer builtMu.Unlock()
	if r, ok := built[module]; ok {
		return buildtest.Clone(r)
	}
	_, v, _ := strings.Cut(module, "@")
	r := buildtest.Build(t, testtree.ModuleDir(t, module), v).Release
	built[module] = r
	return buildtest.Clone(r)
}

// realPair is cluster-api v1.13.0 and v1.14.2 as their trees build.
func realPair(t testing.TB) (old, new *release.Release) {
	t.Helper()
	return build(t, ClusterAPIPrevious), build(t, testtree.ClusterAPIModule)
}

// key is what the rule tests compare: where a finding is, not its words.
type key struct {
	File     string
	Rule     string
	Severity finding.Severity
	Object   string
	Field    string
}

func keys(fs []finding.Finding) []key {
	out := []key{}
	for _, f := range fs {
		out = append(out, key{f.File, f.Rule, f.Severity, f.Object, f.Field})
	}
	return out
}

const (
	E = contract.Error
	W = contract.Warning
	I = contract.Info
)

func crd(name string) string { return "CustomResourceDefinition/" + name }

// editCRD decodes the named CRD of a release's components, changes it and
// writes it back in its place.
func editCRD(t testing.TB, rel *release.Release, name string, fn func(*apiextensionsv1.CustomResourceDefinition)) {
	t.Helper()
	for _, p := range rel.Providers {
		comps := p.Components()
		docs := strings.Split(string(comps.Data), "\n---\n")
		for i, d := range docs {
			if !strings.Contains(d, "kind: CustomResourceDefinition") || !strings.Contains(d, "\n  name: "+name+"\n") {
				continue
			}
			var c apiextensionsv1.CustomResourceDefinition
			if err := yaml.Unmarshal([]byte(d), &c); err != nil {
				t.Fatal(err)
			}
			fn(&c)
			out, err := yaml.Marshal(&c)
			if err != nil {
				t.Fatal(err)
			}
			docs[i] = strings.TrimSuffix(string(out), "\n")
			if err := p.Add(p.ComponentsFile, []byte(strings.Join(docs, "\n---\n"))); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no CRD %s", name)
}

// appendCRD appends to a release's components a copy of the named CRD,
// changed by fn: the file then holds it twice.
func appendCRD(t testing.TB, rel *release.Release, name string, fn func(*apiextensionsv1.CustomResourceDefinition)) {
	t.Helper()
	for _, p := range rel.Providers {
		comps := p.Components()
		for _, d := range strings.Split(string(comps.Data), "\n---\n") {
			if !strings.Contains(d, "kind: CustomResourceDefinition") || !strings.Contains(d, "\n  name: "+name+"\n") {
				continue
			}
			var c apiextensionsv1.CustomResourceDefinition
			if err := yaml.Unmarshal([]byte(d), &c); err != nil {
				t.Fatal(err)
			}
			fn(&c)
			out, err := yaml.Marshal(&c)
			if err != nil {
				t.Fatal(err)
			}
			data := strings.TrimSuffix(string(comps.Data), "\n") + "\n---\n" + string(out)
			if err := p.Add(p.ComponentsFile, []byte(data)); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no CRD %s", name)
}

// editFile changes one file of a provider of a release.
func editFile(t testing.TB, rel *release.Release, label, name string, fn func(string) string) {
	t.Helper()
	p, ok := rel.Provider(label)
	if !ok {
		t.Fatalf("no provider %s", label)
	}
	f, _ := p.File(name)
	if err := p.Add(name, []byte(fn(string(f.Data)))); err != nil {
		t.Fatal(err)
	}
}

// replace replaces old in s once, and fails when it is not there.
func replace(t testing.TB, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("%q not found", old)
	}
	return strings.Replace(s, old, new, 1)
}

func version(c *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range c.Spec.Versions {
		if c.Spec.Versions[i].Name == name {
			return &c.Spec.Versions[i]
		}
	}
	panic("no version " + name)
}

// setProp changes a property of a version in place.
func setProp(c *apiextensionsv1.CustomResourceDefinition, ver string, fn func(*apiextensionsv1.JSONSchemaProps), names ...string) {
	var walk func(s *apiextensionsv1.JSONSchemaProps, names []string)
	walk = func(s *apiextensionsv1.JSONSchemaProps, names []string) {
		if len(names) == 0 {
			fn(s)
			return
		}
		child, ok := s.Properties[names[0]]
		if !ok {
			panic("no property " + names[0])
		}
		walk(&child, names[1:])
		s.Properties[names[0]] = child
	}
	walk(version(c, ver).Schema.OpenAPIV3Schema, names)
}
