package contract

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/capirepo/capirepo/builder/buildtest"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/release"
)

// legacyParseObjects is the parser the linter had before it parsed each
// document's YAML once: sigs.k8s.io/yaml.Unmarshal of every document into an
// any, then again into a typed CRD for each CustomResourceDefinition.
func legacyParseObjects(data []byte, crds bool, bad func(doc int, field, msg string)) []*object {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*object
	for i := 0; ; i++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			bad(i, "", fmt.Sprintf("cannot split document %d: %v", i+1, err))
			break
		}
		if len(bytes.TrimSpace(legacyStripComments(raw))) == 0 {
			i--
			continue
		}
		var v any
		if err := yaml.Unmarshal(raw, &v); err != nil {
			bad(i, "", fmt.Sprintf("document %d does not parse: %v", i+1, err))
			continue
		}
		if v == nil {
			i--
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			bad(i, "", fmt.Sprintf("document %d is a %T, not an object", i+1, v))
			continue
		}
		o := &object{doc: i, raw: raw, m: m}
		o.apiVersion, _ = m["apiVersion"].(string)
		o.kind, _ = m["kind"].(string)
		o.name, _ = get(m, "metadata", "name").(string)
		o.namespace, _ = get(m, "metadata", "namespace").(string)
		switch {
		case o.apiVersion == "":
			bad(i, "apiVersion", fmt.Sprintf("document %d has no apiVersion", i+1))
			continue
		case o.kind == "":
			bad(i, "kind", fmt.Sprintf("document %d (%s) has no kind", i+1, o.apiVersion))
			continue
		case o.name == "" && !strings.HasSuffix(o.kind, "List"):
			bad(i, "metadata.name", fmt.Sprintf("document %d (%s) has no metadata.name", i+1, o.kind))
			continue
		}
		out = append(out, o)
	}
	if crds { // the old parseCRDs
		for _, o := range out {
			if o.kind != "CustomResourceDefinition" || o.group() != "apiextensions.k8s.io" {
				continue
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.Unmarshal(o.raw, &crd); err != nil {
				continue
			}
			o.crd = &crd
		}
	}
	return out
}

func legacyStripComments(b []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		out = append(out, line...)
		out = append(out, '\n')
	}
	return out
}

// legacyChecks counts the Reports compared with the legacy parser's, and
// keeps the differences.
var legacyChecks struct {
	sync.Mutex
	n     int
	diffs []string
}

// TestMain compares every Report that Lint and LintFiles give in this
// package's tests (the rule cases, the example's mutations, ...) with the
// legacy parser's, finding by finding and in order. Not when benchmarking:
// the benchmarks time the linter alone.
func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() != "" {
		os.Exit(m.Run())
	}
	checkReport = func(got Report, again func(parseFunc) Report) {
		want := again(legacyParseObjects)
		diff := cmp.Diff(want, withoutNewRules(got))
		legacyChecks.Lock()
		defer legacyChecks.Unlock()
		legacyChecks.n++
		if diff != "" {
			legacyChecks.diffs = append(legacyChecks.diffs, diff)
		}
	}
	code := m.Run()
	legacyChecks.Lock()
	defer legacyChecks.Unlock()
	for _, d := range legacyChecks.diffs {
		fmt.Fprintf(os.Stderr, "FAIL: a Report differs from the legacy parser's (-legacy +new):\n%s\n", d)
		code = 1
	}
	if testing.Verbose() {
		fmt.Printf("%d Reports compared with the legacy parser's, %d differ\n", legacyChecks.n, len(legacyChecks.diffs))
	}
	os.Exit(code)
}

// newRules are the rules added since the legacy parser. Their findings
// rest on what only the new parser records (object.crdJSON), so the Reports
// are compared without them; their own tests pin them.
var newRules = []string{RuleCRDDecode}

// withoutNewRules returns r without the findings of newRules.
func withoutNewRules(r Report) Report {
	out := Report{Findings: []Finding{}, Waived: []WaivedFinding{}, Unmatched: r.Unmatched, NotWaived: r.NotWaived}
	for _, f := range r.Findings {
		if !slices.Contains(newRules, f.Rule) {
			out.Findings = append(out.Findings, f)
		}
	}
	for _, f := range r.Waived {
		if !slices.Contains(newRules, f.Rule) {
			out.Waived = append(out.Waived, f)
		}
	}
	return out
}

func sameAsLegacy(t *testing.T, got Report, again func(parseFunc) Report) {
	t.Helper()
	if diff := cmp.Diff(again(legacyParseObjects), withoutNewRules(got)); diff != "" {
		t.Errorf("Report differs from the legacy parser's (-legacy +new):\n%s", diff)
	}
}

