package main

import (
	"bytes"
	"context"
	"crypto/elliptic"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/capirepo/capirepo/builder/buildtest"
	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
)

// The hostile inputs of issue 37, each through the command a user runs.

const attackPassword = "attack-test password"

// attackKeys writes a cosign key pair; env holds the private key for
// --key env://COSIGN_PRIVATE_KEY.
func attackKeys(t *testing.T) (env map[string]string, priv []byte, pubFile string) {
	t.Helper()
	priv, pub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte(attackPassword)))
	if err != nil {
		t.Fatal(err)
	}
	pubFile = filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(pubFile, pub, 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"COSIGN_PRIVATE_KEY": string(priv), "COSIGN_PASSWORD": attackPassword}, priv, pubFile
}

func signedExample(t *testing.T) (dist string, env map[string]string, priv []byte, pubFile string) {
	t.Helper()
	dist = buildExample(t)
	env, priv, pubFile = attackKeys(t)
	if code, _, stderr := runCmd(t, env, "sign", dist, "--key", "env://COSIGN_PRIVATE_KEY"); code != 0 {
		t.Fatalf("sign exit %d: %s", code, stderr)
	}
	return dist, env, priv, pubFile
}

// TestAttack_VerifySignaturesRefusesASignedOlderReleaseRenamedNewer: a
// signed v0.1.0 folder renamed v0.1.5 (a rollback) fails verify
// --signatures with exit 1, naming the provenance that says v0.1.0.
func TestAttack_VerifySignaturesRefusesASignedOlderReleaseRenamedNewer(t *testing.T) {
	dist, _, _, pubFile := signedExample(t)
	if code, _, stderr := runCmd(t, nil, "verify", dist, "--signatures", "--key", pubFile); code != 0 {
		t.Fatalf("the release as signed: exit %d: %s", code, stderr)
	}
	label := filepath.Join(dist, "infrastructure-example")
	if err := os.Rename(filepath.Join(label, "v0.1.0"), filepath.Join(label, "v0.1.5")); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, nil, "verify", dist, "--signatures", "--key", pubFile)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	mustContain(t, "stderr", stderr, "infrastructure-example/v0.1.5/provenance.intoto.json: attests version v0.1.0, not v0.1.5")
}

