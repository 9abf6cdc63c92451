package yamlsafe

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/capirepo/capirepo/internal/testtree"
)

// hasAlias reports whether yaml.v3 finds an alias node in any document.
func hasAlias(data []byte) bool {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			return false
		}
		if aliasIn(&n) {
			return true
		}
	}
}

func aliasIn(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if aliasIn(c) {
			return true
		}
	}
	return false
}

// The pre-filter must let every document with an alias through to the parse.
var withAliases = []string{
	"a: &x 1\nb: *x\n",
	"&x a: *x\n",
	"--- &x\na: 1\n--- *x\n",
	"a: [&x 1, *x]\n",
	"a: {k: &x 1, l: *x}\n",
	"{\"k\":&x 1, \"l\":*x}\n",
	"a:\t&x 1\nb:\t*x\n",
	"- &x 1\n- *x\n",
	"\ufeff&x a: *x\n",
	"a: !!str &x 1\nb: *x\n",
	"a: &x\n  b: c\nd:\n  <<: *x\n",
	"? &x a\n: *x\n",
	"a: &x-1_y 1\nb: *x-1_y\n",
	"a: &x 1\r\nb: *x\r\n",
	"a:\n- &x [1, 2]\n- [*x, *x]\n",
}

func TestMayHave_EveryAliasPasses(t *testing.T) {
	for _, doc := range withAliases {
		if !hasAlias([]byte(doc)) {
			t.Fatalf("test case has no alias for yaml.v3: %q", doc)
		}
		if !mayHave([]byte(doc), '&') || !mayHave([]byte(doc), '*') {
			t.Errorf("mayHave skips a document with an anchor and alias: %q", doc)
		}
	}
}

func TestMayHave_ProseIsSkipped(t *testing.T) {
	for _, doc := range []string{
		"description: R&D and *metav1.Time\n",
		"description: a & b * c\n",
		"description: \"&x and *x\"\n",
		"description: 'see &x'\n",
		"a: x&y*z\n",
		"",
		"&",
		"*",
	} {
		if mayHave([]byte(doc), '&') && mayHave([]byte(doc), '*') {
			t.Errorf("mayHave asks to parse prose %q", doc)
		}
	}
}

// The CRDs of the example and of cluster-api hold '&' and '*' in prose (the
// old filter parsed several of them); none has an alias, none is parsed now.
func TestMayHave_RealCRDsSkipped(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "infrastructure-example", "config", "crd", "bases", "*.yaml"))
	if capi := testtree.ClusterAPIDir(); capi != "" {
		more, _ := filepath.Glob(filepath.Join(capi, "*", "config", "crd", "bases", "*.yaml"))
		files = append(files, more...)
		more, _ = filepath.Glob(filepath.Join(capi, "*", "*", "config", "crd", "bases", "*.yaml"))
		files = append(files, more...)
	}
	if len(files) < 5 {
		t.Fatalf("found only %d CRD files", len(files))
	}
	prose := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("&")) && bytes.Contains(data, []byte("*")) {
			prose++
		}
		if mayHave(data, '&') && mayHave(data, '*') && !hasAlias(data) {
			t.Errorf("%s: parsed for aliases it does not have", f)
		}
	}
	t.Logf("%d CRD files, %d with '&' and '*' in their text", len(files), prose)
}

func TestCheckAliases_Bomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	err := CheckAliases("bomb.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "bomb.yaml: document 1") {
		t.Fatalf("CheckAliases(bomb) = %v, want an error naming bomb.yaml document 1", err)
	}
	if err := CheckAliases("small.yaml", []byte(withAliases[0])); err != nil {
		t.Fatalf("CheckAliases(small) = %v", err)
	}
}

// FuzzMayHave: whenever yaml.v3 finds an alias, both pre-filters say maybe.
func FuzzMayHave(f *testing.F) {
	for _, d := range withAliases {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var n yaml.Node
			err := dec.Decode(&n)
			if errors.Is(err, io.EOF) || err != nil {
				return
			}
			if aliasIn(&n) && (!mayHave(data, '&') || !mayHave(data, '*')) {
				t.Fatalf("document with an alias skipped: %q", data)
			}
		}
	})
}

// BenchmarkCheckAliases_ClusterAPI checks every YAML file under cluster-api's
// config folders, as the builder does for each file kustomize reads.
func BenchmarkCheckAliases_ClusterAPI(b *testing.B) {
	capi := testtree.ClusterAPIDir()
	if capi == "" {
		b.Skip("cluster-api not in the module cache")
	}
	var files [][]byte
	_ = filepath.WalkDir(capi, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") && strings.Contains(p, "/config/") {
			data, _ := os.ReadFile(p)
			files = append(files, data)
		}
		return nil
	})
	b.ResetTimer()
	for b.Loop() {
		for _, f := range files {
			if err := CheckAliases("f", f); err != nil {
				b.Fatal(err)
			}
		}
	}
}
