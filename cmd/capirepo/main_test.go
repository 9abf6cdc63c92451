package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/internal/buildinfo"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/pipeline"
)

var clusterAPIDir = testtree.ClusterAPIDir()

func runCmd(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut, func(k string) string { return env[k] })
	return code, out.String(), errOut.String()
}

func exampleDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../../examples/infrastructure-example")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRun_BuildThenVerifyExample is the README's main job.
func TestRun_BuildThenVerifyExample(t *testing.T) {
	out := filepath.Join(t.TempDir(), "dist")
	code, stdout, stderr := runCmd(t, nil, "build", exampleDir(t), "--version", "v0.1.0", "--out", out, "--output", "json")
	if code != 0 {
		t.Fatalf("build exit %d: %s", code, stderr)
	}
	var sum pipeline.BuildReport
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("build --output json: %v\n%s", err, stdout)
	}
	if sum.Version != "v0.1.0" || len(sum.Providers) != 1 || sum.Providers[0].Label != "infrastructure-example" {
		t.Errorf("summary = %+v", sum)
	}
	var names []string
	for _, f := range sum.Files["infrastructure-example"] {
		names = append(names, f.Name)
		if _, err := os.Stat(filepath.Join(out, "infrastructure-example", "v0.1.0", f.Name)); err != nil {
			t.Errorf("summary lists %s, not on disk: %v", f.Name, err)
		}
	}
	want := "cluster-template-ha.yaml cluster-template-machinepool.yaml cluster-template-topology.yaml cluster-template.yaml clusterclass-example-quick-start.yaml infrastructure-components.yaml metadata.yaml checksums.txt"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("files = %s\nwant    %s", got, want)
	}
	code, stdout, stderr = runCmd(t, nil, "verify", out)
	if code != 0 {
		t.Fatalf("verify exit %d: %s", code, stderr)
	}
	for _, flavor := range []string{"flavor (default)", "flavor ha", "flavor machinepool", "flavor topology"} {
		if !strings.Contains(stdout, flavor) { // the report is verify's result
			t.Errorf("verify output does not mention %q:\n%s", flavor, stdout)
		}
	}
}

func TestRun_BuildAndVerifyClusterAPI(t *testing.T) {
	if _, err := os.Stat(clusterAPIDir); err != nil {
		t.Skipf("cluster-api v1.14.2 not in the module cache (go mod download sigs.k8s.io/cluster-api@v1.14.2): %v", err)
	}
	out := t.TempDir()
	code, stdout, stderr := runCmd(t, nil, "build", clusterAPIDir, "--version", "v1.14.2", "--out", out)
	if code != 0 {
		t.Fatalf("build exit %d: %s", code, stderr)
	}
	for _, label := range []string{"cluster-api", "bootstrap-kubeadm", "control-plane-kubeadm"} {
		if !strings.Contains(stdout, label+" v1.14.2") {
			t.Errorf("build output lacks %s:\n%s", label, stdout)
		}
	}
	if code, _, stderr := runCmd(t, nil, "verify", out); code != 0 {
		t.Fatalf("verify exit %d: %s", code, stderr)
	}
}

