package clusterctlvars

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
)

var legacyVarCases = []string{
	"", "plain text", "${VAR}", "${ VAR}", "${VAR }", "${ VAR }", "${\tVAR\n}", "${ A B }", "${ A$B }",
	"${ a ${b }", "${ a ${ b }", "$${ A }", "${ ${ ${ A } } }", "x${ A }y${B }z${ C}w", "${ A", "${ A }}",
	"${VAR:=default}", "${ VAR:=default }", "${VAR:=${OTHER}}", "${VAR:=${ OTHER }}", "${VAR:-x}", "${VAR=x}",
	"${ }", "${}", "${  }", "$", "${", "}", "${{ A }}", "${ A\f}", "${\rA}", "${ Ä }", "${ A_1$ }", "${ $ }",
	"a: ${ CLUSTER_NAME }\nb: ${KUBERNETES_VERSION:=v1.30.0}\nc: $${ESCAPED}\nd: ${ UNTERMINATED\n",
	"${A}${ B }${C }${ D}", strings.Repeat("${ X }", 100), "${VAR:=a\nb}", "${VAR:=${A:=${B}}}",
}

// TestConvertLegacyVars_SameAsRegexpOverWholeText: rewriting only the spans
// that can match gives clusterctl's text.
func TestConvertLegacyVars_SameAsRegexpOverWholeText(t *testing.T) {
	whole := func(s string) string {
		return legacyVariableRE.ReplaceAllStringFunc(s, func(o string) string { return whitespaceRE.ReplaceAllString(o, "") })
	}
	for _, s := range legacyVarCases {
		if got, want := convertLegacyVars(s), whole(s); got != want {
			t.Errorf("%q: got %q, clusterctl's regexp gives %q", s, got, want)
		}
	}
}

// TestMap_SameAsClusterctl: Map and Names agree with clusterctl's
// GetVariableMap and GetVariables (result or error) on tricky inputs.
func TestMap_SameAsClusterctl(t *testing.T) {
	for _, s := range legacyVarCases {
		want, wantErr := yamlprocessor.NewSimpleProcessor().GetVariableMap([]byte(s))
		got, gotErr := Map([]byte(s))
		if (wantErr != nil) != (gotErr != nil) {
			t.Errorf("%q: clusterctl error %v, Map error %v", s, wantErr, gotErr)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q: (-clusterctl +Map):\n%s", s, diff)
		}
		wantNames, _ := yamlprocessor.NewSimpleProcessor().GetVariables([]byte(s))
		gotNames, _ := Names([]byte(s))
		if diff := cmp.Diff(wantNames, gotNames); diff != "" {
			t.Errorf("%q: (-clusterctl GetVariables +Names):\n%s", s, diff)
		}
	}
}

// FuzzConvertLegacyVars: the span rewrite and clusterctl's whole-text
// regexp agree on any input.
func FuzzConvertLegacyVars(f *testing.F) {
	for _, s := range legacyVarCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := legacyVariableRE.ReplaceAllStringFunc(s, func(o string) string { return whitespaceRE.ReplaceAllString(o, "") })
		if got := convertLegacyVars(s); got != want {
			t.Errorf("%q: got %q, clusterctl's regexp gives %q", s, got, want)
		}
	})
}