// TestAttack_SignSignsTheProvenanceItFindsAsItIs: sign on a release that
// holds a provenance (subjects in another order, a repository named)
// leaves its bytes alone, signs them and says so; the result verifies.
func TestAttack_SignSignsTheProvenanceItFindsAsItIs(t *testing.T) {
	dist := buildExample(t)
	env, _, pubFile := attackKeys(t)
	dir := filepath.Join(dist, "infrastructure-example", "v0.1.0")
	rel, err := release.Load(dist, "")
	if err != nil {
		t.Fatal(err)
	}
	listed := rel.Providers[0].Listed()
	slices.Reverse(listed)
	pf, err := publish.Provenance(listed, publish.ProvenanceSource{Repository: "https://github.com/acme/cluster-api-provider-example", Version: "v0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, pf.Name), pf.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, env, "sign", dist, "--key", "env://COSIGN_PRIVATE_KEY")
	if code != 0 {
		t.Fatalf("sign exit %d: %s", code, stderr)
	}
	mustContain(t, "stdout", stdout, "infrastructure-example/v0.1.0/provenance.intoto.json\tprovenance.intoto.json.sigstore.json", "(provenance signed as found)")
	got, err := os.ReadFile(filepath.Join(dir, pf.Name))
	if err != nil || !bytes.Equal(got, pf.Data) {
		t.Fatalf("the provenance was rewritten (%v):\n%s\nwas:\n%s", err, got, pf.Data)
	}
	if code, _, stderr := runCmd(t, nil, "verify", dist, "--signatures", "--key", pubFile); code != 0 {
		t.Errorf("verify exit %d: %s", code, stderr)
	}

	// Without one, sign writes it and says so.
	fresh := buildExample(t)
	code, stdout, stderr = runCmd(t, env, "sign", fresh, "--key", "env://COSIGN_PRIVATE_KEY")
	if code != 0 {
		t.Fatalf("sign exit %d: %s", code, stderr)
	}
	mustContain(t, "stdout", stdout, "(provenance written here: the release held none)")
}

// TestAttack_VerifySignaturesRefusesANameListedTwice: a signed
// checksums.txt listing metadata.yaml twice (the file matches the second
// line) fails with exit 1, naming the file and the name.
func TestAttack_VerifySignaturesRefusesANameListedTwice(t *testing.T) {
	dist, _, priv, pubFile := signedExample(t)
	dir := filepath.Join(dist, "infrastructure-example", "v0.1.0")
	sumsFile := filepath.Join(dir, release.ChecksumsFile)
	sums, err := os.ReadFile(sumsFile)
	if err != nil {
		t.Fatal(err)
	}
	dup := slices.Concat(release.Checksums([]release.File{{Name: "metadata.yaml", Data: []byte("evil")}}), sums)
	key, err := sign.LoadPrivateKey(priv, []byte(attackPassword))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sign.NewKeySigner(key, sign.Services{})
	if err != nil {
		t.Fatal(err)
	}
	sig, err := s.SignBlob(context.Background(), dup)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sumsFile, dup, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sumsFile+release.BundleSuffix, sig.Bundle, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, nil, "verify", dist, "--signatures", "--key", pubFile)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	mustContain(t, "stderr", stderr, "checksums.txt: metadata.yaml is listed twice (lines 1 and ")
}

// TestAttack_DiffRefusesAFileThatIsNotARegularFile: a release folder whose
// components file is a symlink out of it, or whose metadata.yaml is a
// FIFO, fails diff with exit 1 and one error naming the file and why,
// instead of reading as a release that no longer ships its CRDs.
func TestAttack_DiffRefusesAFileThatIsNotARegularFile(t *testing.T) {
	newDist := buildtest.Dist(t, buildtest.MinimalRelease(t, "v0.2.0"))
	for _, tc := range []struct {
		name, file string
		make       func(path string) error
		want       string
	}{
		{"a symlink out of the folder", "infrastructure-components.yaml", func(p string) error {
			outside := filepath.Join(t.TempDir(), "elsewhere.yaml")
			data, err := os.ReadFile(p)
			if err == nil {
				err = os.WriteFile(outside, data, 0o644)
			}
			if err == nil {
				err = os.Remove(p)
			}
			if err == nil {
				err = os.Symlink(outside, p)
			}
			return err
		}, "infrastructure-components.yaml is a symlink (to "},
		{"a FIFO", "metadata.yaml", func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return syscall.Mkfifo(p, 0o644)
		}, "metadata.yaml is a named pipe (FIFO), not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oldDist := buildtest.Dist(t, buildtest.MinimalRelease(t, "v0.1.0"))
			matches, _ := filepath.Glob(filepath.Join(oldDist, "*", "v0.1.0", tc.file))
			if len(matches) != 1 {
				t.Fatalf("no %s in %s", tc.file, oldDist)
			}
			if err := tc.make(matches[0]); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runCmd(t, nil, "diff", oldDist, newDist)
			if code != 1 {
				t.Fatalf("exit %d, want 1: %s", code, stderr)
			}
			mustContain(t, "stderr", stderr, matches[0], tc.want)
			if strings.Contains(stderr, "no longer") {
				t.Errorf("the file was skipped and its content reported missing:\n%s", stderr)
			}
		})
	}
}

// TestAttack_DiffAgainstAGitHubReleaseThatStreamsWithoutEnd: diff reads the
// release before from a GitHub release whose asset download never ends (a
// fake GitHub on 127.0.0.1): it stops at the size GitHub lists for the
// asset, within seconds, exit 1, naming the asset; nothing says it waits
// for an answer while data arrives.
func TestAttack_DiffAgainstAGitHubReleaseThatStreamsWithoutEnd(t *testing.T) {
	srv := fakegh.New(t)
	srv.AddRepo("acme", "provider", false)
	flat, err := buildtest.MinimalRelease(t, "v0.1.0").Flat()
	if err != nil {
		t.Fatal(err)
	}
	var assets []fakegh.Asset
	for _, f := range flat {
		assets = append(assets, fakegh.Asset{Name: f.Name, Data: f.Data})
	}
	srv.AddRelease("acme", "provider", fakegh.Release{Tag: "v0.1.0", Assets: assets})
	newDist := buildtest.Dist(t, buildtest.MinimalRelease(t, "v0.2.0"))
	srv.Inject(fakegh.RouteGetAsset, 1, fakegh.Fault{Endless: true})
	start := time.Now()
	code, _, stderr := runCmd(t, map[string]string{"GITHUB_API_URL": srv.APIURL()}, "diff", "github://acme/provider", newDist)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	mustContain(t, "stderr", stderr, "read infrastructure-", "yaml: the server sends more than the ", "bytes it lists for it: stopped reading")
	if strings.Contains(stderr, "without an answer") {
		t.Errorf("said it waits while data arrives:\n%s", stderr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
	if n := srv.Calls(fakegh.RouteGetAsset); n != 1 {
		t.Errorf("%d downloads, want 1: a reply cut off is not retried", n)
	}
}
