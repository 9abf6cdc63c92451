package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun_OneImageForClusterAPIsTrioIsAUsageError is the README's old
// cluster-api example: one --image for three providers with three images
// must stop with exit 2 and write nothing; the documented config builds.
func TestRun_OneImageForClusterAPIsTrioIsAUsageError(t *testing.T) {
	if testing.Short() {
		t.Skip("renders cluster-api")
	}
	if _, err := os.Stat(clusterAPIDir); err != nil {
		t.Skipf("no cluster-api checkout: %v", err)
	}
	out := filepath.Join(t.TempDir(), "dist")
	code, _, stderr := runCmd(t, nil, "build", clusterAPIDir, "--version", "v1.14.2", "--out", out,
		"--image", "registry.k8s.io/cluster-api/cluster-api-controller")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d (usage): %s", code, exitUsage, stderr)
	}
	for _, want := range []string{"bootstrap-kubeadm (gcr.io/k8s-staging-cluster-api/kubeadm-bootstrap-controller)", "providers[].image.newName"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s was written: %v", out, err)
	}

	code, _, stderr = runCmd(t, nil, "build", clusterAPIDir, "--version", "v1.14.2", "--out", out,
		"--config", "../../docs/configs/cluster-api.capirepo.yaml")
	if code != exitOK {
		t.Fatalf("build with docs/configs/cluster-api.capirepo.yaml: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "bootstrap-kubeadm", "v1.14.2", "bootstrap-components.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "image: registry.k8s.io/cluster-api/kubeadm-bootstrap-controller:v1.14.2") {
		t.Error("bootstrap-kubeadm does not have its own release image")
	}
}
