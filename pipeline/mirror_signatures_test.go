package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/sign/signtest"
)

// signedUpstream puts the example's release, with an SBOM, signed
// keylessly as signIdentity, on a fake GitHub (the assets capirepo's GitHub
// publisher uploads, changed by tamper when set), and writes a clusterctl
// config that points at it.
func signedUpstream(t *testing.T, ss *signtest.Sigstore, tamper func([]release.File)) (gh *fakegh.Server, config string) {
	t.Helper()
	gh = fakegh.New(t)
	repo := fmt.Sprintf("provider-signed-%d", mirrorRuns.Add(1))
	gh.AddRepo("acme", repo, false)
	id, _ := provider.ParseLabel("infrastructure-example")
	p := &release.Provider{ID: id, Version: "v0.3.0", ComponentsFile: "infrastructure-components.yaml"}
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(goldenDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		switch e.Name() {
		case release.ChecksumsFile:
			continue
		case "metadata.yaml":
			data = metadataFor("0.3=v1beta2")
		}
		if err := p.Add(e.Name(), data); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Add("manager-linux-amd64.cdx.json", []byte(`{"bomFormat":"CycloneDX"}`)); err != nil {
		t.Fatal(err)
	}
	rel := &release.Release{Version: "v0.3.0", Providers: []*release.Provider{p}}
	if _, err := sign.SignRelease(context.Background(), keyless(t, ss), rel, sign.ReleaseOptions{Provenance: true}); err != nil {
		t.Fatal(err)
	}
	flat, err := rel.Flat()
	if err != nil {
		t.Fatal(err)
	}
	if tamper != nil {
		tamper(flat)
	}
	var assets []fakegh.Asset
	for _, f := range flat {
		assets = append(assets, fakegh.Asset{Name: f.Name, Data: f.Data})
	}
	gh.AddRelease("acme", repo, fakegh.Release{Tag: "v0.3.0", Assets: assets})
	config = filepath.Join(t.TempDir(), "clusterctl.yaml")
	cfg := fmt.Sprintf("providers:\n- name: example\n  type: InfrastructureProvider\n  url: https://github.com/acme/%s/releases/latest/infrastructure-components.yaml\n", repo)
	if err := os.WriteFile(config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return gh, config
}

// TestMirror_SignaturesAreCopiedAndCanBeRequired: the mirror copies the
// signed checksums.txt, its bundle, the provenance and the SBOM with the
// files clusterctl reads, so the mirror checks out as upstream does; with a
// verifier, a version whose upstream signatures do not check out (another
// identity, a file changed after signing) is refused before anything is
// written, naming the file.
func TestMirror_SignaturesAreCopiedAndCanBeRequired(t *testing.T) {
	ss := signtest.New(t)
	gh, config := signedUpstream(t, ss, nil)
	verifier := func(id string) *sign.Verifier {
		v, err := sign.NewVerifier(sign.VerifyOptions{Identity: id, Issuer: signtest.GitHubIssuer, TrustedRoot: ss.TrustedRoot(t)})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	mirrorTo := func(gh *fakegh.Server, config, root string, v *sign.Verifier) (*pipeline.MirrorSummary, string, error) {
		loc, err := targets.Parse("file://" + root)
		if err != nil {
			t.Fatal(err)
		}
		var logb bytes.Buffer
		sum, err := pipeline.Mirror(context.Background(), pipeline.MirrorOptions{Requests: []string{"infrastructure-example:v0.3.0"},
			Clusterctl: clusterctlConfig(t, config), To: loc, RequireSignatures: v, Log: &logb,
			Sources: targets.Options{GitHub: github.Options{APIURL: gh.APIURL()}, HTTPClient: &http.Client{}, Retry: &publish.Retry{Attempts: 1}}})
		return sum, logb.String(), err
	}

	root := filepath.Join(t.TempDir(), "mirror")
	_, logged, err := mirrorTo(gh, config, root, verifier(signIdentity))
	if err != nil {
		t.Fatalf("%v\n%s", err, logged)
	}
	if !strings.Contains(logged, "infrastructure-example v0.3.0: 8 files match the checksums.txt signed as "+signIdentity) {
		t.Errorf("log:\n%s", logged)
	}
	dir := filepath.Join(root, "infrastructure-example", "v0.3.0")
	files := readFolder(t, dir)
	for _, n := range []string{"checksums.txt", "checksums.txt.sigstore.json", "provenance.intoto.json", "provenance.intoto.json.sigstore.json",
		"manager-linux-amd64.cdx.json", "metadata.yaml", "infrastructure-components.yaml"} {
		if fileData(files, n) == nil {
			t.Errorf("the mirror lacks %s", n)
		}
	}
	if _, err := sign.VerifyFiles(verifier(signIdentity), "mirror", files, sign.VerifyFilesOptions{Partial: true}); err != nil {
		t.Errorf("the mirror does not check out: %v", err)
	}
	// Again: all there, nothing written.
	sum, logged, err := mirrorTo(gh, config, root, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, logged)
	}
	if up, _ := written(sum); up != 0 {
		t.Errorf("a second mirror wrote %d files", up)
	}

	for _, tc := range []struct {
		name    string
		v       *sign.Verifier
		tamper  bool
		wantErr string
	}{
		{"another identity", verifier("mallory@example.com"), false, "infrastructure-example/v0.3.0/checksums.txt.sigstore.json does not sign infrastructure-example/v0.3.0/checksums.txt"},
		{"a file changed after signing", verifier(signIdentity), true, "infrastructure-example/v0.3.0/metadata.yaml has sha256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gh, config := gh, config
			if tc.tamper {
				gh, config = signedUpstream(t, ss, func(files []release.File) {
					for i, f := range files {
						if f.Name == "metadata.yaml" {
							files[i].Data = metadataFor("0.3=v1beta2", "0.4=v1beta2")
						}
					}
				})
			}
			other := filepath.Join(t.TempDir(), "mirror")
			_, logged, err := mirrorTo(gh, config, other, tc.v)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v\nwant %q\n%s", err, tc.wantErr, logged)
			}
			if _, err := os.Stat(other); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("something was written: %v", err)
			}
		})
	}
}

