package builder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomizations lists every kustomization a build of tree renders:
// components and flavors.
func kustomizations(t *testing.T, tree string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasSuffix(p, filepath.Join("config", "default")) || filepath.Base(filepath.Dir(p)) == "flavors" && d.Name() != "base") {
			if _, err := os.Stat(filepath.Join(p, "kustomization.yaml")); err == nil {
				dirs = append(dirs, p)
			}
		}
		if d.IsDir() && (d.Name() == "test" || d.Name() == "docs" || d.Name() == "hack") {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// withLarge adds the generated large benchmark provider to the trees a test
// checks when CAPIREPO_TEST_LARGE is set (bench/run.sh sets it): it takes
// long under the race detector.
func withLarge(trees map[string]string) map[string]string {
	if os.Getenv("CAPIREPO_TEST_LARGE") != "" {
		trees["large"] = largeTree
	}
	return trees
}

// TestRender_FastPathSameBytesAsKrusty: the builder's render path (Kustomize
// then asYAML) gives byte for byte what plain krusty and ResMap.AsYaml give,
// on the bundled example, cluster-api and (CAPIREPO_TEST_LARGE=1) the large
// benchmark provider; and no resource of these trees needs the slow path.
func TestRender_FastPathSameBytesAsKrusty(t *testing.T) {
	for name, tree := range withLarge(map[string]string{"example": exampleTree, "cluster-api": clusterAPIDir}) {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(tree); err != nil {
				t.Skipf("%s: %v", tree, err)
			}
			dirs := kustomizations(t, tree)
			if len(dirs) == 0 {
				t.Fatalf("no kustomizations under %s", tree)
			}
			for _, dir := range dirs {
				plain, err := krusty.MakeKustomizer(kustomizeOptions()).Run(filesys.MakeFsOnDisk(), dir)
				if err != nil {
					t.Fatal(err)
				}
				want, err := plain.AsYaml()
				if err != nil {
					t.Fatal(err)
				}
				rm, err := Kustomize(filesys.MakeFsOnDisk(), dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rm.Resources() {
					if _, ok := fastResourceYAML(r); !ok {
						t.Errorf("%s: %s takes the slow path", dir, objName(r))
					}
				}
				got, err := asYAML(rm)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(want) {
					t.Errorf("%s: fast render differs from krusty + AsYaml (-krusty +fast):\n%s", dir, cmp.Diff(string(want), string(got)))
				}
			}
		})
	}
}

func resMapOf(t *testing.T, doc string) resmap.ResMap {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	if err := fs.WriteFile("/k/kustomization.yaml", []byte("resources: [r.yaml]\n")); err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteFile("/k/r.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	rm, err := Kustomize(fs, "/k")
	if err != nil {
		t.Fatalf("%q: %v", doc, err)
	}
	return rm
}

// TestAsYAML_TrickyValues: scalars whose encoding the JSON round trip decides
// (numbers, booleans, nulls, timestamps, quoting, block styles, odd
// characters, key order) come out as kustomize writes them, whichever path
// asYAML takes for them.
func TestAsYAML_TrickyValues(t *testing.T) {
	values := []string{
		`1`, `-0`, `1.0`, `1.50`, `1e3`, `1E+30`, `1e400`, `0x1F`, `0o17`, `017`, `+12`, `9223372036854775807`,
		`18446744073709551615`, `99999999999999999999`, `.5`, `-.inf`, `.nan`, `0.1`, `3.14159265358979323846`,
		`true`, `false`, `True`, `yes`, `no`, `on`, `off`, `y`, `n`, `~`, `null`, `Null`, ``, `""`, `''`,
		`"1"`, `'true'`, `"null"`, `2001-12-14`, `2001-12-14t21:59:43.10-05:00`, `"2001-12-14"`,
		`!!str 12`, `!!int "12"`, `!!float 1`, `!!binary aGVsbG8=`, `!!timestamp 2001-12-14`,
		`a b`, `" leading"`, `"trailing "`, `"tab\there"`, `"new\nline"`, `"cr\r\nlf"`, `"nel\u0085x"`,
		`"ls\u2028x"`, `"bom\ufeffx"`, `"del\u007fx"`, `"c1\u0090x"`, `"nul\u0000x"`, `"bell\u0007"`,
		`"emoji 😀 — é ü"`, `"<html> & 'q'"`, `"#not a comment"`, `"- dash"`, `": colon"`, `"a: b"`, `"{x}"`,
		`"[y]"`, `"*star"`, `"&amp"`, `"!bang"`, `"%pct"`, `"@at"`, "\"`tick\"", `"|pipe"`, `">gt"`, `"?q"`,
		`"${VAR}"`, `"${VAR:=default}"`, `"---"`, `"..."`, `"0777"`, `"1_000"`, `"1:20"`, `"0b101"`, `"+.inf"`,
		`"x\\y"`, `"very long string that goes on and on past the eighty column limit so that the yaml.v2 emitter folds it somewhere in the middle"`,
		"|\n    literal\n    block\n", "|-\n    no trailing\n", "|+\n    keep\n\n", ">\n    folded\n    text\n",
		"|2\n      indented first\n    line\n", "|\n    trailing spaces   \n    x\n", "|\n    x\ttab inside\n",
		`[1, "2", three, {a: b}, [], {}]`, `{}`, `[]`, `{z: 1, a: 2, a10: 3, a9: 4, A: 5, "1": 6, "": 7}`,
	}
	for _, v := range values {
		doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: " + v + "\n"
		rm := resMapOf(t, doc)
		want, wantErr := rm.AsYaml()
		got, gotErr := asYAML(rm)
		if (wantErr != nil) != (gotErr != nil) {
			t.Errorf("value %q: AsYaml error %v, asYAML error %v", v, wantErr, gotErr)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("value %q: (-AsYaml +asYAML):\n%s", v, cmp.Diff(string(want), string(got)))
		}
	}
}

// TestAsYAML_SlowPathCases: what the fast path leaves to kustomize still
// comes out as kustomize writes it.
func TestAsYAML_SlowPathCases(t *testing.T) {
	docs := []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  1: one\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nx:\n  true: t\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nbase: &b {a: 1}\nderived:\n  <<: *b\n  c: 2\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nx: &a hello\ny: *a\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: \"\\xff\"\n",
	}
	for _, doc := range docs {
		rm := resMapOf(t, doc)
		want, wantErr := rm.AsYaml()
		got, gotErr := asYAML(rm)
		if (wantErr != nil) != (gotErr != nil) || string(got) != string(want) {
			t.Errorf("%q:\nAsYaml %v:\n%s\nasYAML %v:\n%s", doc, wantErr, want, gotErr, got)
		}
	}
}
