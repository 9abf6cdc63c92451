package builder

import (
	"context"
	"os"
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

// TestVariableMap_SameAsClusterctl: variableMap agrees with clusterctl's
// GetVariableMap (result or error) on tricky inputs and on every asset of
// the example, cluster-api and, when generated, the large provider.
func TestVariableMap_SameAsClusterctl(t *testing.T) {
	check := func(name string, data []byte) {
		t.Helper()
		want, wantErr := yamlprocessor.NewSimpleProcessor().GetVariableMap(data)
		got, gotErr := variableMap(data)
		if (wantErr != nil) != (gotErr != nil) {
			t.Errorf("%s: clusterctl error %v, variableMap error %v", name, wantErr, gotErr)
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: (-clusterctl +variableMap):\n%s", name, diff)
		}
	}
	for _, s := range legacyVarCases {
		check(s, []byte(s))
	}
	for name, tree := range map[string]struct{ dir, version string }{"example": {exampleTree, "v0.1.0"}, "cluster-api": {clusterAPIDir, "v1.14.2"}, "large": {largeTree, "v0.1.0"}} {
		if _, err := os.Stat(tree.dir); err != nil {
			continue
		}
		res, err := Build(context.Background(), Options{Dir: tree.dir, Version: tree.version})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range res.Release.Providers {
			for _, f := range p.Assets() {
				check(name+"/"+f.Name, f.Data)
			}
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
