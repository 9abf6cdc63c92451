package main

import (
	"crypto/elliptic"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	fakegl "github.com/capirepo/capirepo/internal/fake/gitlab"
	"github.com/capirepo/capirepo/publish"
)

// signingKey makes a cosign-format key pair: the environment capirepo
// sign --key env://COSIGN_PRIVATE_KEY reads, and the public key file verify
// --signatures --key takes.
func signingKey(t *testing.T) (env map[string]string, pubFile string) {
	t.Helper()
	priv, pub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte("pw")))
	if err != nil {
		t.Fatal(err)
	}
	pubFile = filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(pubFile, pub, 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"COSIGN_PRIVATE_KEY": string(priv), "COSIGN_PASSWORD": "pw"}, pubFile
}

// signDist signs the dist folder as a maintainer does after publishing.
func signDist(t *testing.T, env map[string]string, dist string) {
	t.Helper()
	if code, _, stderr := runCmd(t, env, "sign", dist, "--key", "env://COSIGN_PRIVATE_KEY"); code != 0 {
		t.Fatalf("sign exit %d: %s", code, stderr)
	}
}

// TestPublishLocal_SigningAPublishedVersionAddsWithoutReplace: a version
// published unsigned, then signed and published again the way a maintainer
// types it, gets its bundles and provenance added without --replace (the
// report says added, nothing replaced) and verify --signatures passes on
// the tree; signing again changes a bundle, which needs --replace.
func TestPublishLocal_SigningAPublishedVersionAddsWithoutReplace(t *testing.T) {
	env, pub := signingKey(t)
	dist := buildExample(t)
	root := filepath.Join(t.TempDir(), "repo")
	if code, _, stderr := runCmd(t, nil, "publish", "local", dist, "--out", root); code != 0 {
		t.Fatalf("publish unsigned: exit %d: %s", code, stderr)
	}
	signDist(t, env, dist)

	code, _, stderr := runCmd(t, nil, "publish", "local", dist, "--out", root)
	if code != 0 {
		t.Fatalf("publish signed without --replace: exit %d: %s", code, stderr)
	}
	mustContain(t, "stderr", stderr, "assets: 3 added (", ", 0 replaced\n",
		"added: infrastructure-example/v0.1.0/checksums.txt.sigstore.json, infrastructure-example/v0.1.0/provenance.intoto.json, infrastructure-example/v0.1.0/provenance.intoto.json.sigstore.json\n")
	if strings.Contains(stderr, "replaced:") {
		t.Errorf("files reported replaced:\n%s", stderr)
	}
	code, stdout, stderr := runCmd(t, nil, "verify", root, "--signatures", "--key", pub)
	if code != 0 {
		t.Fatalf("verify --signatures of the tree: exit %d: %s", code, stderr)
	}
	mustContain(t, "verify stdout", stdout, "infrastructure-example/v0.1.0: ", " files match the signed checksums.txt")

	// Signed again by the same key, the bundles are the same signatures
	// (publish.SameSignature); by another key they are a change.
	signDist(t, env, dist)
	if code, _, stderr := runCmd(t, nil, "publish", "local", dist, "--out", root); code != 0 || !strings.Contains(stderr, "nothing to do") {
		t.Errorf("signed again by the same key: exit %d, stderr %s", code, stderr)
	}
	other, _ := signingKey(t)
	signDist(t, other, dist)
	code, _, stderr = runCmd(t, nil, "publish", "local", dist, "--out", root)
	if code != 1 || !strings.Contains(stderr, "--replace") || !strings.Contains(stderr, "checksums.txt.sigstore.json") {
		t.Errorf("a changed bundle without --replace: exit %d, stderr %s", code, stderr)
	}
	code, _, stderr = runCmd(t, nil, "publish", "local", dist, "--out", root, "--replace")
	if code != 0 || !strings.Contains(stderr, "replaced: infrastructure-example/v0.1.0/checksums.txt.sigstore.json") {
		t.Errorf("--replace: exit %d, stderr %s", code, stderr)
	}
}

