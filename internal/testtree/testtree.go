// Package testtree writes small provider trees for tests: a map of
// slash-separated paths to file contents, plus a minimal valid provider to
// start from.
package testtree

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Write creates files below a new temporary folder and returns it.
func Write(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	WriteInto(t, dir, files)
	return dir
}

// WriteInto creates files below dir.
func WriteInto(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Minimal returns the files of a small valid infrastructure provider
// (infrastructure-test, namespace test-system, release series 1.2) with
// overrides applied; an override with empty content removes the file.
func Minimal(overrides map[string]string) map[string]string {
	files := map[string]string{
		"metadata.yaml": `apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3
kind: Metadata
releaseSeries:
- major: 1
  minor: 2
  contract: v1beta2
`,
		"config/default/kustomization.yaml": `namespace: test-system
namePrefix: test-
labels:
- includeSelectors: true
  pairs:
    cluster.x-k8s.io/provider: infrastructure-test
resources:
- namespace.yaml
- ../manager
`,
		"config/default/namespace.yaml": `apiVersion: v1
kind: Namespace
metadata:
  name: system
`,
		"config/manager/kustomization.yaml": "resources:\n- manager.yaml\n",
		"config/manager/manager.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: controller-manager
  namespace: system
spec:
  selector:
    matchLabels:
      control-plane: controller-manager
  template:
    metadata:
      labels:
        control-plane: controller-manager
    spec:
      containers:
      - name: manager
        image: registry.example.com/test/manager:dev
        args: ["--v=${TEST_LOG_LEVEL:=2}", "--token=${TEST_TOKEN}"]
      - name: sidecar
        image: registry.example.com/test/sidecar:1.0
`,
	}
	maps.Copy(files, overrides)
	for k, v := range files {
		if v == "" {
			delete(files, k)
		}
	}
	return files
}

var (
	capiOnce sync.Once
	capiDir  string
)

// ClusterAPIDir returns where the Go module cache holds cluster-api's source
// (the version go.mod requires), or "" when it cannot be found; tests that
// need it skip then.
func ClusterAPIDir() string {
	capiOnce.Do(func() {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-api").Output()
		if err == nil {
			capiDir = strings.TrimSpace(string(out))
		}
	})
	return capiDir
}
