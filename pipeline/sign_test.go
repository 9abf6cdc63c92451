package pipeline_test

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/capirepo/capirepo/image"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish/oci"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/sign/signtest"
)

const signIdentity = "https://github.com/example/cluster-api-provider-example/.github/workflows/release.yaml@refs/tags/v0.1.0"

func keyless(t *testing.T, ss *signtest.Sigstore) *sign.Signer {
	t.Helper()
	return ss.Signer(t, signIdentity, signtest.GitHubIssuer)
}

// TestRun_SignPublishesBundlesSBOMsAndReferrers releases the example with
// its manager image, signed keylessly against the in-memory Sigstore, to a
// folder and to a registry: the bundles are written into dist beside the
// files and published with them, the SBOMs are release files listed in
// checksums.txt, the image and the OCI artifact get signature referrers and
// the image its SBOM. Everything checks out for the identity; a second run,
// which signs again, publishes nothing new.
func TestRun_SignPublishesBundlesSBOMsAndReferrers(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	ss := signtest.New(t)
	root := filepath.Join(t.TempDir(), "repo")
	run := func(logged *bytes.Buffer) *pipeline.ReleaseSummary {
		t.Helper()
		o := exampleRun(t, logged)
		o.Build.Image, o.Build.ImagePush, o.Build.BaseImage = host+"/example/manager", true, image.NoBase
		o.Build.Platforms, o.Build.SourceDateEpoch = []string{"linux/amd64"}, "1700000000"
		o.Targets = locations(t, "file://"+root, "oci://"+host+"/capi")
		o.TargetOptions.OCI = oci.Options{PlainHTTP: true}
		o.Sign = &pipeline.SignOptions{Signer: keyless(t, ss), Provenance: true, Source: "https://github.com/example/cluster-api-provider-example"}
		sum, err := pipeline.Release(context.Background(), o)
		if err != nil {
			t.Fatalf("run: %v\n%s", err, logged.String())
		}
		want := "build=ok\nlint=ok\nupgrade=skipped\nimages=skipped\nwrite=ok\nverify dist=ok\nsign=ok\ncheck targets=ok\npublish file://" + root + "=ok\nverify file://" + root + "=ok\n" +
			"publish oci://" + host + "/capi=ok\nverify oci://" + host + "/capi=ok\n"
		if diff := cmp.Diff(want, statuses(sum)); diff != "" {
			t.Errorf("steps (-want +got):\n%s", diff)
		}
		return sum
	}
	var logged bytes.Buffer
	sum := run(&logged)
	for _, w := range []string{
		"signed infrastructure-example/v0.1.0/checksums.txt as " + signIdentity + " (issuer " + signtest.GitHubIssuer + "); transparency log entry ",
		"signed infrastructure-example/v0.1.0/provenance.intoto.json as ",
		"signed " + host + "/example/manager@sha256:",
		"signed " + host + "/capi/infrastructure-example@sha256:",
		"attached manager-image.cdx.json to " + host + "/example/manager@sha256:",
	} {
		if !strings.Contains(logged.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, logged.String())
		}
	}
	if d := stepNamed(t, sum, "sign").Detail; !strings.HasPrefix(d, "2 bundles as "+signIdentity) || !strings.Contains(d, "; image "+host+"/example/manager@sha256:") {
		t.Errorf("sign step detail %q", d)
	}
	if sum.Signed == nil || len(sum.Signed.Files) != 2 || len(sum.Signed.Images) != 2 {
		t.Errorf("summary of signing %+v", sum.Signed)
	}

	// What dist and the folder hold, and that it checks out.
	v, err := sign.NewVerifier(sign.VerifyOptions{Identity: signIdentity, Issuer: signtest.GitHubIssuer, TrustedRoot: ss.TrustedRoot(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(sum.Artifacts.Binaries[0].Path, "../../infrastructure-example/v0.1.0"), filepath.Join(root, "infrastructure-example/v0.1.0")} {
		files := readFolder(t, dir)
		var names []string
		for _, f := range files {
			names = append(names, f.Name)
		}
		for _, n := range []string{"checksums.txt.sigstore.json", "provenance.intoto.json", "provenance.intoto.json.sigstore.json",
			"manager-linux-amd64.cdx.json", "manager-image.cdx.json"} {
			if !strings.Contains(strings.Join(names, " "), n) {
				t.Errorf("%s lacks %s: %v", dir, n, names)
			}
		}
		if sums := string(fileData(files, release.ChecksumsFile)); !strings.Contains(sums, "  manager-image.cdx.json\n") || strings.Contains(sums, "sigstore") {
			t.Errorf("%s: checksums.txt:\n%s", dir, sums)
		}
		if _, err := sign.VerifyFiles(v, dir, files, sign.VerifyFilesOptions{}); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
	img, err := name.NewDigest(host + "/example/manager@" + sum.Artifacts.Image.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.VerifyImage(context.Background(), v, img); err != nil {
		t.Errorf("image: %v", err)
	}
	if sboms, err := sign.Referrers(context.Background(), img, sign.SBOMArtifactType); err != nil || len(sboms) != 1 ||
		!bytes.Equal(sboms[0].Data, fileData(readFolder(t, filepath.Join(root, "infrastructure-example/v0.1.0")), sign.ImageSBOMFile)) {
		t.Errorf("image SBOM referrers: %d, %v", len(sboms), err)
	}
	artifact, err := name.NewDigest(host + "/capi/infrastructure-example@" + sum.Published[1].Digests["http://"+host+"/capi/infrastructure-example:v0.1.0"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.VerifyImage(context.Background(), v, artifact); err != nil {
		t.Errorf("OCI artifact: %v", err)
	}

	// Again, signed anew: the published signatures are kept.
	entries := ss.Entries()
	sum = run(&bytes.Buffer{})
	if p := sum.Published[0]; len(p.Uploaded)+len(p.Replaced) != 0 {
		t.Errorf("the folder was written again: %+v", p)
	}
	if refs, _ := sign.Referrers(context.Background(), img, sign.BundleMediaType); len(refs) != 1 {
		t.Errorf("%d image signatures after two runs", len(refs))
	}
	if n := ss.Entries() - entries; n != 2 {
		t.Errorf("the second run logged %d entries, want the two bundles' only", n)
	}
}

func readFolder(t *testing.T, dir string) []release.File {
	t.Helper()
	files, err := release.ReadFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func fileData(files []release.File, name string) []byte {
	for _, f := range files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

// TestRun_DryRunSignsNothing: a dry run with --sign skips the sign step
// (a signature would be recorded in a public transparency log for good, and
// a pull request's run has no OIDC token) and writes no bundle.
func TestRun_DryRunSignsNothing(t *testing.T) {
	var log bytes.Buffer
	o := exampleRun(t, &log)
	o.DryRun = true
	o.Sign = &pipeline.SignOptions{}
	sum, err := pipeline.Release(context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	if s := stepNamed(t, sum, "sign"); s.Status != pipeline.StatusSkipped || !strings.Contains(s.Detail, "dry run: nothing signed") {
		t.Errorf("sign step %+v", s)
	}
	matches, _ := filepath.Glob(filepath.Join(o.Build.Out, "*", "*", "*.sigstore.json"))
	if len(matches) != 0 || sum.Signed != nil {
		t.Errorf("a dry run signed: %v %+v", matches, sum.Signed)
	}
}