// TestPublishGitHub_SigningAPublishedRelease: the same against the GitHub
// fake. The unsigned release got the publisher's provenance.intoto.json;
// the one capirepo sign writes names the same files (and the providers),
// so it supersedes it without --replace (reported replaced, the one file
// that changes) while the bundles are added. The release's assets,
// downloaded, then pass verify --signatures; a bundle by another signer
// needs --replace, and the error says so.
func TestPublishGitHub_SigningAPublishedRelease(t *testing.T) {
	const token = "ghp_sign-later-token"
	srv := fakegh.New(t, fakegh.WithToken(token))
	srv.AddRepo("acme", "cluster-api-provider-example", false)
	keyEnv, pub := signingKey(t)
	dist := buildExample(t)
	env := map[string]string{"GITHUB_TOKEN": token, "GITHUB_API_URL": srv.APIURL()}
	args := []string{"publish", "github", "--repo", "acme/cluster-api-provider-example", dist}
	if code, _, stderr := runCmd(t, env, args...); code != 0 {
		t.Fatalf("publish unsigned: exit %d: %s", code, stderr)
	}
	assets := func() map[string][]byte {
		rels := srv.Releases("acme", "cluster-api-provider-example")
		if len(rels) != 1 || rels[0].Draft {
			t.Fatalf("server holds %+v", rels)
		}
		m := map[string][]byte{}
		for _, a := range rels[0].Assets {
			m[a.Name] = a.Data
		}
		return m
	}
	before := assets()
	signDist(t, keyEnv, dist)

	code, stdout, stderr := runCmd(t, env, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("publish signed without --replace: exit %d: %s", code, stderr)
	}
	var sum publish.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("-o json: %v\n%s", err, stdout)
	}
	if diff := cmp.Diff([]string{"checksums.txt.sigstore.json", "provenance.intoto.json.sigstore.json"}, sum.Uploaded); diff != "" {
		t.Errorf("added (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"provenance.intoto.json"}, sum.Replaced); diff != "" {
		t.Errorf("replaced (-want +got):\n%s", diff)
	}

	download := t.TempDir()
	after := assets()
	for name, data := range after {
		if err := os.WriteFile(filepath.Join(download, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(after) != len(before)+2 || string(after["provenance.intoto.json"]) == string(before["provenance.intoto.json"]) {
		t.Errorf("release assets %v", slices.Sorted(maps.Keys(after)))
	}
	if code, _, stderr := runCmd(t, nil, "verify", download, "--signatures", "--key", pub); code != 0 {
		t.Errorf("verify --signatures of the release's assets: exit %d: %s", code, stderr)
	}

	other, _ := signingKey(t)
	signDist(t, other, dist)
	code, _, stderr = runCmd(t, env, args...)
	if code != 1 || !strings.Contains(stderr, "--replace") || !strings.Contains(stderr, "different checksums.txt.sigstore.json") {
		t.Errorf("a bundle by another signer without --replace: exit %d, stderr %s", code, stderr)
	}
}

// TestPublishGitLab_SigningAPublishedPackage: the same against the GitLab
// fake: the bundles are added and the signed provenance supersedes the
// publisher's unsigned one without --replace, leaving one copy of each
// file, which verify --signatures accepts.
func TestPublishGitLab_SigningAPublishedPackage(t *testing.T) {
	const token = "glpat-sign-later-token"
	srv := fakegl.New(t)
	srv.AddProject(42, "infra/capi-mirror", false)
	srv.AddToken(token, fakegl.AccessToken)
	keyEnv, pub := signingKey(t)
	dist := buildExample(t)
	env := map[string]string{"GITLAB_ACCESS_TOKEN": token}
	args := []string{"publish", "gitlab", "--gitlab-url", srv.URL, "--project", "infra/capi-mirror", dist}
	if code, _, stderr := runCmd(t, env, args...); code != 0 {
		t.Fatalf("publish unsigned: exit %d: %s", code, stderr)
	}
	signDist(t, keyEnv, dist)
	code, _, stderr := runCmd(t, env, args...)
	if code != 0 {
		t.Fatalf("publish signed without --replace: exit %d: %s", code, stderr)
	}
	mustContain(t, "stderr", stderr, "assets: 2 added (", "1 replaced\n",
		"added: infrastructure-example/checksums.txt.sigstore.json, infrastructure-example/provenance.intoto.json.sigstore.json\n",
		"replaced: infrastructure-example/provenance.intoto.json\n")

	download := t.TempDir()
	seen := map[string]int{}
	for _, f := range srv.Files("42", "infrastructure-example", "v0.1.0") {
		if seen[f.Name]++; seen[f.Name] > 1 {
			t.Errorf("the package holds %s twice", f.Name)
		}
		if err := os.WriteFile(filepath.Join(download, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, stderr := runCmd(t, nil, "verify", download, "--signatures", "--key", pub); code != 0 {
		t.Errorf("verify --signatures of the package's files: exit %d: %s", code, stderr)
	}

	other, _ := signingKey(t)
	signDist(t, other, dist)
	code, _, stderr = runCmd(t, env, args...)
	if code != 1 || !strings.Contains(stderr, "--replace") || !strings.Contains(stderr, "checksums.txt.sigstore.json") {
		t.Errorf("a bundle by another signer without --replace: exit %d, stderr %s", code, stderr)
	}
}

// TestSign_SaysWhatTheProvenanceNames: outside CI, in a folder without a
// git origin and without --source, the provenance sign writes names no
// repository, and sign says so on stderr, naming --source; a provenance
// found that names another repository than --source is signed as found,
// and sign says --source was not used. With nothing to say, it says nothing.
func TestSign_SaysWhatTheProvenanceNames(t *testing.T) {
	env, _ := signingKey(t)
	const repo, other = "https://github.com/acme/provider", "https://github.com/acme/elsewhere"
	signed := buildExample(t)
	if code, _, stderr := runCmd(t, env, "sign", signed, "--key", "env://COSIGN_PRIVATE_KEY", "--source", repo); code != 0 {
		t.Fatalf("sign: exit %d: %s", code, stderr)
	}
	unsigned, unsigned2 := buildExample(t), buildExample(t)
	t.Chdir(t.TempDir()) // no git origin here
	for _, tc := range []struct {
		name  string
		dist  string
		args  []string
		wants []string // on stderr; none: no warning
	}{
		{"no repository", unsigned, nil,
			[]string{"warning: infrastructure-example/v0.1.0/provenance.intoto.json names no repository (\"repository\": \"\")", ": pass --source URL\n"}},
		{"--source", unsigned2, []string{"--source", repo}, nil},
		{"--source other than the provenance found", signed, []string{"--source", other},
			[]string{"warning: infrastructure-example/v0.1.0/provenance.intoto.json names repository " + repo + ", not " + other + ": a provenance found is signed as it is", other + " is not used"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, env, append([]string{"sign", tc.dist, "--key", "env://COSIGN_PRIVATE_KEY"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if len(tc.wants) == 0 && strings.Contains(stderr+stdout, "warning") {
				t.Errorf("a warning with nothing to say:\n%s", stderr)
			}
			mustContain(t, "stderr", stderr, tc.wants...)
			if strings.Contains(stdout, "warning") {
				t.Errorf("the warning is on stdout:\n%s", stdout)
			}
		})
	}
}
