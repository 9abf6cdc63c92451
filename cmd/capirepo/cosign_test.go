//go:build cosign

// The cosign CLI compatibility check: what capirepo signs verifies with
// cosign v3 itself. It builds cosign through the Go module proxy once per
// machine (minutes) into the user cache folder, so it is behind the cosign
// build tag and runs with `make test-cosign`; without the proxy it skips
// and says why.
package main

import (
	"context"
	"crypto/elliptic"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/capirepo/capirepo/sign/signtest"
)

// cosignVersion is the cosign release the check runs (its go directive is
// one this Go builds).
const cosignVersion = "v3.1.3"

// cosignBinary returns the cosign CLI, built once into
// <user cache>/capirepo-test/cosign-<version>/cosign.
func cosignBinary(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("cosign check skipped: no user cache folder to build cosign into: %v", err)
	}
	dir := filepath.Join(cache, "capirepo-test", "cosign-"+cosignVersion)
	bin := filepath.Join(dir, "cosign")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	t.Logf("building cosign %s through the Go module proxy into %s (minutes, once per machine)", cosignVersion, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "install", "github.com/sigstore/cosign/v3/cmd/cosign@"+cosignVersion)
	cmd.Dir = t.TempDir() // outside this module: go install pkg@version builds cosign's own
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("cosign check skipped: cosign %s could not be installed through the Go module proxy (%v):\n%s", cosignVersion, err, lastLines(string(out), 10))
	}
	return bin
}

// flagValue is the value of a flag in a command line, "" without it.
func flagValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// cosign runs the CLI with its own HOME (no TUF cache or config of the
// user's) and says whether it succeeded, with its output.
func cosign(t *testing.T, bin string, args ...string) (bool, string) {
	t.Helper()
	return cosignIn(t, "", bin, args...)
}

// cosignIn runs cosign in dir.
func cosignIn(t *testing.T, dir, bin string, args ...string) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TUF_ROOT=" + filepath.Join(home, ".sigstore")}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("cosign %v: %v", args, err)
	}
	return err == nil, string(out)
}

