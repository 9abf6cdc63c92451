package testtree

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
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

// InMemory returns kustomize's in-memory file system with files below
// root; a name ending in / is an empty folder.
func InMemory(t testing.TB, root string, files map[string]string) filesys.FileSystem {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	if err := fs.MkdirAll(root); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		var err error
		if strings.HasSuffix(name, "/") {
			err = fs.MkdirAll(p)
		} else {
			err = fs.WriteFile(p, []byte(content))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

// KustomizationChain returns a line of n kustomizations, f0 -> f1 -> ...,
// the last with last as its content.
func KustomizationChain(n int, last string) map[string]string {
	files := map[string]string{}
	for i := range n - 1 {
		files[fmt.Sprintf("f%d/kustomization.yaml", i)] = fmt.Sprintf("resources: [../f%d]\n", i+1)
	}
	files[fmt.Sprintf("f%d/kustomization.yaml", n-1)] = last
	return files
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

// DeprecatedKustomize returns Minimal's provider with kustomize fields that
// kustomize deprecates, as trees made for an older kustomize have them:
// patchesStrategicMerge in config/default, commonLabels in a base that the
// flavors default and ha share, bases: in ha.
func DeprecatedKustomize() map[string]string {
	const kcp = "apiVersion: controlplane.cluster.x-k8s.io/v1beta2\nkind: KubeadmControlPlane\nmetadata:\n  name: ${CLUSTER_NAME}-control-plane\nspec:\n  replicas: ${CONTROL_PLANE_MACHINE_COUNT}\n"
	return Minimal(map[string]string{
		"config/default/kustomization.yaml": `namespace: test-system
namePrefix: test-
labels:
- includeSelectors: true
  pairs:
    cluster.x-k8s.io/provider: infrastructure-test
resources:
- namespace.yaml
- ../manager
patchesStrategicMerge:
- manager_patch.yaml
`,
		"config/default/manager_patch.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: controller-manager
  namespace: system
spec:
  template:
    spec:
      containers:
      - name: manager
        args: ["--v=4"]
`,
		"templates/flavors/base/kustomization.yaml":    "resources:\n- cluster-template.yaml\ncommonLabels:\n  team: infra\n",
		"templates/flavors/base/cluster-template.yaml": "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: ${CLUSTER_NAME}\n---\n" + kcp,
		"templates/flavors/default/kustomization.yaml": "resources:\n- ../base\n",
		"templates/flavors/ha/kustomization.yaml":      "bases:\n- ../base\npatches:\n- path: kcp.yaml\n  target: {kind: KubeadmControlPlane}\n",
		"templates/flavors/ha/kcp.yaml":                "- op: replace\n  path: /spec/replicas\n  value: 3\n",
	})
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

// Real provider trees from the Go module proxy, pinned: the trees the tests
// build as their maintainers do.
const (
	ClusterAPIModule = "sigs.k8s.io/cluster-api@v1.14.2"
	CAPDModule       = "sigs.k8s.io/cluster-api/test@v1.14.2" // CAPD: test/infrastructure/docker
	CAPAModule       = "sigs.k8s.io/cluster-api-provider-aws/v2@v2.13.0"
	CAPGModule       = "sigs.k8s.io/cluster-api-provider-gcp@v1.13.1"
)

var (
	modMu   sync.Mutex
	modDirs = map[string]string{}
)

// ModuleDir returns the folder of a module version in the Go module cache,
// downloading it through the module proxy when it is missing (go.mod is not
// touched). The cache's files are read-only: tests only read them. When the
// download fails the test is skipped, except under CI (CI=true), where a real
// tree that cannot be had is a failure rather than a silent pass.
func ModuleDir(t testing.TB, modVersion string) string {
	t.Helper()
	modMu.Lock()
	defer modMu.Unlock()
	if d, ok := modDirs[modVersion]; ok {
		return d
	}
	out, err := exec.Command("go", "mod", "download", "-json", modVersion).Output()
	var info struct{ Dir, Error string }
	if err == nil {
		err = json.Unmarshal(out, &info)
	}
	if err == nil && info.Dir == "" {
		err = fmt.Errorf("%s", info.Error)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("go mod download %s: %v", modVersion, err)
		}
		t.Skipf("go mod download %s: %v", modVersion, err)
	}
	modDirs[modVersion] = info.Dir
	return info.Dir
}

// CopyTree copies a provider tree into a new temporary folder.
func CopyTree(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// ReadDir returns a folder's files by name.
func ReadDir(t testing.TB, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

// Names lists a folder's entries.
func Names(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// HasLeftover says whether a label folder holds a staging folder of an
// interrupted write (.<version>.tmp-*).
func HasLeftover(t testing.TB, labelDir string) bool {
	for _, n := range Names(t, labelDir) {
		if strings.Contains(n, ".tmp-") {
			return true
		}
	}
	return false
}
