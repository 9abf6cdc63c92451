package builder

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/capirepo/capirepo/internal/testtree"
)

func TestTreeState_SeesEditsAndSkipsOutput(t *testing.T) {
	tree := testtree.Write(t, map[string]string{"a.yaml": "a", "dist/x": "x", "sub/dist/y": "y", "bin/z": "z"})
	root := filepath.Join(tree, "dev")
	s0, err := TreeState([]string{tree}, root)
	if err != nil {
		t.Fatal(err)
	}
	for name, changes := range map[string]bool{"dist/x": false, "bin/z": false, "dev/config.yaml": false, "sub/dist/y": true, "a.yaml": true, "new.yaml": true} {
		p := filepath.Join(tree, filepath.FromSlash(name))
		old, _ := os.ReadFile(p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, append(old, "more"...), 0o644); err != nil {
			t.Fatal(err)
		}
		s1, _ := TreeState([]string{tree}, root)
		if (s1 != s0) != changes {
			t.Errorf("writing %s: state changed %v, want %v", name, s1 != s0, changes)
		}
		s0 = s1
	}
}
