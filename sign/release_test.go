package sign_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/sign/signtest"
)

func twoProviders(t *testing.T) *release.Release {
	t.Helper()
	mk := func(label, components string) *release.Provider {
		id, err := provider.ParseLabel(label)
		if err != nil {
			t.Fatal(err)
		}
		p := &release.Provider{ID: id, Version: "v1.0.0", ComponentsFile: components}
		for n, d := range map[string]string{components: "kind: Deployment # " + label, "metadata.yaml": "releaseSeries: []"} {
			if err := p.Add(n, []byte(d)); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	return &release.Release{Version: "v1.0.0", Providers: []*release.Provider{
		mk("cluster-api", "core-components.yaml"), mk("bootstrap-kubeadm", "bootstrap-components.yaml"),
	}}
}

func TestSignRelease_KeylessEveryProviderAndTheFlatSet(t *testing.T) {
	ss := signtest.New(t)
	rel := twoProviders(t)
	var log bytes.Buffer
	signed, err := sign.SignRelease(context.Background(), keylessSigner(t, ss, identity), rel,
		sign.ReleaseOptions{Provenance: true, Source: "https://github.com/acme/cluster-api", Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, s := range signed {
		files = append(files, s.File)
	}
	want := []string{
		"cluster-api/v1.0.0/checksums.txt", "cluster-api/v1.0.0/provenance.intoto.json",
		"bootstrap-kubeadm/v1.0.0/checksums.txt", "bootstrap-kubeadm/v1.0.0/provenance.intoto.json",
		"flat/v1.0.0/checksums.txt", "flat/v1.0.0/provenance.intoto.json",
	}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("signed (-want +got):\n%s", diff)
	}
	if ss.Entries() != 6 {
		t.Errorf("%d log entries for 6 signatures", ss.Entries())
	}
	// Never silent: who signed, and where it was logged.
	for _, w := range []string{"signed cluster-api/v1.0.0/checksums.txt as " + identity + " (issuer " + signtest.GitHubIssuer + "); transparency log entry 10",
		"in " + ss.RekorURL + " at 20"} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, log.String())
		}
	}
	names := func(fs []release.File) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Name)
		}
		return out
	}
	wantAttached := []string{"checksums.txt.sigstore.json", "provenance.intoto.json", "provenance.intoto.json.sigstore.json"}
	for _, p := range rel.Providers {
		if diff := cmp.Diff(wantAttached, names(p.Attached)); diff != "" {
			t.Errorf("%s attached (-want +got):\n%s", p.Label(), diff)
		}
	}
	if diff := cmp.Diff(wantAttached, names(rel.Attached)); diff != "" {
		t.Errorf("flat attached (-want +got):\n%s", diff)
	}

	v, err := sign.NewVerifier(sign.VerifyOptions{Identity: identity, Issuer: signtest.GitHubIssuer, TrustedRoot: ss.TrustedRoot(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rel.Providers {
		got, err := sign.VerifyFiles(v, p.Label(), p.Assets(), sign.VerifyFilesOptions{})
		if err != nil {
			t.Fatalf("%s: %v", p.Label(), err)
		}
		if got.Files != 2 || len(got.Signatures) != 2 {
			t.Errorf("%s: %d files, %d signatures", p.Label(), got.Files, len(got.Signatures))
		}
	}
	flat, err := rel.Flat()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.VerifyFiles(v, "flat", flat, sign.VerifyFilesOptions{}); err != nil {
		t.Errorf("flat set: %v", err)
	}
}

// TestVerifyFiles_Tampering: every way the files can stop matching what
// was signed is refused, naming the file.
func TestVerifyFiles_Tampering(t *testing.T) {
	ss := signtest.New(t)
	rel := twoProviders(t)
	rel.Providers = rel.Providers[:1]
	if _, err := sign.SignRelease(context.Background(), keylessSigner(t, ss, identity), rel, sign.ReleaseOptions{Provenance: true}); err != nil {
		t.Fatal(err)
	}
	good := rel.Providers[0].Assets()
	// The same files signed by someone else.
	otherRel := twoProviders(t)
	otherRel.Providers = otherRel.Providers[:1]
	if _, err := sign.SignRelease(context.Background(), keylessSigner(t, ss, "mallory@example.com"), otherRel, sign.ReleaseOptions{}); err != nil {
		t.Fatal(err)
	}
	otherBundle, _ := otherRel.Providers[0].AttachedFile("checksums.txt.sigstore.json")

	get := func(fs []release.File, name string) []byte {
		i := slices.IndexFunc(fs, func(f release.File) bool { return f.Name == name })
		return fs[i].Data
	}
	set := func(fs []release.File, name string, data []byte) []release.File {
		fs = slices.Clone(fs)
		i := slices.IndexFunc(fs, func(f release.File) bool { return f.Name == name })
		if i < 0 {
			return append(fs, release.File{Name: name, Data: data})
		}
		fs[i] = release.File{Name: name, Data: data}
		return fs
	}
	drop := func(fs []release.File, name string) []release.File {
		return slices.DeleteFunc(slices.Clone(fs), func(f release.File) bool { return f.Name == name })
	}
	tampered := set(good, "metadata.yaml", []byte("releaseSeries: [evil]"))
	// A checksums.txt made again for the tampered file: consistent, unsigned.
	var regen []release.File
	for _, f := range tampered {
		if f.Name != release.ChecksumsFile && !release.IsAttached(f.Name) {
			regen = append(regen, f)
		}
	}
	swapped := set(tampered, release.ChecksumsFile, release.Checksums(regen))

	v, err := sign.NewVerifier(sign.VerifyOptions{Identity: identity, Issuer: signtest.GitHubIssuer, TrustedRoot: ss.TrustedRoot(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		files   []release.File
		partial bool
		wantErr string // "" = accepted
	}{
		{"as signed", good, false, ""},
		{"a tampered asset", tampered, false, "cluster-api/metadata.yaml has sha256"},
		{"a swapped checksums.txt", swapped, false, "cluster-api/checksums.txt.sigstore.json does not sign cluster-api/checksums.txt for identity " + identity},
		{"a bundle for another identity", set(good, "checksums.txt.sigstore.json", otherBundle.Data), false,
			"cluster-api/checksums.txt.sigstore.json does not sign cluster-api/checksums.txt"},
		{"a signature of another digest", set(good, "checksums.txt.sigstore.json", get(good, "provenance.intoto.json.sigstore.json")), false,
			"cluster-api/checksums.txt.sigstore.json does not sign cluster-api/checksums.txt"},
		{"an unsigned checksums.txt", drop(good, "checksums.txt.sigstore.json"), false, "cluster-api/checksums.txt is not signed"},
		{"an unsigned provenance", drop(good, "provenance.intoto.json.sigstore.json"), false, "cluster-api/provenance.intoto.json is not signed"},
		{"a file added", set(good, "cluster-template-evil.yaml", []byte("x")), false, "cluster-api/cluster-template-evil.yaml is not listed in the signed checksums.txt"},
		{"a file missing", drop(good, "core-components.yaml"), false, "cluster-api/core-components.yaml is listed in the signed checksums.txt and missing"},
		{"a file missing from a mirror", drop(good, "core-components.yaml"), true, ""},
		{"no checksums.txt", drop(good, release.ChecksumsFile), false, "cluster-api: nothing is signed: no checksums.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sign.VerifyFiles(v, "cluster-api", tc.files, sign.VerifyFilesOptions{Partial: tc.partial})
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