func TestLint_SameReportAsLegacyParser(t *testing.T) {
	cases := []struct{ name, dir, version string }{
		{"example", "../examples/infrastructure-example", "v0.1.0"},
		{"cluster-api", testtree.ClusterAPIDir(), "v1.14.2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := os.Stat(c.dir); err != nil {
				t.Skipf("%s is not there: %v", c.dir, err)
			}
			res := buildtest.Build(t, c.dir, c.version)
			got := lintRelease(res.Release, Options{}, nil)
			sameAsLegacy(t, got, func(p parseFunc) Report { return lintRelease(res.Release, Options{}, p) })
			// cluster-api has no findings: compare what the rules read too.
			for _, p := range res.Release.Providers {
				for _, f := range p.Files {
					sameObjects(t, p.Label()+"/"+f.Name, f.Data)
				}
			}
		})
	}
}

// sameObjects checks that both parsers give the same objects, maps and
// CRDs, and the same bad documents.
func sameObjects(t *testing.T, name string, data []byte) {
	t.Helper()
	type parsed struct {
		objs []object
		bad  []string
	}
	run := func(p parseFunc) parsed {
		var out parsed
		for _, o := range p(data, true, func(doc int, field, msg string) {
			out.bad = append(out.bad, fmt.Sprint(doc, field, msg))
		}) {
			obj := *o
			obj.crdJSON = nil // recorded by the new parser only, for CAPI315
			out.objs = append(out.objs, obj)
		}
		return out
	}
	want, got := run(legacyParseObjects), run(parseObjects)
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s: objects differ from the legacy parser's", name)
	}
	crds := 0
	for _, o := range got.objs {
		if o.crd != nil {
			crds++
		}
	}
	t.Logf("%s: %d objects, %d CRDs, %d bad documents: the same", name, len(got.objs), crds, len(got.bad))
}