// TestRun_BadInputExitsOneAndWritesNothing: a failed build leaves no dist folder.
func TestRun_BadInputExitsOneAndWritesNothing(t *testing.T) {
	tests := map[string]map[string]string{
		"two namespaces": {
			"config/default/kustomization.yaml": "namespace: test-system\nresources:\n- namespace.yaml\n- ns2.yaml\n- ../manager\n",
			"config/default/ns2.yaml":           "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: other\n",
			"capirepo.yaml":                     "providers:\n- name: infrastructure-test\n",
		},
		"metadata wrong kind":     {"metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Nope\nreleaseSeries: [{major: 1, minor: 2, contract: v1beta2}]\n"},
		"template does not parse": {"templates/cluster-template.yaml": "a: [\n"},
		// The build's lint reports CAPI315: clusterctl init would fail on it.
		"CRD description written as a number": {
			"config/default/kustomization.yaml": "namespace: test-system\nnamePrefix: test-\nlabels:\n- includeSelectors: true\n  pairs:\n    cluster.x-k8s.io/provider: infrastructure-test\nresources:\n- namespace.yaml\n- ../crd\n- ../manager\n",
			"config/crd/kustomization.yaml":     "resources:\n- identities.yaml\n",
			"config/crd/identities.yaml":        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: testidentities.infrastructure.test.example.com\n  labels: {cluster.x-k8s.io/v1beta2: v1beta1}\nspec:\n  group: infrastructure.test.example.com\n  names: {kind: TestIdentity, listKind: TestIdentityList, plural: testidentities, singular: testidentity}\n  scope: Namespaced\n  versions:\n  - name: v1beta1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        description: 123\n",
		},
	}
	for name, files := range tests {
		t.Run(name, func(t *testing.T) {
			dir := testtree.Write(t, testtree.Minimal(files))
			out := filepath.Join(t.TempDir(), "dist")
			code, _, stderr := runCmd(t, nil, "build", dir, "--version", "v1.2.0", "--out", out)
			if code != 1 {
				t.Errorf("exit %d, want 1; stderr: %s", code, stderr)
			}
			switch {
			case strings.Contains(name, "CRD"): // the lint's findings, then the error
				if !strings.Contains(stderr, "error   CAPI315 CustomResourceDefinition/testidentities.infrastructure.test.example.com spec.versions[0].schema.openAPIV3Schema.description\n") ||
					!strings.Contains(stderr, "\nError: lint: 1 error, 0 warnings") {
					t.Errorf("stderr = %q", stderr)
				}
			case strings.Contains(name, "metadata"): // one gate: a lint finding, waivable
				if !strings.Contains(stderr, "error   CAPI102 Metadata kind\n") || !strings.Contains(stderr, "\nError: lint: 1 error, 0 warnings") {
					t.Errorf("stderr = %q", stderr)
				}
			case strings.Contains(name, "template"):
				if !strings.Contains(stderr, "error   CAPI001 document 1\n") || !strings.Contains(stderr, "\nError: lint: 1 error, 0 warnings") {
					t.Errorf("stderr = %q", stderr)
				}
			case !strings.HasPrefix(stderr, "Error: "):
				t.Errorf("stderr = %q", stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s exists after a failed build", out)
			}
		})
	}
}

func TestRun_UsageErrorsExitTwo(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(nil))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"build", dir}, "no release version"},
		{[]string{"build", "--nope"}, "unknown flag"},
		{[]string{"nope"}, "unknown command"},
		{[]string{"version", "--output", "yaml"}, "--output must be text or json"},
		{[]string{"publish", "github", "--repo", "justone"}, "OWNER/NAME"},
		{[]string{"publish", "github", "--repo", "o/r"}, "set GITHUB_TOKEN"},
		{[]string{"lint", dir, "--disable", "NOPE1=x"}, "no rule"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := runCmd(t, nil, tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr does not say %q: %s", tt.want, stderr)
			}
		})
	}
}

// TestRun_ConfigOutsideTree: --config names a file anywhere; paths in it are
// relative to --dir; the version may come from the config.
func TestRun_ConfigOutsideTree(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"config/default/kustomization.yaml": "",
		"deploy/kustomization.yaml":         "namespace: test-system\nresources:\n- namespace.yaml\n- ../config/manager\n",
		"deploy/namespace.yaml":             "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: system\n",
	}))
	cfg := filepath.Join(t.TempDir(), "release.yaml")
	if err := os.WriteFile(cfg, []byte("version: v1.2.5\nproviders:\n- name: infrastructure-test\n  kustomize: deploy\n  componentsFile: infrastructure-components-custom.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, _, stderr := runCmd(t, nil, "build", dir, "--config", cfg, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "infrastructure-test", "v1.2.5", "infrastructure-components-custom.yaml")); err != nil {
		t.Error(err)
	}
}

