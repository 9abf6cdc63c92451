package provider

import (
	"os"
	"path/filepath"
	"testing"
)

func TestIsSourceTree_TellsATreeFromReleaseAssets(t *testing.T) {
	tree, assets := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(tree, "config", "default"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "config", "default", "kustomization.yaml"), []byte("resources: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(assets, "metadata.yaml"), []byte("kind: Metadata\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !IsSourceTree(tree) || IsSourceTree(assets) {
		t.Errorf("tree %v, assets %v", IsSourceTree(tree), IsSourceTree(assets))
	}
}