// TestLint_ScalarsInCRDStringFields: sigs.k8s.io/yaml.Unmarshal into a typed
// CRD turns a number or boolean into a string where the field is a string;
// YAMLToJSON does not. The findings of the other rules stay those of
// Unmarshal; CAPI315 reports each such value, which the API server refuses.
func TestLint_ScalarsInCRDStringFields(t *testing.T) {
	data, err := os.ReadFile("testdata/release/infrastructure-components.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const machine = "name: foomachines.infrastructure.foo.example.com"
	cases := []struct {
		name, old, new string
		want           []string // rule and field of findings on CustomResourceDefinition/foomachines
	}{
		{"description: 123 in a schema, with the schema still checked",
			"providerID: {type: string}", "providerID: {type: integer, description: 123}",
			[]string{
				"CAPI310 spec.versions[1].schema.openAPIV3Schema.properties.spec.properties.providerID",
				"CAPI315 spec.versions[1].schema.openAPIV3Schema.properties.spec.properties.providerID.description",
			}},
		{"a contract label written as a number", machine + "\n  annotations:\n    cert-manager.io/inject-ca-from: foo-system/foo-serving-cert\n  labels:\n    cluster.x-k8s.io/provider: infrastructure-foo\n    cluster.x-k8s.io/v1beta2: v1beta1",
			machine + "\n  annotations:\n    cert-manager.io/inject-ca-from: foo-system/foo-serving-cert\n  labels:\n    cluster.x-k8s.io/provider: infrastructure-foo\n    cluster.x-k8s.io/v1beta2: 1",
			[]string{"CAPI304 metadata.labels[cluster.x-k8s.io/v1beta2]", "CAPI315 metadata.labels[cluster.x-k8s.io/v1beta2]"}},
		{"a category written as a number", "categories: [cluster-api]\n  scope: Namespaced\n  conversion:\n    strategy: Webhook\n    webhook:\n      conversionReviewVersions: [v1]\n      clientConfig:\n        service: {name: foo-webhook-service, namespace: foo-system, path: /convert}\n  versions:\n  - name: v1alpha1\n    served: true\n    storage: false\n    schema:\n      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n    subresources: {status: {}}\n  - name: v1beta1\n    served: true\n    storage: true\n    subresources: {status: {}}\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec: {type: object, properties: {providerID:",
			"categories: [7]\n  scope: Namespaced\n  conversion:\n    strategy: Webhook\n    webhook:\n      conversionReviewVersions: [v1]\n      clientConfig:\n        service: {name: foo-webhook-service, namespace: foo-system, path: /convert}\n  versions:\n  - name: v1alpha1\n    served: true\n    storage: false\n    schema:\n      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n    subresources: {status: {}}\n  - name: v1beta1\n    served: true\n    storage: true\n    subresources: {status: {}}\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec: {type: object, properties: {providerID:",
			[]string{"CAPI313 spec.names.categories", "CAPI315 spec.names.categories[0]"}},
		{"served written as a string: the CRD does not decode either way, CAPI315 alone reports it", "served: true\n    storage: true\n    subresources: {status: {}}\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec: {type: object, properties: {providerID:",
			"served: \"true\"\n    storage: true\n    subresources: {status: {}}\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec: {type: object, properties: {providerID:",
			[]string{"CAPI315 spec.versions[1].served"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !bytes.Contains(data, []byte(c.old)) {
				t.Fatalf("the fixture does not contain %q", c.old)
			}
			files := []release.File{{Name: "infrastructure-components.yaml", Data: bytes.Replace(data, []byte(c.old), []byte(c.new), 1)}}
			opts := Options{Provider: "infrastructure-foo", Version: "v0.1.0"}
			got := lintFiles(files, opts, nil)
			sameAsLegacy(t, got, func(p parseFunc) Report { return lintFiles(files, opts, p) })
			var on []string
			for _, f := range got.Findings {
				if f.Object == "CustomResourceDefinition/foomachines.infrastructure.foo.example.com" {
					on = append(on, f.Rule+" "+f.Field)
				}
			}
			if diff := cmp.Diff(c.want, on); diff != "" {
				t.Errorf("findings on the CRD (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeCRD_FallsBackToTypedUnmarshal pins where the JSON path and the
// typed Unmarshal part: decodeCRD must agree with Unmarshal on both.
func TestDecodeCRD_FallsBackToTypedUnmarshal(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a, labels: {x: 1, y: true}}\nspec: {group: g, versions: [{name: v1, schema: {openAPIV3Schema: {description: 123, type: object}}}]}\n",
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a}\nspec: {group: 1.5, names: {categories: [1, true]}}\n",
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a}\nspec: {versions: [{name: v1, served: \"yes\"}]}\n",
	} {
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		var want apiextensionsv1.CustomResourceDefinition
		wantErr := yaml.Unmarshal([]byte(doc), &want)
		got, fromJSON := decodeCRD([]byte(doc), j)
		if fromJSON {
			t.Errorf("%s: decodeCRD says the JSON decoded", doc)
		}
		switch {
		case wantErr != nil && got != nil:
			t.Errorf("%s: Unmarshal fails (%v), decodeCRD gives a CRD", doc, wantErr)
		case wantErr == nil && got == nil:
			t.Errorf("%s: decodeCRD gives no CRD, Unmarshal does", doc)
		case wantErr == nil:
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("%s (-Unmarshal +decodeCRD):\n%s", doc, diff)
			}
		}
	}
}

// TestParseObjects_SameAsLegacy covers what the rule fixtures do not:
// empty, null and comment-only documents, parse errors and a split error,
// in a file big enough to decode on several goroutines.
func TestParseObjects_SameAsLegacy(t *testing.T) {
	var big strings.Builder
	for i := range 400 {
		switch i % 7 {
		case 0:
			big.WriteString("# only a comment\n")
		case 1:
			big.WriteString("null\n")
		case 2:
			big.WriteString("a: [1, 2\n")
		case 3:
			big.WriteString("- 1\n")
		case 4:
			big.WriteString("apiVersion: v1\nmetadata: {name: x}\n")
		default:
			fmt.Fprintf(&big, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm%d}\ndata: {k: %q, n: \"%d\"}\n", i, strings.Repeat("v", 200), i)
		}
		big.WriteString("---\n")
	}
	inputs := map[string]string{
		"big": big.String(),
		"big, then a tab indent and a control character": big.String() + "a: |\n\tb\n---\n\x00",
		"empty":    "",
		"only ---": "---\n---\n",
		"list":     "apiVersion: v1\nkind: List\nmetadata: {}\nitems: []\n",
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			type call struct {
				Doc        int
				Field, Msg string
			}
			run := func(p parseFunc) ([]call, []string) {
				var calls []call
				objs := p([]byte(in), true, func(doc int, field, msg string) { calls = append(calls, call{doc, field, msg}) })
				var ids []string
				for _, o := range objs {
					ids = append(ids, fmt.Sprintf("%d %s %s", o.doc, o.ID(), o.raw))
				}
				return calls, ids
			}
			wantCalls, wantObjs := run(legacyParseObjects)
			gotCalls, gotObjs := run(parseObjects)
			if diff := cmp.Diff(wantCalls, gotCalls); diff != "" {
				t.Errorf("bad documents (-legacy +new):\n%s", diff)
			}
			if diff := cmp.Diff(wantObjs, gotObjs); diff != "" {
				t.Errorf("objects (-legacy +new):\n%s", diff)
			}
		})
	}
}