func TestRun_VersionJSON(t *testing.T) {
	code, stdout, _ := runCmd(t, nil, "version", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var bi buildinfo.Info
	if err := json.Unmarshal([]byte(stdout), &bi); err != nil || bi.GoVersion == "" || bi.Version == "" {
		t.Errorf("version json = %q (%v)", stdout, err)
	}
}

func TestRun_LintReportsAndExitsOne(t *testing.T) {
	// A floating image tag in a single components file is a contract error.
	dir := t.TempDir()
	file := filepath.Join(dir, "infrastructure-components.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: n\n  labels: {cluster.x-k8s.io/provider: infrastructure-x}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: m\n  namespace: n\n  labels: {cluster.x-k8s.io/provider: infrastructure-x}\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        image: registry.example.com/x/m:latest\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runCmd(t, nil, "lint", file, "--version", "v1.0.0", "-o", "sarif")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	var sarif struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
				Level  string `json:"level"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(stdout), &sarif); err != nil || sarif.Version != "2.1.0" || len(sarif.Runs) != 1 {
		t.Fatalf("sarif: %v\n%s", err, stdout)
	}
	found := false
	for _, r := range sarif.Runs[0].Results {
		found = found || r.Level == "error"
	}
	if !found {
		t.Errorf("no error-level result for a :latest image: %s", stdout)
	}
}

// TestRun_BuildDisableWaivesAsLintDoes: one gate, one set of waivers: a
// finding that stops the build is waived by build --disable, as by lint's,
// and by a narrow capirepo.yaml waiver; a waiver that matches nothing is
// reported.
func TestRun_BuildDisableWaivesAsLintDoes(t *testing.T) {
	files := testtree.Minimal(nil)
	files["config/manager/manager.yaml"] = strings.Replace(files["config/manager/manager.yaml"], "sidecar:1.0", "sidecar:latest", 1) // CAPI205
	dir := testtree.Write(t, files)
	out := filepath.Join(t.TempDir(), "dist")
	if code, _, stderr := runCmd(t, nil, "build", "--dir", dir, "--version", "v1.2.0", "--out", out); code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	code, _, stderr := runCmd(t, nil, "build", "--dir", dir, "--version", "v1.2.0", "--out", out, "--disable", "CAPI205=pinned upstream next release")
	if code != 0 || !strings.Contains(stderr, "(waived: pinned upstream next release)") {
		t.Fatalf("build --disable: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "infrastructure-test", "v1.2.0", "metadata.yaml")); err != nil {
		t.Errorf("nothing written after the waiver: %v", err)
	}
	files["capirepo.yaml"] = "providers:\n- name: infrastructure-test\nlint:\n  disable:\n  - rule: CAPI205\n    object: Deployment/*\n    reason: narrow\n  - rule: CAPI504\n    file: cluster-template-none.yaml\n    reason: stale\n"
	dir = testtree.Write(t, files)
	code, _, stderr = runCmd(t, nil, "build", "--dir", dir, "--version", "v1.2.0", "--out", filepath.Join(t.TempDir(), "dist"))
	if code != 0 || !strings.Contains(stderr, "(waived: narrow)") || !strings.Contains(stderr, "waiver CAPI504 file cluster-template-none.yaml (stale) matched no finding") {
		t.Errorf("narrow waiver: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, nil, "build", "--dir", dir, "--version", "v1.2.0", "--disable", "CAPI999=x"); code != 2 {
		t.Errorf("unknown rule: exit %d, want 2: %s", code, stderr)
	}
}

// TestRun_BuildRefusedRulesCannotBeWaived: --disable CAPI105 (no release
// series covers the version) does not build a version clusterctl refuses.
func TestRun_BuildRefusedRulesCannotBeWaived(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(nil)) // series 1.2 only
	out := filepath.Join(t.TempDir(), "dist")
	code, _, stderr := runCmd(t, nil, "build", dir, "--version", "v1.3.0", "--out", out, "--disable", "CAPI105=next release")
	if code != 1 || !strings.Contains(stderr, "error: waiver CAPI105 (next release) cannot waive CAPI105's errors: clusterctl refuses a release with them") ||
		!strings.Contains(stderr, "Error: lint: 1 error, 0 warnings: fix them; clusterctl refuses the release with them, no waiver clears them") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s was written: %v", out, err)
	}
}

// TestMetadata_OneReadingForEveryCommand: a metadata.yaml with a negative
// release series is refused alike by build, lint and dev (which reads it for
// the next version), each naming the field.
func TestMetadata_OneReadingForEveryCommand(t *testing.T) {
	dir := testtree.Write(t, testtree.Minimal(map[string]string{
		"metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- {major: 1, minor: 2, contract: v1beta2}\n- {major: -1, minor: 3, contract: v1beta2}\n",
	}))
	for _, args := range [][]string{
		{"build", dir, "--version", "v1.2.0", "--out", filepath.Join(t.TempDir(), "dist")},
		{"lint", dir, "--version", "v1.2.0"},
		{"dev", dir, "--out", filepath.Join(t.TempDir(), "dev")},
	} {
		code, _, stderr := runCmd(t, map[string]string{"HOME": t.TempDir()}, args...)
		if code != 1 || !strings.Contains(stderr, "releaseSeries[1].major") || !strings.Contains(stderr, "major is -1: a version number cannot be negative") {
			t.Errorf("%s: exit %d: %s", args[0], code, stderr)
		}
	}
}

// TestRun_BuildWarnsAboutAStagingImage: a tree that names its staging
// image, built without a config, builds with a CAPI210 warning naming the
// image and the fix; with image.newName it builds without.
func TestRun_BuildWarnsAboutAStagingImage(t *testing.T) {
	files := testtree.Minimal(nil)
	files["config/manager/manager.yaml"] = strings.Replace(files["config/manager/manager.yaml"], "registry.example.com/test/manager:dev", "gcr.io/k8s-staging-test/manager:dev", 1)
	dir := testtree.Write(t, files)
	code, _, stderr := runCmd(t, nil, "build", dir, "--version", "v1.2.0", "--out", filepath.Join(t.TempDir(), "dist"))
	if code != 0 || !strings.Contains(stderr, "warning CAPI210") || !strings.Contains(stderr, `image "gcr.io/k8s-staging-test/manager:v1.2.0" is a staging registry's`) {
		t.Errorf("exit %d: %s", code, stderr)
	}
	files["capirepo.yaml"] = "providers:\n- name: infrastructure-test\n  image: {newName: registry.k8s.io/test/manager}\n"
	code, _, stderr = runCmd(t, nil, "build", testtree.Write(t, files), "--version", "v1.2.0", "--out", filepath.Join(t.TempDir(), "dist"))
	if code != 0 || strings.Contains(stderr, "CAPI210") {
		t.Errorf("with image.newName: exit %d: %s", code, stderr)
	}
}
