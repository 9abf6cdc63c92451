package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/internal/cli"
	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/verify"
)

// TestCLI_ExitCodesAndStreams runs every command the way a script would and
// checks the exit code (0 ok, 1 failure, 2 usage) and which stream carries
// what: results on stdout, progress, findings and errors on stderr, and
// with -o json a JSON document on stdout whether the command worked or not.
func TestCLI_ExitCodesAndStreams(t *testing.T) {
	example := exampleDir(t)
	dist := buildExample(t)
	tree := testtree.Write(t, testtree.Minimal(nil))
	// A broken tree whose error text holds "accepts ": still exit 1, not 2.
	badContract := testtree.Write(t, testtree.Minimal(map[string]string{
		"metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 1\n  minor: 2\n  contract: v1alpha9\n",
	}))
	// A tree whose build lint refuses (CAPI315).
	lintFails := testtree.Write(t, testtree.Minimal(map[string]string{
		"config/default/kustomization.yaml": "namespace: test-system\nnamePrefix: test-\nlabels:\n- includeSelectors: true\n  pairs:\n    cluster.x-k8s.io/provider: infrastructure-test\nresources:\n- namespace.yaml\n- ../crd\n- ../manager\n",
		"config/crd/kustomization.yaml":     "resources:\n- identities.yaml\n",
		"config/crd/identities.yaml":        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: testidentities.infrastructure.test.example.com\n  labels: {cluster.x-k8s.io/v1beta2: v1beta1}\nspec:\n  group: infrastructure.test.example.com\n  names: {kind: TestIdentity, listKind: TestIdentityList, plural: testidentities, singular: testidentity}\n  scope: Namespaced\n  versions:\n  - name: v1beta1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        description: 123\n",
	}))
	// Releases for diff and lint --against: the minimal provider at
	// v0.1.0 (in a dist folder and a file:// repository), v0.2.0, and a
	// v0.2.0 whose metadata.yaml lost the 0.1 series (CAPI701).
	oldDist, newDist := buildtest.Dist(t, buildtest.MinimalRelease(t, "v0.1.0")), buildtest.Dist(t, buildtest.MinimalRelease(t, "v0.2.0"))
	brokenTree := testtree.Write(t, buildtest.MinimalFiles(2, map[string]string{"metadata.yaml": "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 2\n  contract: v1beta2\n"}))
	brokenDist := buildtest.Dist(t, buildtest.Build(t, brokenTree, "v0.2.0").Release)
	repo := "file://" + t.TempDir()
	if err := release.Write(strings.TrimPrefix(repo, "file://"), buildtest.MinimalRelease(t, "v0.1.0")); err != nil {
		t.Fatal(err)
	}
	const token = "ghp_cli-table-token"
	gh := fakegh.New(t, fakegh.WithToken(token))
	gh.AddRepo("acme", "provider", false)
	out := func() string { return filepath.Join(t.TempDir(), "out") }
	// A kubeconfig of a server nobody listens on.
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: https://127.0.0.1:1}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: t}\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		// stdout and stderr hold these; "" as the only entry means empty.
		stdout, stderr []string
		json           bool // stdout is one JSON document
	}{
		{name: "help", args: nil, code: 0, stdout: []string{"Usage:", "Available Commands:"}, stderr: []string{""}},
		// A test binary has no version: stderr says how to get one (TestVersion_*).
		{name: "version", args: []string{"version"}, code: 0, stdout: []string{"capirepo "}},
		{name: "version json", args: []string{"version", "-o", "json"}, code: 0, json: true},
		{name: "unknown command", args: []string{"bulid"}, code: 2, stdout: []string{""}, stderr: []string{`unknown command "bulid" for "capirepo" (did you mean "build"?); see 'capirepo --help'`}},
		// A mistyped command with the flags of the one meant: the command is the mistake.
		{name: "unknown command with flags", args: []string{"biuld", "--version", "v1"}, code: 2, stdout: []string{""}, stderr: []string{`unknown command "biuld" for "capirepo" (did you mean "build"?); see 'capirepo --help'`}},
		{name: "unknown subcommand with flags", args: []string{"publish", "gihub", "--repo", "o/r"}, code: 2, stdout: []string{""}, stderr: []string{`unknown command "gihub" for "capirepo publish" (did you mean "github"?)`}},
		{name: "mistyped flag", args: []string{"build", "--verison", "v1"}, code: 2, stdout: []string{""}, stderr: []string{"unknown flag: --verison (did you mean --version?); see 'capirepo build --help'"}}, //nolint:misspell // the typo is the test
		{name: "mistyped global flag", args: []string{"version", "--ouptut", "json"}, code: 2, stdout: []string{""}, stderr: []string{"(did you mean --output?)"}},
		{name: "unknown subcommand", args: []string{"publish", "gihub"}, code: 2, stdout: []string{""}, stderr: []string{`(did you mean "github"?)`}},
		{name: "unknown subcommand json", args: []string{"publish", "gihub", "-o", "json"}, code: 2, json: true, stdout: []string{`"exitCode": 2`, `did you mean`}},
		{name: "help of an unknown command", args: []string{"help", "publish", "gihub"}, code: 2, stdout: []string{""}, stderr: []string{`(did you mean "github"?)`}},
		{name: "help of a command", args: []string{"help", "publish", "local"}, code: 0, stdout: []string{"Usage:\n  capirepo publish local"}, stderr: []string{""}},
		{name: "group without subcommand", args: []string{"publish"}, code: 2, stdout: []string{""}, stderr: []string{"capirepo publish needs a subcommand: configmap, github, gitlab, local, oci"}},
		{name: "unknown flag", args: []string{"build", "--nope"}, code: 2, stdout: []string{""}, stderr: []string{"unknown flag: --nope; see 'capirepo build --help'"}},
		{name: "too many args", args: []string{"verify", "a", "b"}, code: 2, stderr: []string{"see 'capirepo verify --help'"}},
		{name: "bad output", args: []string{"version", "-o", "yaml"}, code: 2, stderr: []string{"--output must be text or json"}},
		{name: "github without --repo", args: []string{"publish", "github"}, code: 2, stderr: []string{`required flag(s) "repo" not set`}},
		{name: "github without token", args: []string{"publish", "github", "--repo", "o/r"}, code: 2, stderr: []string{"set GITHUB_TOKEN"}},
		{name: "gitlab without --gitlab-url", args: []string{"publish", "gitlab", "--project", "p"}, code: 2, stderr: []string{"--gitlab-url is required"}},
		{name: "gitlab URL checked before token", args: []string{"publish", "gitlab", "--gitlab-url", "gitlab.example.com", "--project", "p"}, code: 2, stderr: []string{"is not an http(s) URL"}},
		{name: "config missing", args: []string{"build", example, "--config", "/nonexistent/capirepo.yaml"}, code: 2, stderr: []string{"--config /nonexistent/capirepo.yaml: no such file"}},
		{name: "PATH missing", args: []string{"build", "/nonexistent"}, code: 2, stderr: []string{"PATH /nonexistent: no such folder"}},
		// The old flags for what a command reads still work, with a notice.
		{name: "dir missing", args: []string{"build", "--dir", "/nonexistent"}, code: 2, stderr: []string{"--dir /nonexistent: no such folder", "Flag --dir has been deprecated, pass the provider tree as PATH"}},
		{name: "dir is a file", args: []string{"build", "--dir", filepath.Join(example, "metadata.yaml")}, code: 2, stderr: []string{"is a file"}},
		{name: "tree twice", args: []string{"build", example, "--dir", tree}, code: 2, stderr: []string{"pass one"}},
		{name: "short version", args: []string{"build", example, "--version", "1.2"}, code: 2, stderr: []string{"did you mean v1.2.0?"}},
		{name: "short v version", args: []string{"build", example, "--version", "v1.2"}, code: 2, stderr: []string{"did you mean v1.2.0?"}},
		{name: "image with tag", args: []string{"build", example, "--version", "v0.1.0", "--image", "ghcr.io/acme/manager:v1"}, code: 2, stderr: []string{"names a tag: pass the repository only (ghcr.io/acme/manager)"}},
		{name: "no version", args: []string{"build", tree}, code: 2, stderr: []string{"no release version"}},
		{name: "build", args: []string{"build", example, "--version", "v0.1.0", "--out", out()}, code: 0, stdout: []string{"infrastructure-example v0.1.0 ->", "metadata.yaml"}},
		{name: "build json", args: []string{"build", example, "--version", "v0.1.0", "--out", out(), "-o", "json"}, code: 0, json: true, stdout: []string{`"findings": [`, `"waived": [`}},
		{name: "broken tree saying accepts", args: []string{"build", badContract, "--version", "v1.2.0", "--out", out()}, code: 1, stdout: []string{""}, stderr: []string{"clusterctl accepts only"}},
		{name: "lint stops build", args: []string{"build", lintFails, "--version", "v1.2.0", "--out", out()}, code: 1, stdout: []string{""}, stderr: []string{"CAPI315", "nothing was written"}},
		{name: "lint stops build json", args: []string{"build", lintFails, "--version", "v1.2.0", "--out", out(), "-o", "json"}, code: 1, json: true, stdout: []string{`"exitCode": 1`, `"rule": "CAPI315"`, "nothing was written"}},
		{name: "lint dist", args: []string{"lint", dist}, code: 0, stdout: []string{""}, stderr: []string{"0 errors"}},
		{name: "lint fails", args: []string{"lint", lintFails, "--version", "v1.2.0"}, code: 1, stdout: []string{""}, stderr: []string{"\nError: lint: 1 error, 0 warnings: fix them"}},
		{name: "lint missing", args: []string{"lint", "/nonexistent"}, code: 2, stderr: []string{"no such file or folder"}},
		{name: "lint markdown", args: []string{"lint", dist, "-o", "markdown"}, code: 0, stdout: []string{"## capirepo lint: no errors\n"}},
		{name: "lint fails codequality", args: []string{"lint", lintFails, "--version", "v1.2.0", "-o", "codequality"}, code: 1, json: true, stdout: []string{`"check_name": "CAPI315"`, `"severity": "critical"`}},
		{name: "verify markdown", args: []string{"verify", dist, "-o", "markdown"}, code: 0, stdout: []string{"## capirepo verify: clusterctl reads it\n"}},
		{name: "verify codequality", args: []string{"verify", dist, "-o", "codequality"}, code: 2, stderr: []string{`--output must be text, json or markdown, not "codequality"`}},
		{name: "build markdown", args: []string{"build", tree, "--out", out(), "-o", "markdown"}, code: 2, stderr: []string{`--output must be text or json, not "markdown"`}},
		{name: "release notes-upgrade without the upgrade check", args: []string{"release", example, "--dry-run", "--notes-upgrade", "--skip-upgrade-check", "x"}, code: 2, stderr: []string{"--notes-upgrade tells what the upgrade check found"}},
		{name: "verify", args: []string{"verify", dist}, code: 0, stdout: []string{"flavor ha"}, stderr: []string{""}},
		{name: "verify without DIR", args: []string{"verify"}, code: 2, stderr: []string{"see 'capirepo verify --help'"}},
		{name: "verify kubeconfig without install", args: []string{"verify", dist, "--kubeconfig", kubeconfig}, code: 2, stderr: []string{"--kubeconfig and --clusterctl-config belong to --install and --upgrade-from"}},
		{name: "verify install without kubeconfig", args: []string{"verify", dist, "--install"}, code: 2, stderr: []string{"--install needs --kubeconfig FILE"}},
		{name: "verify install kubeconfig missing", args: []string{"verify", dist, "--install", "--kubeconfig", "/nonexistent/kubeconfig"}, code: 2, stderr: []string{"--kubeconfig stat /nonexistent/kubeconfig: no such file"}},
		{name: "verify install dry-run-only and force", args: []string{"verify", dist, "--install", "--kubeconfig", kubeconfig, "--dry-run-only", "--force"}, code: 2, stderr: []string{"give one of them"}},
		{name: "verify install var without =", args: []string{"verify", dist, "--install", "--kubeconfig", kubeconfig, "--var", "REGION"}, code: 2, stderr: []string{`--var "REGION": give NAME=VALUE`}},
		{name: "verify var without install: a real value for the read-back", args: []string{"verify", dist, "--var", "REGION=eu"}, code: 0, stdout: []string{"flavor ha"}},
		{name: "verify var without =", args: []string{"verify", dist, "--var", "REGION"}, code: 2, stderr: []string{`--var "REGION": give NAME=VALUE`}},
		{name: "verify values file missing", args: []string{"verify", dist, "--values", "/nonexistent/values.yaml"}, code: 1, stderr: []string{"values file: open /nonexistent/values.yaml: no such file or directory"}},
		{name: "release var without install-check", args: []string{"release", example, "--version", "v0.1.0", "--out", out(), "--dry-run", "--var", "REGION=eu"}, code: 2, stderr: []string{"--var and --values belong to --install-check"}},
		{name: "verify install oci", args: []string{"verify", "oci://registry.example.com/p:v1.0.0", "--install", "--kubeconfig", kubeconfig}, code: 2, stderr: []string{"--install applies a DIR"}},
		{name: "verify install no server", args: []string{"verify", dist, "--install", "--kubeconfig", kubeconfig}, code: 1, stdout: []string{"flavor ha"}, stderr: []string{"install check: cannot reach the API server at https://127.0.0.1:1"}},
		{name: "verify install no server json", args: []string{"verify", dist, "--install", "--kubeconfig", kubeconfig, "-o", "json"}, code: 1, json: true,
			stdout: []string{`"providers": [`, `"error": "install check: cannot reach the API server at https://127.0.0.1:1`}},
		{name: "verify upgrade-from without kubeconfig", args: []string{"verify", newDist, "--upgrade-from", oldDist}, code: 2, stderr: []string{"--upgrade-from needs --kubeconfig FILE: a scratch cluster"}},
		{name: "verify core without upgrade-from or install", args: []string{"verify", newDist, "--core", oldDist}, code: 2, stderr: []string{"--core belongs to the install check and --upgrade-from"}},
		{name: "verify with-cert-manager without upgrade-from", args: []string{"verify", newDist, "--with-cert-manager"}, code: 2, stderr: []string{"--with-cert-manager belongs to --upgrade-from"}},
		{name: "verify upgrade-from dry-run-only", args: []string{"verify", newDist, "--upgrade-from", oldDist, "--kubeconfig", kubeconfig, "--dry-run-only"}, code: 2,
			stderr: []string{"--dry-run-only and --force belong to --install"}},
		{name: "verify upgrade-from missing", args: []string{"verify", newDist, "--upgrade-from", "/nonexistent", "--kubeconfig", kubeconfig}, code: 2, stderr: []string{"--upgrade-from /nonexistent: no such folder"}},
		{name: "verify upgrade-from oci", args: []string{"verify", "oci://registry.example.com/p:v1.0.0", "--upgrade-from", oldDist, "--kubeconfig", kubeconfig}, code: 2, stderr: []string{"--upgrade-from rehearses the upgrade to a DIR"}},
		{name: "verify upgrade-from without core", args: []string{"verify", newDist, "--upgrade-from", oldDist, "--kubeconfig", kubeconfig}, code: 1, stdout: []string{"infrastructure-test"},
			stderr: []string{"upgrade rehearsal: v0.1.0 holds no core Cluster API, which clusterctl init installs first: name a release of cluster-api to install it from (--core"}},
		{name: "release rehearse and skip-upgrade-check", args: []string{"release", example, "--version", "v0.1.0", "--out", out(), "--dry-run", "--rehearse", "--kubeconfig", kubeconfig, "--skip-upgrade-check", "no"}, code: 2,
			stderr: []string{"--rehearse upgrades from the release the upgrade check compares with: it cannot go with --skip-upgrade-check"}},
		{name: "release rehearse without kubeconfig", args: []string{"release", example, "--version", "v0.1.0", "--out", out(), "--dry-run", "--rehearse"}, code: 2, stderr: []string{"--rehearse needs --kubeconfig FILE"}},
		{name: "release install-check without kubeconfig", args: []string{"release", example, "--version", "v0.1.0", "--out", out(), "--dry-run", "--install-check"}, code: 2, stderr: []string{"--install-check needs --kubeconfig FILE"}},
		{name: "publish local old flags", args: []string{"publish", "local", "--from", dist, "--root", out()}, code: 0, stdout: []string{"providers:", "file://"},
			stderr: []string{"8 written (", "Flag --from has been deprecated, pass the built release folder as DIST", "Flag --root has been deprecated, use --out"}},
		{name: "publish local DIST missing", args: []string{"publish", "local", "/nonexistent", "--out", out()}, code: 2, stderr: []string{"DIST /nonexistent: no such folder"}},
		{name: "publish configmap DIST", args: []string{"publish", "configmap", dist, "--out", filepath.Join(t.TempDir(), "providers.yaml")}, code: 0},
		{name: "dev old flags", env: map[string]string{"HOME": t.TempDir()}, args: []string{"dev", "--dir", example, "--root", out()}, code: 0,
			stdout: []string{"clusterctl init --infrastructure example:"}, stderr: []string{"Flag --dir has been deprecated", "Flag --root has been deprecated, use --out"}},
		{name: "publish local DIST", args: []string{"publish", "local", dist, "--out", out()}, code: 0, stdout: []string{"providers:", "file://"}, stderr: []string{"8 written ("}},
		{name: "publish local overrides", env: map[string]string{"HOME": t.TempDir()}, args: []string{"publish", "local", dist, "--overrides"}, code: 0,
			stdout: []string{"clusterctl init --infrastructure example:v0.1.0\n"}, stderr: []string{"instead of the provider repository's for v0.1.0", "ask for v0.1.0 explicitly"}},
		{name: "publish local DIST twice", args: []string{"publish", "local", dist, "--from", tree, "--root", out()}, code: 2, stderr: []string{"pass one"}},
		{name: "publish local from missing", args: []string{"publish", "local", "--from", "/nonexistent", "--root", out()}, code: 2, stderr: []string{"--from /nonexistent: no such folder"}},
		{name: "publish github", env: map[string]string{"GITHUB_TOKEN": token}, args: []string{"publish", "github", "--repo", "acme/provider", dist, "--github-api-url", gh.APIURL()},
			code: 0, stdout: []string{"providers:\n- name: example\n", "/acme/provider/releases/latest/infrastructure-components.yaml"}, stderr: []string{"uploaded"}},
		{name: "release dry run", args: []string{"release", example, "--version", "v0.1.0", "--out", out(), "--dry-run", "--skip-image-check"}, code: 0, stdout: []string{""}, stderr: []string{"STEP", "verify dist"}},
		{name: "release lint fails json", args: []string{"release", lintFails, "--version", "v1.2.0", "--out", out(), "--dry-run", "-o", "json"}, code: 1, json: true,
			stdout: []string{`"rule": "CAPI315"`, `"error": "lint: 1 error, 0 warnings`, `"status": "failed"`}},
		{name: "release without target", args: []string{"release", example, "--version", "v0.1.0"}, code: 2, stderr: []string{"--publish target, or --dry-run"}},
		{name: "dev", env: map[string]string{"HOME": t.TempDir()}, args: []string{"dev", example, "--out", out()}, code: 0, stdout: []string{"clusterctl init --infrastructure example:"}},
		{name: "diff safe", args: []string{"diff", oldDist, newDist}, code: 0, stdout: []string{""}, stderr: []string{"comparing v0.1.0", "0 errors, 0 warnings"}},
		{name: "diff breaks", args: []string{"diff", oldDist, brokenDist}, code: 1, stdout: []string{""},
			stderr: []string{"CAPI701 Metadata releaseSeries", "no release series 0.1", "diff: 1 error: the upgrade from v0.1.0 to v0.2.0 breaks"}},
		{name: "diff breaks json", args: []string{"diff", oldDist, brokenDist, "-o", "json"}, code: 1, json: true, stdout: []string{`"rule": "CAPI701"`}},
		{name: "diff breaks codequality", args: []string{"diff", oldDist, brokenDist, "-o", "codequality"}, code: 1, json: true, stdout: []string{`"check_name": "CAPI701"`}},
		{name: "diff breaks markdown", args: []string{"diff", oldDist, brokenDist, "-o", "markdown"}, code: 1, stdout: []string{"## capirepo diff: the upgrade from v0.1.0 to v0.2.0 breaks\n", "[CAPI701]("}},
		{name: "diff sarif", args: []string{"diff", oldDist + "@v0.1.0", newDist, "-o", "sarif"}, code: 0, json: true, stdout: []string{`"id": "CAPI714"`}},
		{name: "diff the release before, from a target", args: []string{"diff", repo, brokenDist}, code: 1, stderr: []string{"the release before v0.2.0 is v0.1.0", "CAPI701"}},
		{name: "diff waived", args: []string{"diff", oldDist, brokenDist, "--disable", "CAPI701=0.1 was a preview"}, code: 0, stderr: []string{"(waived: 0.1 was a preview)"}},
		{name: "diff one release", args: []string{"diff", oldDist}, code: 2, stderr: []string{"see 'capirepo diff --help'"}},
		{name: "diff missing folder", args: []string{"diff", "/nonexistent", newDist}, code: 2, stderr: []string{"/nonexistent: no such folder, and not a target URL"}},
		{name: "diff bad target", args: []string{"diff", "gthub://acme/provider", newDist}, code: 2, stderr: []string{"unknown scheme"}},
		{name: "diff two targets without --provider", args: []string{"diff", repo, repo + "@v0.1.0"}, code: 2, stderr: []string{"--provider LABEL"}},
		{name: "lint against", args: []string{"lint", brokenDist, "--against", oldDist}, code: 1, stderr: []string{"CAPI701", "lint --against: compared with v0.1.0"}},
		{name: "lint tree against a target", args: []string{"lint", brokenTree, "--version", "v0.2.0", "--against", repo}, code: 1, stderr: []string{"CAPI701"}},
		{name: "lint file against", args: []string{"lint", filepath.Join(newDist, "infrastructure-test", "v0.2.0", "metadata.yaml"), "--against", oldDist}, code: 2, stderr: []string{"not one file"}},
		{name: "release stops on the upgrade check json", args: []string{"release", brokenTree, "--version", "v0.2.0", "--out", out(), "--dry-run", "--publish", repo, "--skip-image-check", "-o", "json"}, code: 1, json: true,
			stdout: []string{`"rule": "CAPI701"`, `"step": "upgrade"`, `"status": "failed"`}},
		{name: "release skips the upgrade check with a reason", args: []string{"release", brokenTree, "--version", "v0.2.0", "--out", out(), "--dry-run", "--publish", repo, "--skip-image-check", "--skip-upgrade-check", "0.1 was a preview"}, code: 0,
			stderr: []string{"upgrade check skipped: 0.1 was a preview"}},
		{name: "release skip without a reason", args: []string{"release", brokenTree, "--version", "v0.2.0", "--dry-run", "--skip-upgrade-check", " "}, code: 2, stderr: []string{"--skip-upgrade-check needs a reason"}},
		{name: "sign without a token", args: []string{"sign", dist}, code: 2, stdout: []string{""}, stderr: []string{"keyless signing needs an OIDC token: set SIGSTORE_ID_TOKEN"}},
		{name: "sign with a missing key", args: []string{"sign", dist, "--key", "/nonexistent/cosign.key"}, code: 2, stderr: []string{"--key: open /nonexistent/cosign.key"}},
		{name: "sign tlog-upload without key", env: map[string]string{"SIGSTORE_ID_TOKEN": "a.b.c"}, args: []string{"sign", dist, "--tlog-upload"}, code: 2, stderr: []string{"--tlog-upload goes with --key"}},
		{name: "sign json", args: []string{"sign", dist, "-o", "json"}, code: 2, json: true, stdout: []string{`"exitCode": 2`}},
		{name: "verify signatures for nobody", args: []string{"verify", dist, "--signatures"}, code: 2, stderr: []string{"--signatures needs --key, or --certificate-identity with --certificate-oidc-issuer"}},
		{name: "verify identity without signatures", args: []string{"verify", dist, "--certificate-identity", "a@b.c"}, code: 2, stderr: []string{"go with --signatures"}},
		{name: "verify signatures of configmaps", args: []string{"verify", "--configmaps", "x.yaml", "--signatures", "--key", "/dev/null"}, code: 2},
		{name: "release key without sign", args: []string{"release", example, "--version", "v0.1.0", "--dry-run", "--key", "cosign.key"}, code: 2, stderr: []string{"go with --sign"}},
		{name: "mirror identity without require", args: []string{"mirror", "cluster-api", "--to", "file://" + out(), "--certificate-identity", "a@b.c"}, code: 2, stderr: []string{"go with --require-signatures"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, tt.env, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			checkStream(t, "stdout", stdout, tt.stdout)
			checkStream(t, "stderr", stderr, tt.stderr)
			if tt.json {
				var v any // an object; a Code Quality report is an array
				if err := json.Unmarshal([]byte(stdout), &v); err != nil {
					t.Errorf("stdout is not one JSON document: %v\n%s", err, stdout)
				}
			}
			if strings.Contains(stdout+stderr, token) {
				t.Error("the token was printed")
			}
		})
	}
}

