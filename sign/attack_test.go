package sign_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/sign/signtest"
)

// oneProvider is infrastructure-acme at version with two files.
func oneProvider(t *testing.T, version string) *release.Release {
	t.Helper()
	id, err := provider.ParseLabel("infrastructure-acme")
	if err != nil {
		t.Fatal(err)
	}
	p := &release.Provider{ID: id, Version: version, ComponentsFile: "infrastructure-components.yaml"}
	for n, d := range map[string]string{"infrastructure-components.yaml": "kind: Deployment # " + version, "metadata.yaml": "releaseSeries: []"} {
		if err := p.Add(n, []byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	return &release.Release{Version: version, Providers: []*release.Provider{p}}
}

func verifier(t *testing.T, ss *signtest.Sigstore) *sign.Verifier {
	t.Helper()
	v, err := sign.NewVerifier(sign.VerifyOptions{Identity: identity, Issuer: signtest.GitHubIssuer, TrustedRoot: ss.TrustedRoot(t)})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestVerifyDir_RefusesASignedOlderReleaseRenamedNewer: a signed v0.1.0
// folder renamed v0.1.5 (a rollback), or moved under another provider's
// label, is refused by the signed provenance; the folder as signed passes.
func TestVerifyDir_RefusesASignedOlderReleaseRenamedNewer(t *testing.T) {
	ss := signtest.New(t)
	rel := oneProvider(t, "v0.1.0")
	if _, err := sign.SignRelease(context.Background(), keylessSigner(t, ss, identity), rel, sign.ReleaseOptions{Provenance: true}); err != nil {
		t.Fatal(err)
	}
	v := verifier(t, ss)
	for _, tc := range []struct {
		name, dir, wantErr string
	}{
		{"as signed", "infrastructure-acme/v0.1.0", ""},
		{"renamed to a newer version", "infrastructure-acme/v0.1.5",
			"infrastructure-acme/v0.1.5/provenance.intoto.json: attests version v0.1.0, not v0.1.5: these are the files of another release"},
		{"moved to another provider", "infrastructure-other/v0.1.0",
			"infrastructure-other/v0.1.0/provenance.intoto.json: attests the files of infrastructure-acme, not of infrastructure-other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := release.Write(root, rel); err != nil {
				t.Fatal(err)
			}
			if tc.dir != "infrastructure-acme/v0.1.0" {
				if err := os.MkdirAll(filepath.Join(root, filepath.Dir(tc.dir)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(filepath.Join(root, "infrastructure-acme", "v0.1.0"), filepath.Join(root, tc.dir)); err != nil {
					t.Fatal(err)
				}
			}
			_, err := sign.VerifyDir(v, root, "")
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatal("accepted")
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("err = %v\nwant %q", err, tc.wantErr)
			}
		})
	}
}

// TestVerifyDir_RefusesARenamedReleaseWithoutItsProvenance: a signed
// v0.1.0 renamed v0.2.0 with its provenance and the provenance's bundle
// deleted leaves nothing signed that names a version (checksums.txt names
// files only), so it is refused unless the verifier is told to accept a
// release without a provenance; then it passes, as nothing can tell it
// from v0.2.0.
func TestVerifyDir_RefusesARenamedReleaseWithoutItsProvenance(t *testing.T) {
	ss := signtest.New(t)
	rel := oneProvider(t, "v0.1.0")
	if _, err := sign.SignRelease(context.Background(), keylessSigner(t, ss, identity), rel, sign.ReleaseOptions{Provenance: true}); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := release.Write(root, rel); err != nil {
		t.Fatal(err)
	}
	old, renamed := filepath.Join(root, "infrastructure-acme", "v0.1.0"), filepath.Join(root, "infrastructure-acme", "v0.2.0")
	if err := os.Rename(old, renamed); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{release.ProvenanceFile, sign.BundleName(release.ProvenanceFile)} {
		if err := os.Remove(filepath.Join(renamed, name)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := sign.VerifyDir(verifier(t, ss), root, "")
	want := "infrastructure-acme/v0.2.0: no provenance.intoto.json"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--allow-missing-provenance") {
		t.Fatalf("err = %v\nwant it to contain %q and name --allow-missing-provenance", err, want)
	}
	allowing, err := sign.NewVerifier(sign.VerifyOptions{Identity: identity, Issuer: signtest.GitHubIssuer, TrustedRoot: ss.TrustedRoot(t), AllowMissingProvenance: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.VerifyDir(allowing, root, ""); err != nil {
		t.Errorf("refused though a missing provenance is allowed: %v", err)
	}
}

// TestSignRelease_SignsTheProvenanceItFindsAsItIs: a release that holds a
// provenance (a publisher's, subjects in its own order, naming the
// repository) gets it signed byte for byte, not made again; one that holds
// none gets one, and the result says which.
func TestSignRelease_SignsTheProvenanceItFindsAsItIs(t *testing.T) {
	ss := signtest.New(t)
	rel := oneProvider(t, "v0.1.0")
	p := rel.Providers[0]
	listed := p.Listed()
	slices.Reverse(listed)
	found, err := publish.Provenance(listed, publish.ProvenanceSource{Repository: "https://github.com/acme/cluster-api-provider-acme", Version: "v0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Attach(found.Name, found.Data); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	signed, err := sign.SignRelease(context.Background(), keylessSigner(t, ss, identity), rel, sign.ReleaseOptions{Provenance: true, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := p.AttachedFile(release.ProvenanceFile)
	if !bytes.Equal(got.Data, found.Data) {
		t.Errorf("the provenance was rewritten:\n%s\nwas:\n%s", got.Data, found.Data)
	}
	i := slices.IndexFunc(signed, func(s sign.Signed) bool { return s.File == "infrastructure-acme/v0.1.0/provenance.intoto.json" })
	if i < 0 || signed[i].Made || signed[i].Note() != " (provenance signed as found)" {
		t.Errorf("signed = %+v", signed)
	}
	if !strings.Contains(log.String(), "signing infrastructure-acme/v0.1.0/provenance.intoto.json as found") {
		t.Errorf("log:\n%s", log.String())
	}
	if _, err := sign.VerifyFiles(verifier(t, ss), "infrastructure-acme/v0.1.0", p.Assets(), sign.VerifyFilesOptions{Version: "v0.1.0"}); err != nil {
		t.Errorf("the release signed as found does not verify: %v", err)
	}

	fresh := oneProvider(t, "v0.1.0")
	signed, err = sign.SignRelease(context.Background(), keylessSigner(t, ss, identity), fresh, sign.ReleaseOptions{Provenance: true})
	if err != nil {
		t.Fatal(err)
	}
	i = slices.IndexFunc(signed, func(s sign.Signed) bool { return s.File == "infrastructure-acme/v0.1.0/provenance.intoto.json" })
	if i < 0 || !signed[i].Made || signed[i].Note() != " (provenance written here: the release held none)" {
		t.Errorf("signed = %+v", signed)
	}
}

// TestSignRelease_RefusesAProvenanceThatDoesNotAttestTheRelease: a
// provenance found that names other bytes or another version is not
// signed (and not replaced): the error names it.
func TestSignRelease_RefusesAProvenanceThatDoesNotAttestTheRelease(t *testing.T) {
	ss := signtest.New(t)
	for _, tc := range []struct {
		name    string
		version string
		edit    func([]release.File) []release.File
		wantErr string
	}{
		{"another version", "v0.0.9", func(f []release.File) []release.File { return f },
			"infrastructure-acme/v0.1.0/provenance.intoto.json: attests version v0.0.9, not v0.1.0"},
		{"other bytes", "v0.1.0", func(f []release.File) []release.File {
			f[0].Data = []byte("kind: Deployment # evil")
			return f
		}, "infrastructure-acme/v0.1.0/provenance.intoto.json: names infrastructure-components.yaml with sha256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rel := oneProvider(t, "v0.1.0")
			p := rel.Providers[0]
			pf, err := publish.Provenance(tc.edit(p.Listed()), publish.ProvenanceSource{Version: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Attach(pf.Name, pf.Data); err != nil {
				t.Fatal(err)
			}
			_, err = sign.SignRelease(context.Background(), keylessSigner(t, ss, identity), rel, sign.ReleaseOptions{Provenance: true})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v\nwant %q", err, tc.wantErr)
			}
			if got, _ := p.AttachedFile(pf.Name); !bytes.Equal(got.Data, pf.Data) {
				t.Error("the provenance was replaced")
			}
		})
	}
}

// TestVerifyFiles_RefusesANameListedTwice: a signed checksums.txt that
// lists a file twice (the file matches the second line, sha256sum -c fails
// on the first) is refused, naming the file and the name.
func TestVerifyFiles_RefusesANameListedTwice(t *testing.T) {
	ss := signtest.New(t)
	rel := oneProvider(t, "v0.1.0")
	files := rel.Providers[0].Files
	meta, _ := rel.Providers[0].File("metadata.yaml")
	evil := release.File{Name: "metadata.yaml", Data: []byte("releaseSeries: [evil]")}
	sums := slices.Concat(release.Checksums([]release.File{evil}), release.Checksums(files))
	sig, err := keylessSigner(t, ss, identity).SignBlob(context.Background(), sums)
	if err != nil {
		t.Fatal(err)
	}
	all := slices.Concat(files, []release.File{{Name: release.ChecksumsFile, Data: sums}, {Name: sign.BundleName(release.ChecksumsFile), Data: sig.Bundle}})
	_, err = sign.VerifyFiles(verifier(t, ss), "infrastructure-acme/v0.1.0", all, sign.VerifyFilesOptions{})
	want := "infrastructure-acme/v0.1.0/checksums.txt: metadata.yaml is listed twice (lines 1 and 3)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v\nwant %q (metadata.yaml is %q)", err, want, meta.Data)
	}
}