// TestMirror_ImageReferrersAreCopied: an image's signature and SBOM
// referrers go with it to the mirror's registry, under the same digest.
func TestMirror_ImageReferrersAreCopied(t *testing.T) {
	ctx := context.Background()
	srcHost := strings.TrimPrefix(newReferrersRegistry(t), "http://")
	dst := newRegistry(t)
	img := srcHost + "/capirepo/capi-example-controller:v0.2.1"
	d := pushIndex(t, img)
	ref, _ := name.NewDigest(srcHost + "/capirepo/capi-example-controller@" + d.String())
	ss := signtest.New(t)
	if _, err := sign.SignImage(ctx, keyless(t, ss), ref, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sign.Attach(ctx, ref, sign.SBOMArtifactType, []byte(`{"bomFormat":"CycloneDX"}`), nil, time.Time{}); err != nil {
		t.Fatal(err)
	}
	u := newUpstream(t, map[string]string{"example": img})
	var logb bytes.Buffer
	o := u.options(t, "file://"+t.TempDir(), &logb, "infrastructure-example:v0.2.1")
	o.CertManager, o.Images = false, dst+"/mirror"
	sum, err := pipeline.Mirror(ctx, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, logb.String())
	}
	if len(sum.Images) != 1 || sum.Images[0].Referrers != 2 {
		t.Fatalf("images %+v", sum.Images)
	}
	copyRef, _ := name.NewDigest(dst + "/mirror/infrastructure-example/capi-example-controller@" + d.String())
	v, err := sign.NewVerifier(sign.VerifyOptions{Identity: signIdentity, Issuer: signtest.GitHubIssuer, TrustedRoot: ss.TrustedRoot(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.VerifyImage(ctx, v, copyRef); err != nil {
		t.Errorf("the copy's signature: %v", err)
	}
	if sboms, err := sign.Referrers(ctx, copyRef, sign.SBOMArtifactType); err != nil || len(sboms) != 1 {
		t.Errorf("the copy's SBOMs: %v, %v", sboms, err)
	}
}

func newReferrersRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return srv.URL
}
