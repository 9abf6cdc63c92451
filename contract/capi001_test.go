package contract_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/contract"
)

// CAPI001 is decided by values (issue 44): an error when no value the
// variables could take (the stand-ins, quoted strings, empty for a YAML
// fragment) makes a document parse, or when a variable's own default
// breaks it; a warning when only values of another shape than the
// stand-ins do; nothing when the stand-ins do.
func TestLint_CAPI001_DecidedByValues(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []key
		says      []string
	}{
		{name: "issue 44's broken flavor: an unclosed list below a line holding a variable",
			doc:  "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${CLUSTER_NAME}-cfg\ndata:\n  a: b\n  bad: [unclosed\n",
			want: []key{{"CAPI001", E, tmpl, "document 5", ""}}, says: []string{"no value the variables could take makes it parse"}},
		{name: "a default that breaks the document when left unset (a real flavor's ${VAR:=\"\"} in quotes)",
			doc:  "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${CLUSTER_NAME}-cfg\ndata:\n  host: \"${CONTROL_PLANE_ENDPOINT_HOST:=\"\"}\"\n",
			want: []key{{"CAPI001", E, tmpl, "document 5", ""}}, says: []string{"CONTROL_PLANE_ENDPOINT_HOST's default", `${CONTROL_PLANE_ENDPOINT_HOST:=""}`}},
		{name: "a YAML fragment alone on its line: the stand-ins parse, nothing to say",
			doc: "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${CLUSTER_NAME}-cfg\n  labels:\n${EXTRA_LABELS}\n    a: b\n"},
		// Issue 44 quotes a real template line "- name: controlPlaneType:"
		// whose file could not be found again (docs/lint-rules.md, CAPI001):
		// the shapes near it. Nothing after the colon and no variable on the
		// line: no value makes it YAML. A variable right after the colon
		// makes one plain scalar of any value. A variable after ": " leaves
		// "a: b: c", which no value mends.
		{name: "the line as issue 44 quotes it, no variable on it: an error",
			doc:  "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${CLUSTER_NAME}-cfg\ndata:\n  items:\n  - name: controlPlaneType:\n",
			want: []key{{"CAPI001", E, tmpl, "document 5", ""}}},
		{name: "a variable right after its colon: one scalar, the stand-ins parse",
			doc: "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${CLUSTER_NAME}-cfg\ndata:\n  items:\n  - name: controlPlaneType:${CONTROL_PLANE_TYPE}\n"},
		{name: "a variable after \": \" on that line: a: b: c whatever the value, an error",
			doc:  "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${CLUSTER_NAME}-cfg\ndata:\n  items:\n  - name: controlPlaneType: ${CONTROL_PLANE_TYPE}\n",
			want: []key{{"CAPI001", E, tmpl, "document 5", ""}}},
		{name: "parses only with a value of another shape than the stand-ins (empty, not after a key alone): a warning",
			doc:  "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  labels: ${LABELS}\n    a: b\n",
			want: []key{{"CAPI001", W, tmpl, "document 5", ""}}, says: []string{"LABELS is given as empty"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := readDir(t, "testdata/release")
			fs[tmpl] += c.doc
			r := contract.Lint(fs.release(t, label, version), contract.Options{})
			got := keys(r.Findings, prefix)
			want := c.want
			if want == nil {
				want = []key{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("findings (-want +got):\n%s\n%s", diff, text(r))
			}
			for _, s := range c.says {
				if !strings.Contains(text(r), s) {
					t.Errorf("report lacks %q:\n%s", s, text(r))
				}
			}
		})
	}
}