func checkStream(t *testing.T, name, got string, want []string) {
	t.Helper()
	if len(want) == 1 && want[0] == "" {
		if got != "" {
			t.Errorf("%s is not empty:\n%s", name, got)
		}
		return
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", name, w, got)
		}
	}
}

// TestCLI_ConfigMissingInTreeIsNotAnError: --config unset looks in the tree,
// which may have none; only a --config naming nothing is a usage error.
func TestCLI_ConfigMissingInTreeIsNotAnError(t *testing.T) {
	tree := testtree.Write(t, testtree.Minimal(nil))
	if _, err := os.Stat(filepath.Join(tree, "capirepo.yaml")); err == nil {
		t.Fatal("the minimal tree has a capirepo.yaml")
	}
	if code, _, stderr := runCmd(t, nil, "build", tree, "--version", "v1.2.0", "--out", t.TempDir()); code != 0 {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestVerify_RealValuesForTheReadBack: --var and --values give the
// read-back real values, as they give the install check (issue 44): a
// values file for every flavor, one for the topology flavor, which wins
// there, and --var, which wins over both; the JSON says they are no
// stand-ins.
func TestVerify_RealValuesForTheReadBack(t *testing.T) {
	dist := buildExample(t)
	dir := t.TempDir()
	all, topo := filepath.Join(dir, "values.yaml"), filepath.Join(dir, "topology.yaml")
	if err := os.WriteFile(all, []byte("EXAMPLE_MACHINE_FLAVOR: medium\nEXAMPLE_REGION: eu-central-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(topo, []byte("EXAMPLE_MACHINE_FLAVOR: large\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, nil, "verify", dist, "--values", all, "--values", "topology="+topo, "--var", "EXAMPLE_REGION=eu-west-1", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Providers []verify.ProviderReport `json:"providers"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || len(doc.Providers) != 1 {
		t.Fatalf("stdout: %v\n%s", err, stdout)
	}
	got := map[string]string{}
	for _, f := range doc.Providers[0].Flavors {
		for _, v := range f.Variables {
			if v.Name == "EXAMPLE_MACHINE_FLAVOR" || v.Name == "EXAMPLE_REGION" {
				got[f.Name+" "+v.Name] = fmt.Sprintf("%s placeholder=%v", v.Value, v.Placeholder)
			}
		}
	}
	want := map[string]string{
		" EXAMPLE_MACHINE_FLAVOR":            "medium placeholder=false",
		" EXAMPLE_REGION":                    "eu-west-1 placeholder=false",
		"ha EXAMPLE_MACHINE_FLAVOR":          "medium placeholder=false",
		"ha EXAMPLE_REGION":                  "eu-west-1 placeholder=false",
		"machinepool EXAMPLE_MACHINE_FLAVOR": "medium placeholder=false",
		"machinepool EXAMPLE_REGION":         "eu-west-1 placeholder=false",
		"topology EXAMPLE_MACHINE_FLAVOR":    "large placeholder=false",
		"topology EXAMPLE_REGION":            "eu-west-1 placeholder=false",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("values the read-back used, by flavor (-want +got):\n%s", diff)
	}
}

// TestVerify_ValuesForAFlavorNotRead: a values file for a flavor the
// release does not have (a typo, the file's name) was checked nowhere:
// verify fails naming the flavors it read, and takes default= for the
// default flavor.
func TestVerify_ValuesForAFlavorNotRead(t *testing.T) {
	dist := buildExample(t)
	vals := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(vals, []byte("EXAMPLE_MACHINE_FLAVOR: large\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, nil, "verify", dist, "--values", "topolgy="+vals)
	if code != 1 || !strings.Contains(stderr, "--values topolgy=FILE: no flavor topolgy was read, so its values were checked nowhere; the flavors read: default, ha, machinepool, topology") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, nil, "verify", dist, "--values", "default="+vals, "--values", "topology="+vals); code != 0 {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestVerify_EveryVersionInDist: a dist with several versions is verified
// whole, unless --version names one.
func TestVerify_EveryVersionInDist(t *testing.T) {
	dist := filepath.Join(t.TempDir(), "dist")
	for _, v := range []string{"v0.1.1", "v0.1.0"} {
		if code, _, stderr := runCmd(t, nil, "build", exampleDir(t), "--version", v, "--out", dist); code != 0 {
			t.Fatalf("build %s: exit %d: %s", v, code, stderr)
		}
	}
	code, stdout, stderr := runCmd(t, nil, "verify", dist)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "verifying 2 versions: v0.1.0, v0.1.1") ||
		!strings.Contains(stdout, "infrastructure-example v0.1.0 ") || !strings.Contains(stdout, "infrastructure-example v0.1.1 ") {
		t.Errorf("not both versions verified:\nstdout: %s\nstderr: %s", stdout, stderr)
	}
	code, stdout, _ = runCmd(t, nil, "verify", dist, "--version", "v0.1.1")
	if code != 0 || strings.Contains(stdout, "v0.1.0 ") || !strings.Contains(stdout, "infrastructure-example v0.1.1 ") {
		t.Errorf("--version v0.1.1: exit %d:\n%s", code, stdout)
	}
	// A broken version among several fails the run and is named; the others are still reported.
	if err := os.Remove(filepath.Join(dist, "infrastructure-example", "v0.1.0", "metadata.yaml")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCmd(t, nil, "verify", dist)
	if code != 1 || !strings.Contains(stderr, "1 of 2 versions failed: v0.1.0") || !strings.Contains(stdout, "infrastructure-example v0.1.1 ") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

// TestRelease_FileProgressListsEachUploadOnceWithSizes: the file:// target's
// writes are listed once, with their sizes, in aligned columns, called what
// they are (written, not uploaded), and counts read in the singular when
// there is one.
func TestRelease_FileProgressListsEachUploadOnceWithSizes(t *testing.T) {
	root := filepath.Join(t.TempDir(), "repo")
	code, _, stderr := runCmd(t, nil, "release", exampleDir(t), "--version", "v0.1.0", "--out", filepath.Join(t.TempDir(), "dist"), "--publish", "file://"+root, "--skip-image-check")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var uploads []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "  written ") {
			uploads = append(uploads, line)
		}
	}
	if len(uploads) != 8 || strings.Contains(stderr, "uploaded") {
		t.Fatalf("%d upload lines, want 8:\n%s", len(uploads), stderr)
	}
	for _, l := range uploads {
		if strings.HasSuffix(l, " 0 B") || len(l) != len(uploads[0]) {
			t.Errorf("upload line without its size or out of column: %q", l)
		}
	}
	if strings.Contains(stderr, "1 providers") || !strings.Contains(stderr, "1 provider, 8 files") {
		t.Errorf("plural wrong:\n%s", stderr)
	}
}

// TestVerify_JSONOnFailureHoldsTheErrorAndTheReport: -o json of a partly
// failed verify is one document: every version as far as it was read, and the error.
func TestVerify_JSONOnFailureHoldsTheErrorAndTheReport(t *testing.T) {
	dist := filepath.Join(t.TempDir(), "dist")
	for _, v := range []string{"v0.1.0", "v0.1.1"} {
		if code, _, stderr := runCmd(t, nil, "build", exampleDir(t), "--version", v, "--out", dist); code != 0 {
			t.Fatalf("build %s: exit %d: %s", v, code, stderr)
		}
	}
	if err := os.Remove(filepath.Join(dist, "infrastructure-example", "v0.1.1", "metadata.yaml")); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runCmd(t, nil, "verify", dist, "-o", "json")
	var doc struct {
		Providers []struct {
			Version string `json:"version"`
		} `json:"providers"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if code != 1 || len(doc.Providers) != 2 || doc.Providers[0].Version != "v0.1.0" || !strings.Contains(doc.Error, "1 of 2 versions failed: v0.1.1") {
		t.Errorf("exit %d, doc %+v", code, doc)
	}
}

// TestExitCode_FromTypeNotText: the exit code comes from the error's type;
// words cobra uses in its messages do not make a failure a usage error.
func TestExitCode_FromTypeNotText(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{errors.New(`metadata.yaml: release series 1.2 has contract "v1alpha9"; clusterctl accepts only v1beta2, v1beta1`), exitFailure},
		{errors.New("unknown command in the Makefile"), exitFailure},
		{cli.Usagef("--repo must be OWNER/NAME"), exitUsage},
		{fmt.Errorf("--publish gitlab://x/y: %w", cli.Usagef("set GITLAB_ACCESS_TOKEN")), exitUsage},
		{fmt.Errorf("build: %w", builder.ErrNoVersion), exitUsage},
		{&provider.ManagerMismatchError{First: "a", Other: "b", File: "capirepo.yaml"}, exitUsage},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
