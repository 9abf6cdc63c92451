package main

import (
	"context"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/internal/redact"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/sign/signtest"
)

const (
	signID     = "https://github.com/acme/cluster-api-provider-example/.github/workflows/release.yaml@refs/tags/v0.1.0"
	signIssuer = signtest.GitHubIssuer
)

// sigstoreFiles starts an in-memory Sigstore and writes its signing config
// and trusted root, as --signing-config and --trusted-root take them.
func sigstoreFiles(t *testing.T) (ss *signtest.Sigstore, signingConfig, trustedRoot string) {
	t.Helper()
	ss = signtest.New(t)
	signingConfig, trustedRoot = ss.WriteFiles(t, t.TempDir())
	return ss, signingConfig, trustedRoot
}

func mustContain(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

// TestSign_KeylessThenVerifySignatures signs the example's dist keylessly
// (SIGSTORE_ID_TOKEN, as GitLab CI gives it) against the in-memory
// Sigstore, then checks it with verify --signatures: the identity passes;
// another identity, a tampered file and a swapped checksums.txt are each
// refused, naming the file.
func TestSign_KeylessThenVerifySignatures(t *testing.T) {
	_, sc, tr := sigstoreFiles(t)
	dist := buildExample(t)
	token := signtest.Token(signID, signIssuer)
	code, stdout, stderr := runCmd(t, map[string]string{"SIGSTORE_ID_TOKEN": token}, "sign", dist, "--signing-config", sc, "--trusted-root", tr,
		"--source", "https://github.com/acme/cluster-api-provider-example")
	if code != 0 {
		t.Fatalf("sign exit %d: %s", code, stderr)
	}
	mustContain(t, "stdout", stdout,
		"infrastructure-example/v0.1.0/checksums.txt\tchecksums.txt.sigstore.json as "+signID+" (issuer "+signIssuer+"); transparency log entry 10",
		"infrastructure-example/v0.1.0/provenance.intoto.json\tprovenance.intoto.json.sigstore.json as ")
	if strings.Contains(stdout+stderr, token) {
		t.Error("the OIDC token was printed")
	}
	vdir := filepath.Join(dist, "infrastructure-example", "v0.1.0")
	for _, f := range []string{"checksums.txt.sigstore.json", "provenance.intoto.json", "provenance.intoto.json.sigstore.json"} {
		if _, err := os.Stat(filepath.Join(vdir, f)); err != nil {
			t.Errorf("not written beside the files: %v", err)
		}
	}

	verifyArgs := func(id string) []string {
		return []string{"verify", dist, "--signatures", "--certificate-identity", id, "--certificate-oidc-issuer", signIssuer, "--trusted-root", tr}
	}
	code, stdout, stderr = runCmd(t, nil, verifyArgs(signID)...)
	if code != 0 {
		t.Fatalf("verify exit %d: %s", code, stderr)
	}
	mustContain(t, "verify stdout", stdout, "infrastructure-example/v0.1.0: 7 files match the signed checksums.txt; signed: checksums.txt as "+signID)
	code, stdout, _ = runCmd(t, nil, append(verifyArgs(signID), "-o", "json")...)
	var doc struct {
		Signatures struct {
			Folders []struct {
				Dir   string
				Files int
			}
		}
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil || len(doc.Signatures.Folders) != 1 || doc.Signatures.Folders[0].Files != 7 {
		t.Errorf("verify -o json: exit %d\n%s", code, stdout)
	}

	code, _, stderr = runCmd(t, nil, verifyArgs("mallory@example.com")...)
	if code != 1 || !strings.Contains(stderr, "infrastructure-example/v0.1.0/checksums.txt.sigstore.json does not sign infrastructure-example/v0.1.0/checksums.txt for identity mallory@example.com") {
		t.Errorf("another identity: exit %d\n%s", code, stderr)
	}

	sums, _ := os.ReadFile(filepath.Join(vdir, "checksums.txt"))
	md := filepath.Join(vdir, "metadata.yaml")
	orig, _ := os.ReadFile(md)
	if err := os.WriteFile(md, append(orig, "# changed\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd(t, nil, verifyArgs(signID)...)
	if code != 1 || !strings.Contains(stderr, "infrastructure-example/v0.1.0/metadata.yaml has sha256") {
		t.Errorf("a tampered file: exit %d\n%s", code, stderr)
	}
	// The checksums.txt swapped for one that matches the tampered file.
	changed, _ := os.ReadFile(md)
	var lines []string
	for _, l := range strings.SplitAfter(string(sums), "\n") {
		if strings.HasSuffix(l, "  metadata.yaml\n") {
			l = sha256Hex(changed) + "  metadata.yaml\n"
		}
		lines = append(lines, l)
	}
	if err := os.WriteFile(filepath.Join(vdir, "checksums.txt"), []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd(t, nil, verifyArgs(signID)...)
	if code != 1 || !strings.Contains(stderr, "infrastructure-example/v0.1.0/checksums.txt.sigstore.json does not sign infrastructure-example/v0.1.0/checksums.txt") {
		t.Errorf("a swapped checksums.txt: exit %d\n%s", code, stderr)
	}
}

// TestSign_KeyFromTheEnvironment signs with a cosign-format key from a
// variable, logs nothing, and verifies with the public key; the key and its
// password are never printed, a wrong password is a usage error that says so.
func TestSign_KeyFromTheEnvironment(t *testing.T) {
	const password = "hunter2 with spaces & signs"
	priv, pub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte(password)))
	if err != nil {
		t.Fatal(err)
	}
	pubFile := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(pubFile, pub, 0o644); err != nil {
		t.Fatal(err)
	}
	dist := buildExample(t)
	env := map[string]string{"COSIGN_PRIVATE_KEY": string(priv), "COSIGN_PASSWORD": password}
	code, stdout, stderr := runCmd(t, env, "sign", dist, "--key", "env://COSIGN_PRIVATE_KEY", "-o", "json")
	if code != 0 {
		t.Fatalf("sign exit %d: %s", code, stderr)
	}
	var sum pipeline.SignReport
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || len(sum.Files) != 2 {
		t.Fatalf("sign -o json: %v\n%s", err, stdout)
	}
	if k := sum.Files[0].Identity.Key; !strings.HasPrefix(k, "SHA256:") || len(sum.Files[0].Log) != 0 {
		t.Errorf("signed by %+v, log %v", sum.Files[0].Identity, sum.Files[0].Log)
	}
	for _, secret := range append([]string{password}, strings.Split(strings.TrimSpace(string(priv)), "\n")[1:3]...) {
		if strings.Contains(stdout+stderr, secret) {
			t.Errorf("secret %q printed", secret)
		}
	}
	code, stdout, stderr = runCmd(t, nil, "verify", dist, "--signatures", "--key", pubFile)
	if code != 0 {
		t.Fatalf("verify exit %d: %s", code, stderr)
	}
	// A signed dist is still a release every command reads.
	for _, args := range [][]string{{"lint", dist}, {"lint", filepath.Join(dist, "infrastructure-example", "v0.1.0")}, {"publish", "local", dist, "--out", t.TempDir()}} {
		if code, _, stderr := runCmd(t, nil, args...); code != 0 {
			t.Errorf("%v on a signed dist: exit %d: %s", args, code, stderr)
		}
	}
	// Both files signed by one key, without a log: the signer said once.
	mustContain(t, "verify stdout", stdout, "signed: checksums.txt and provenance.intoto.json as key "+sum.Files[0].Identity.Key+"; no transparency log\n")
	if n := strings.Count(stdout, sum.Files[0].Identity.Key); n != 1 {
		t.Errorf("verify stdout names the key %d times, want once:\n%s", n, stdout)
	}

	env["COSIGN_PASSWORD"] = "not the password"
	code, _, stderr = runCmd(t, env, "sign", dist, "--key", "env://COSIGN_PRIVATE_KEY")
	if code != 2 || !strings.Contains(stderr, "wrong password (COSIGN_PASSWORD)?") || strings.Contains(stderr, "not the password") {
		t.Errorf("wrong password: exit %d\n%s", code, stderr)
	}
}

// TestSign_GitHubActionsToken: in GitHub Actions, keyless signing asks the
// job's token service for a token for Fulcio's audience, with the job's
// request token; neither is printed.
func TestSign_GitHubActionsToken(t *testing.T) {
	_, sc, tr := sigstoreFiles(t)
	const requestToken = "gha-request-token-0123456789"
	jwt := signtest.Token(signID, signIssuer)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+requestToken || r.URL.Query().Get("audience") != "sigstore" || r.URL.Query().Get("api-version") != "2.0" {
			http.Error(w, "bad request", http.StatusForbidden)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"value": jwt})
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{"ACTIONS_ID_TOKEN_REQUEST_URL": srv.URL + "/token?api-version=2.0", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": requestToken}
	dist := buildExample(t)
	code, stdout, stderr := runCmd(t, env, "sign", dist, "--signing-config", sc, "--trusted-root", tr)
	if code != 0 {
		t.Fatalf("sign exit %d: %s", code, stderr)
	}
	mustContain(t, "stdout", stdout, "as "+signID+" (issuer "+signIssuer+")")
	if strings.Contains(stdout+stderr, jwt) || strings.Contains(stdout+stderr, requestToken) {
		t.Error("a token was printed")
	}
	// Without the permission, GitHub refuses: the error says what to add.
	env["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] = "wrong-request-token"
	code, _, stderr = runCmd(t, env, "sign", dist, "--signing-config", sc, "--trusted-root", tr)
	if code != 1 || !strings.Contains(stderr, "permissions: id-token: write") {
		t.Errorf("refused token: exit %d\n%s", code, stderr)
	}
}

// TestRelease_SignWritesAndPublishesBundles: release --sign signs after
// writing dist, and the file:// target publishes the bundles with the files.
func TestRelease_SignWritesAndPublishesBundles(t *testing.T) {
	_, sc, tr := sigstoreFiles(t)
	out, root := filepath.Join(t.TempDir(), "dist"), filepath.Join(t.TempDir(), "repo")
	env := map[string]string{"SIGSTORE_ID_TOKEN": signtest.Token(signID, signIssuer)}
	code, _, stderr := runCmd(t, env, "release", exampleDir(t), "--version", "v0.1.0", "--out", out, "--skip-image-check",
		"--publish", "file://"+root, "--sign", "--signing-config", sc, "--trusted-root", tr)
	if code != 0 {
		t.Fatalf("release exit %d: %s", code, stderr)
	}
	mustContain(t, "stderr", stderr, "sign  ", "2 bundles as "+signID)
	for _, dir := range []string{out, root} {
		code, _, stderr = runCmd(t, nil, "verify", dir, "--signatures", "--certificate-identity", signID, "--certificate-oidc-issuer", signIssuer, "--trusted-root", tr)
		if code != 0 {
			t.Errorf("verify %s: exit %d: %s", dir, code, stderr)
		}
	}
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// TestPublishOCI_SignThenVerifySignatures: publish oci --sign signs each
// artifact pushed (here to a registry without the referrers API, through
// the referrers tag), and verify oci:// --signatures finds and checks it;
// an artifact signed by another key is refused.
func TestPublishOCI_SignThenVerifySignatures(t *testing.T) {
	dist := buildExampleDist(t)
	host := authRegistry(t, "robot", "pa55-w0rd-oci")
	key := func() (privFile, pubFile string) {
		priv, pub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte("pw")))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		privFile, pubFile = filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
		if os.WriteFile(privFile, priv, 0o600) != nil || os.WriteFile(pubFile, pub, 0o644) != nil {
			t.Fatal("write key")
		}
		return privFile, pubFile
	}
	priv, pub := key()
	_, otherPub := key()
	env := map[string]string{"OCI_USERNAME": "robot", "OCI_PASSWORD": "pa55-w0rd-oci", "COSIGN_PASSWORD": "pw"}
	code, _, stderr := runCmd(t, env, "publish", "oci", "--repo", host+"/capi", dist, "--plain-http", "--sign", "--key", priv)
	if code != 0 {
		t.Fatalf("publish exit %d: %s", code, stderr)
	}
	mustContain(t, "stderr", stderr, "signed "+host+"/capi/infrastructure-example@sha256:", "as key SHA256:")
	ref := "oci://" + host + "/capi/infrastructure-example:v0.1.0"
	code, stdout, stderr := runCmd(t, env, "verify", ref, "--plain-http", "--signatures", "--key", pub)
	if code != 0 {
		t.Fatalf("verify exit %d: %s", code, stderr)
	}
	mustContain(t, "verify stdout", stdout, host+"/capi/infrastructure-example:v0.1.0: signed as key SHA256:")
	code, _, stderr = runCmd(t, env, "verify", ref, "--plain-http", "--signatures", "--key", otherPub)
	if code != 1 || !strings.Contains(stderr, "no signature checks out for key SHA256:") {
		t.Errorf("another key: exit %d\n%s", code, stderr)
	}
}

// TestSign_ClusterAPIMonorepoAndItsGitHubRelease signs cluster-api v1.14.2's
// three providers: each version folder, and the flat set its one GitHub
// release holds (dist/flat/v1.14.2), which publish github then uploads; the
// folders verify, and the release's assets verify as a user downloads them.
func TestSign_ClusterAPIMonorepoAndItsGitHubRelease(t *testing.T) {
	if _, err := os.Stat(clusterAPIDir); err != nil {
		t.Skipf("cluster-api v1.14.2 not in the module cache (go mod download sigs.k8s.io/cluster-api@v1.14.2): %v", err)
	}
	ss, sc, tr := sigstoreFiles(t)
	dist := filepath.Join(t.TempDir(), "dist")
	if code, _, stderr := runCmd(t, nil, "build", clusterAPIDir, "--version", "v1.14.2", "--out", dist,
		"--config", filepath.Join(repoRoot, "docs", "configs", "cluster-api.capirepo.yaml")); code != 0 {
		t.Fatalf("build exit %d: %s", code, stderr)
	}
	env := map[string]string{"SIGSTORE_ID_TOKEN": signtest.Token(signID, signIssuer)}
	code, stdout, stderr := runCmd(t, env, "sign", dist, "--signing-config", sc, "--trusted-root", tr)
	if code != 0 {
		t.Fatalf("sign exit %d: %s", code, stderr)
	}
	for _, dir := range []string{"cluster-api", "bootstrap-kubeadm", "control-plane-kubeadm", "flat"} {
		mustContain(t, "sign stdout", stdout, dir+"/v1.14.2/checksums.txt\t", dir+"/v1.14.2/provenance.intoto.json\t")
	}
	if ss.Entries() != 8 {
		t.Errorf("%d log entries, want 8 (4 sets of 2)", ss.Entries())
	}
	code, stdout, stderr = runCmd(t, nil, "verify", dist, "--signatures", "--certificate-identity", signID, "--certificate-oidc-issuer", signIssuer, "--trusted-root", tr)
	if code != 0 {
		t.Fatalf("verify exit %d: %s", code, stderr)
	}
	mustContain(t, "verify stdout", stdout, "flat/v1.14.2: ", "cluster-api/v1.14.2: ", "control-plane-kubeadm/v1.14.2: ")

	const token = "ghp_cli-sign-token"
	gh := fakegh.New(t, fakegh.WithToken(token))
	gh.AddRepo("kubernetes-sigs", "cluster-api", false)
	if code, _, stderr := runCmd(t, map[string]string{"GITHUB_TOKEN": token, "GITHUB_API_URL": gh.APIURL()},
		"publish", "github", "--repo", "kubernetes-sigs/cluster-api", dist); code != 0 {
		t.Fatalf("publish github exit %d: %s", code, stderr)
	}
	var assets []release.File
	for _, a := range gh.Releases("kubernetes-sigs", "cluster-api")[0].Assets {
		assets = append(assets, release.File{Name: a.Name, Data: a.Data})
	}
	v, err := sign.NewVerifier(sign.VerifyOptions{Identity: signID, Issuer: signIssuer, TrustedRoot: ss.TrustedRoot(t)})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := sign.VerifyFiles(v, "the GitHub release", assets, sign.VerifyFilesOptions{}); err != nil {
		t.Errorf("the GitHub release's assets: %v", err)
	} else if c.Files < 4 {
		t.Errorf("%d files checked", c.Files)
	}
}

// TestVerifySignatures_ImagesOfTheComponents: verify DIR --signatures
// --images also wants a signature of every image the components run: the
// image sign --image signed checks out, an unsigned one is refused, named
// by object and container.
func TestVerifySignatures_ImagesOfTheComponents(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	repo := host + "/example/manager"
	img, err := random.Image(128, 1)
	if err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag(repo + ":v0.1.0")
	if err := remote.Write(tag, img); err != nil {
		t.Fatal(err)
	}
	dist := filepath.Join(t.TempDir(), "dist")
	if code, _, stderr := runCmd(t, nil, "build", exampleDir(t), "--version", "v0.1.0", "--out", dist, "--image", repo); code != 0 {
		t.Fatalf("build: %s", stderr)
	}
	_, sc, tr := sigstoreFiles(t)
	env := map[string]string{"SIGSTORE_ID_TOKEN": signtest.Token(signID, signIssuer)}
	trusted, err := root.NewTrustedRootFromPath(tr)
	if err != nil {
		t.Fatal(err)
	}
	v, err := sign.NewVerifier(sign.VerifyOptions{Identity: signID, Issuer: signIssuer, TrustedRoot: trusted})
	if err != nil {
		t.Fatal(err)
	}
	// Signed files, unsigned image.
	if code, _, stderr := runCmd(t, env, "sign", dist, "--signing-config", sc, "--trusted-root", tr); code != 0 {
		t.Fatalf("sign: %s", stderr)
	}
	// The images are there (for no platform in particular): only their
	// signatures fail.
	check := pipeline.VerifyOptions{Path: dist, Images: true, Platforms: []string{}, Signatures: v, Secrets: &redact.Set{}}
	_, err = pipeline.Verify(context.Background(), check)
	if err == nil || !strings.Contains(err.Error(), "container manager: "+repo+":v0.1.0") || !strings.Contains(err.Error(), "is not signed") {
		t.Errorf("an unsigned image: %v", err)
	}
	if code, _, stderr := runCmd(t, env, "sign", dist, "--image", repo+":v0.1.0", "--signing-config", sc, "--trusted-root", tr); code != 0 {
		t.Fatalf("sign --image: %s", stderr)
	}
	rep, err := pipeline.Verify(context.Background(), check)
	if err != nil {
		t.Fatalf("signed: %v", err)
	}
	if sigs := rep.Signatures.Images[repo+":v0.1.0"]; len(sigs) != 1 || sigs[0].Identity.Subject != signID {
		t.Errorf("image signatures %+v", rep.Signatures.Images)
	}
}