// TestCosign_VerifiesWhatCapirepoSigns signs a dist keylessly (in-memory
// Sigstore) and with a key made by cosign generate-key-pair, and an image in
// an in-process registry, then checks each with cosign verify-blob and
// cosign verify, as the docs tell users to; other identities, keys and
// bytes are refused by cosign too.
func TestCosign_VerifiesWhatCapirepoSigns(t *testing.T) {
	bin := cosignBinary(t)
	if ok, out := cosign(t, bin, "version"); !ok || !strings.Contains(out, "GitVersion:    "+cosignVersion) {
		t.Fatalf("cosign version:\n%s", out)
	}
	_, sc, tr := sigstoreFiles(t)
	env := map[string]string{"SIGSTORE_ID_TOKEN": signtest.Token(signID, signIssuer)}

	t.Run("keyless bundle, verify-blob", func(t *testing.T) {
		dist := buildExample(t)
		if code, _, stderr := runCmd(t, env, "sign", dist, "--signing-config", sc, "--trusted-root", tr); code != 0 {
			t.Fatalf("sign: %s", stderr)
		}
		dir := filepath.Join(dist, "infrastructure-example", "v0.1.0")
		for _, f := range []string{"checksums.txt", "provenance.intoto.json"} {
			// The docs' line, with the in-memory instance's root; its Fulcio
			// embeds no SCT.
			args := []string{"verify-blob", "--bundle", filepath.Join(dir, f+".sigstore.json"), "--certificate-identity", signID,
				"--certificate-oidc-issuer", signIssuer, "--trusted-root", tr, "--insecure-ignore-sct", filepath.Join(dir, f)}
			if ok, out := cosign(t, bin, args...); !ok {
				t.Errorf("cosign refused %s:\n%s", f, out)
			}
			other := append([]string{}, args...)
			other[4] = "mallory@example.com"
			if ok, _ := cosign(t, bin, other...); ok {
				t.Errorf("cosign accepted %s for another identity", f)
			}
		}
		md := filepath.Join(dir, "checksums.txt")
		if err := os.WriteFile(md, []byte("0000  metadata.yaml\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if ok, _ := cosign(t, bin, "verify-blob", "--bundle", md+".sigstore.json", "--certificate-identity", signID,
			"--certificate-oidc-issuer", signIssuer, "--trusted-root", tr, "--insecure-ignore-sct", md); ok {
			t.Error("cosign accepted a changed checksums.txt")
		}
	})

	t.Run("cosign's key, verify-blob", func(t *testing.T) {
		keys := t.TempDir()
		gen := exec.Command(bin, "generate-key-pair")
		gen.Dir, gen.Env = keys, []string{"COSIGN_PASSWORD=pw-from-cosign", "HOME=" + keys}
		if out, err := gen.CombinedOutput(); err != nil {
			t.Fatalf("cosign generate-key-pair: %v\n%s", err, out)
		}
		dist := buildExample(t)
		kenv := map[string]string{"COSIGN_PASSWORD": "pw-from-cosign"}
		if code, _, stderr := runCmd(t, kenv, "sign", dist, "--key", filepath.Join(keys, "cosign.key")); code != 0 {
			t.Fatalf("sign: %s", stderr)
		}
		f := filepath.Join(dist, "infrastructure-example", "v0.1.0", "checksums.txt")
		if ok, out := cosign(t, bin, "verify-blob", "--bundle", f+".sigstore.json", "--key", filepath.Join(keys, "cosign.pub"), "--insecure-ignore-tlog=true", f); !ok {
			t.Errorf("cosign refused a bundle of its own key:\n%s", out)
		}
		_, otherPub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte("x")))
		if err != nil {
			t.Fatal(err)
		}
		op := filepath.Join(keys, "other.pub")
		if err := os.WriteFile(op, otherPub, 0o644); err != nil {
			t.Fatal(err)
		}
		if ok, _ := cosign(t, bin, "verify-blob", "--bundle", f+".sigstore.json", "--key", op, "--insecure-ignore-tlog=true", f); ok {
			t.Error("cosign accepted another key")
		}
		// And capirepo verifies what cosign signed with that key.
		sig := filepath.Join(keys, "by-cosign.sigstore.json")
		c := exec.Command(bin, "sign-blob", "--key", filepath.Join(keys, "cosign.key"), "--bundle", sig, "--use-signing-config=false", "--tlog-upload=false", "--yes", f)
		c.Env = []string{"COSIGN_PASSWORD=pw-from-cosign", "HOME=" + keys}
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("cosign sign-blob: %v\n%s", err, out)
		}
		if err := os.Rename(sig, f+".sigstore.json"); err != nil {
			t.Fatal(err)
		}
		// checksums.txt's bundle is cosign's now, the provenance's still
		// capirepo's: both check out.
		if code, _, stderr := runCmd(t, nil, "verify", dist, "--signatures", "--key", filepath.Join(keys, "cosign.pub")); code != 0 {
			t.Errorf("capirepo refused cosign's bundle: %s", stderr)
		}
	})

	// The cosign verify-blob lines of docs/signing.md, as they are, on a
	// dist signed as they say (the identity and issuer they name, or a key),
	// with the in-memory instance's trusted root.
	for _, args := range docCommands(t, "docs/signing.md", "cosign") {
		if args[1] != "verify-blob" {
			continue
		}
		t.Run("docs: "+strings.Join(args, " "), func(t *testing.T) {
			dist := buildExample(t)
			dir := filepath.Join(dist, "infrastructure-example", "v0.1.0")
			extra := []string{"--trusted-root", tr, "--insecure-ignore-sct"}
			var code int
			var stderr string
			switch id, issuer := flagValue(args, "--certificate-identity"), flagValue(args, "--certificate-oidc-issuer"); {
			case flagValue(args, "--key") != "":
				priv, pub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte("pw")))
				if err != nil {
					t.Fatal(err)
				}
				keyFile := filepath.Join(t.TempDir(), "cosign.key")
				if err := os.WriteFile(keyFile, priv, 0o600); err != nil {
					t.Fatal(err)
				}
				code, _, stderr = runCmd(t, map[string]string{"COSIGN_PASSWORD": "pw"}, "sign", dist, "--key", keyFile)
				// The public key beside the files, as a user saves it.
				if err := os.WriteFile(filepath.Join(dir, flagValue(args, "--key")), pub, 0o644); err != nil {
					t.Fatal(err)
				}
				extra = nil
			case id != "" && issuer != "":
				code, _, stderr = runCmd(t, map[string]string{"SIGSTORE_ID_TOKEN": signtest.Token(id, issuer)}, "sign", dist, "--signing-config", sc, "--trusted-root", tr)
			default:
				t.Fatalf("neither a key nor an identity with its issuer: %v", args)
			}
			if code != 0 {
				t.Fatalf("sign: %s", stderr)
			}
			if ok, out := cosignIn(t, dir, bin, append(args[1:], extra...)...); !ok {
				t.Errorf("cosign refused:\n%s", out)
			}
		})
	}

	t.Run("image signature referrer, verify", func(t *testing.T) {
		srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))))
		t.Cleanup(srv.Close)
		host := strings.TrimPrefix(srv.URL, "http://")
		img, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		tag, _ := name.NewTag(host + "/capi/manager:v0.1.0")
		if err := remote.Write(tag, img); err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		ref := host + "/capi/manager@" + d.String()
		dist := buildExample(t)
		if code, _, stderr := runCmd(t, env, "sign", dist, "--image", ref, "--signing-config", sc, "--trusted-root", tr); code != 0 {
			t.Fatalf("sign: %s", stderr)
		}
		args := []string{"verify", "--certificate-identity", signID, "--certificate-oidc-issuer", signIssuer, "--trusted-root", tr,
			"--insecure-ignore-sct", "--allow-http-registry", "--allow-insecure-registry", ref}
		if ok, out := cosign(t, bin, args...); !ok {
			t.Errorf("cosign verify refused the image signature:\n%s", out)
		}
		args[2] = "mallory@example.com"
		if ok, _ := cosign(t, bin, args...); ok {
			t.Error("cosign verify accepted another identity")
		}
	})
}
