package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/publish/targets"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

const goldenDir = "../builder/testdata/golden/infrastructure-example"

// metadataFor maps each major.minor to a contract, as a provider's metadata.yaml does.
func metadataFor(series ...string) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n")
	for _, s := range series {
		var major, minor int
		var contract string
		if _, err := fmt.Sscanf(s, "%d.%d=%s", &major, &minor, &contract); err != nil {
			panic(err)
		}
		fmt.Fprintf(&b, "- major: %d\n  minor: %d\n  contract: %s\n", major, minor, contract)
	}
	return []byte(b.String())
}

// upstreamRelease is a real provider release (the example's golden
// files) at a version, with the given metadata, the components' image
// replaced by image when set, and the assets clusterctl must not get.
func upstreamRelease(t *testing.T, tag string, metadata []byte, image string) []fakegh.Asset {
	t.Helper()
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []fakegh.Asset
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(goldenDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		switch e.Name() {
		case "metadata.yaml":
			data = metadata
		case "infrastructure-components.yaml":
			s := strings.ReplaceAll(string(data), "ghcr.io/capirepo/capi-example-controller:v0.1.0", "ghcr.io/capirepo/capi-example-controller:"+tag)
			if image != "" {
				img, extra, _ := strings.Cut(image, " ")
				s = strings.ReplaceAll(s, "ghcr.io/capirepo/capi-example-controller:"+tag, img)
				switch {
				case strings.HasPrefix(extra, "---"): // more objects, as they are
					s += extra
				case extra != "":
					s += fmt.Sprintf(daemonSetYAML, extra)
				}
			}
			data = []byte(s)
		}
		out = append(out, fakegh.Asset{Name: e.Name(), Data: data})
	}
	return append(out, fakegh.Asset{Name: "manager-linux-amd64", Data: []byte("\x7fELF binary")})
}

const certManagerYAML = `apiVersion: v1
kind: Namespace
metadata:
  name: cert-manager
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: cert-manager
  namespace: cert-manager
spec:
  template:
    spec:
      containers:
      - name: controller
        image: %s
`

// daemonSetYAML is a DaemonSet running an image in an init container.
const daemonSetYAML = `---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: capi-example-agent
  namespace: capi-example-system
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      initContainers:
      - name: init
        image: %s
      containers:
      - name: agent
        image: busybox-not-mirrored-because-the-init-clashes
`

type upstream struct {
	gh     *fakegh.Server
	config string // clusterctl config file
	images map[string]string
}

var mirrorRuns atomic.Int64

// newUpstream starts a fake GitHub with two providers (several versions, a
// pre-release, a draft and a tag without a release) and cert-manager, and
// writes a clusterctl config that points at them. images, when set, maps
// "example", "sample" and "cert-manager" to the image their components run.
func newUpstream(t *testing.T, images map[string]string) *upstream {
	t.Helper()
	u := &upstream{gh: fakegh.New(t), images: images}
	// Unique repositories: clusterctl caches what it reads for the process.
	n := mirrorRuns.Add(1)
	ex, sa := fmt.Sprintf("provider-example-%d", n), fmt.Sprintf("provider-sample-%d", n)
	u.gh.AddRepo("acme", ex, false)
	u.gh.AddRepo("acme", sa, false)
	u.gh.AddRepo("cert-manager", "cert-manager", false)
	exMeta := metadataFor("0.1=v1beta2", "0.2=v1beta2")
	for _, v := range []string{"v0.1.0", "v0.1.1", "v0.2.0", "v0.2.1"} {
		u.gh.AddRelease("acme", ex, fakegh.Release{Tag: v, Assets: upstreamRelease(t, v, exMeta, images["example"])})
	}
	u.gh.AddRelease("acme", ex, fakegh.Release{Tag: "v0.2.2", Draft: true, Assets: upstreamRelease(t, "v0.2.2", exMeta, images["example"])})
	u.gh.AddTag("acme", ex, "v0.3.0", "main")

	saMeta := metadataFor("1.0=v1beta2", "1.1=v1beta2")
	for _, v := range []string{"v1.0.0", "v1.1.0", "v1.1.1"} {
		u.gh.AddRelease("acme", sa, fakegh.Release{Tag: v, Assets: upstreamRelease(t, v, saMeta, images["sample"])})
	}
	// A pre-release is never latest while a release exists; a newer series
	// on a later contract is not what this clusterctl installs.
	u.gh.AddRelease("acme", sa, fakegh.Release{Tag: "v1.1.2-rc.0", Prerelease: true, Assets: upstreamRelease(t, "v1.1.2-rc.0", saMeta, images["sample"])})
	u.gh.AddRelease("acme", sa, fakegh.Release{Tag: "v1.2.0",
		Assets: upstreamRelease(t, "v1.2.0", metadataFor("1.0=v1beta2", "1.1=v1beta2", "1.2=v1beta3"), images["sample"])})

	cmImage := images["cert-manager"]
	if cmImage == "" {
		cmImage = "quay.io/jetstack/cert-manager-controller:v1.16.0"
	}
	u.gh.AddRelease("cert-manager", "cert-manager", fakegh.Release{Tag: "v1.16.0", Assets: []fakegh.Asset{
		{Name: "cert-manager.yaml", Data: fmt.Appendf(nil, certManagerYAML, cmImage)},
		{Name: "cert-manager.crds.yaml", Data: []byte("not mirrored")},
	}})

	u.config = filepath.Join(t.TempDir(), "clusterctl.yaml")
	cfg := fmt.Sprintf(`providers:
- name: example
  type: InfrastructureProvider
  url: https://github.com/acme/%s/releases/latest/infrastructure-components.yaml
- name: sample
  type: InfrastructureProvider
  url: https://github.com/acme/%s/releases/latest/infrastructure-components.yaml
cert-manager:
  url: https://github.com/cert-manager/cert-manager/releases/latest/cert-manager.yaml
  version: v1.16.0
`, ex, sa)
	if err := os.WriteFile(u.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return u
}

func (u *upstream) options(t *testing.T, target string, log *bytes.Buffer, requests ...string) pipeline.MirrorOptions {
	t.Helper()
	loc, err := targets.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.MirrorOptions{Requests: requests, Clusterctl: clusterctlConfig(t, u.config), CertManager: true, To: loc,
		Sources: targets.Options{GitHub: github.Options{APIURL: u.gh.APIURL()}, HTTPClient: &http.Client{}, Retry: &publish.Retry{Attempts: 1}}, Log: log}
}

func versionsOf(s *pipeline.MirrorSummary) map[string][]string {
	out := map[string][]string{}
	for _, p := range s.Providers {
		for _, v := range p.Versions {
			out[p.Label] = append(out[p.Label], v.Version)
		}
	}
	return out
}

func written(s *pipeline.MirrorSummary) (uploaded, skipped int) {
	for _, p := range s.Providers {
		for _, v := range p.Versions {
			uploaded += len(v.Uploaded) + len(v.Replaced)
			skipped += len(v.Skipped)
		}
	}
	return uploaded, skipped
}

func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestMirror_IntoAFolderResolvesVersionsAsClusterctlAndVerifies(t *testing.T) {
	ctx := context.Background()
	u := newUpstream(t, nil)
	dir := t.TempDir()
	var log bytes.Buffer
	var progress bytes.Buffer
	o := u.options(t, "file://"+dir, &log, "infrastructure-example:latest-1", "infrastructure-sample")
	o.Progress = pipeline.Lines(&progress, false)
	sum, err := pipeline.Mirror(ctx, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if !strings.Contains(progress.String(), "[3/3]") || !strings.Contains(progress.String(), "infrastructure-example v0.2.1: ok (7 copied") {
		t.Errorf("progress:\n%s", progress.String())
	}
	want := map[string][]string{
		// latest is v0.2.1 (the draft v0.2.2 and the bare tag v0.3.0 are
		// not releases), and the one published version before it.
		"infrastructure-example": {"v0.2.0", "v0.2.1"},
		// v1.2.0 is on a later contract and v1.1.2-rc.0 a pre-release:
		// clusterctl installs v1.1.1.
		"infrastructure-sample": {"v1.1.1"},
	}
	if diff := cmp.Diff(want, versionsOf(sum)); diff != "" {
		t.Errorf("versions mirrored (-want +got):\n%s", diff)
	}
	files := listTree(t, dir)
	for _, f := range files {
		switch {
		case strings.HasSuffix(f, "manager-linux-amd64"), strings.HasSuffix(f, "cert-manager.crds.yaml"), strings.HasSuffix(f, "checksums.txt"):
			t.Errorf("%s was mirrored: only what clusterctl reads belongs in the mirror", f)
		}
	}
	for _, f := range []string{
		"infrastructure-example/v0.2.1/metadata.yaml", "infrastructure-example/v0.2.1/infrastructure-components.yaml",
		"infrastructure-example/v0.2.1/cluster-template-ha.yaml", "infrastructure-example/v0.2.1/clusterclass-example-quick-start.yaml",
		"infrastructure-sample/v1.1.1/cluster-template-topology.yaml", "cert-manager/v1.16.0/cert-manager.yaml",
	} {
		if !slices.Contains(files, f) {
			t.Errorf("%s is not in the mirror: %v", f, files)
		}
	}
	if sum.Verified != 3 {
		t.Errorf("verified %d provider versions through clusterctl, want 3", sum.Verified)
	}
	if !strings.Contains(log.String(), "cert-manager v1.16.0 read back through clusterctl") {
		t.Errorf("cert-manager was not read back through clusterctl:\n%s", log.String())
	}
	if sum.CertManager == nil || sum.CertManager.Version != "v1.16.0" {
		t.Errorf("cert-manager mirrored: %+v, want v1.16.0 (the config's version wins over the URL's latest)", sum.CertManager)
	}
	for _, s := range []string{
		"url: file://" + dir + "/infrastructure-example/v0.2.1/infrastructure-components.yaml",
		"url: file://" + dir + "/cert-manager/v1.16.0/cert-manager.yaml",
		"version: v1.16.0",
	} {
		if !strings.Contains(sum.Config, s) {
			t.Errorf("site config lacks %q:\n%s", s, sum.Config)
		}
	}

	// A re-run copies nothing.
	u.gh.ResetLog()
	again, err := pipeline.Mirror(ctx, u.options(t, "file://"+dir, &log, "infrastructure-example:latest-1", "infrastructure-sample"))
	if err != nil {
		t.Fatal(err)
	}
	if up, skip := written(again); up != 0 || skip == 0 {
		t.Errorf("re-run wrote %d files (skipped %d), want none written", up, skip)
	}
	// The re-run downloads only what resolving latest needs (the newest
	// release's metadata.yaml, for its contract: example v0.2.1, sample
	// v1.2.0), cert-manager's manifest, and the checksums.txt of each of the
	// three mirrored versions, which says whether the binary beside the
	// templates is one of the release's assets (it is not); the mirrored
	// versions are compared by their listed sha256, not downloaded.
	if n := u.gh.Calls(fakegh.RouteGetAsset); n != 6 {
		t.Errorf("re-run downloaded %d assets, want 6: %v", n, u.gh.Log())
	}
	if diff := cmp.Diff(files, listTree(t, dir)); diff != "" {
		t.Errorf("re-run changed the tree (-before +after):\n%s", diff)
	}
}

// replaceUpstream changes one asset of a published upstream release, as a
// maintainer re-uploading it would.
func replaceUpstream(t *testing.T, u *upstream, repo, tag, file, data string) {
	t.Helper()
	g, err := github.New(github.Options{Owner: "acme", Repo: repo, APIURL: u.gh.APIURL(), Replace: true,
		HTTPClient: &http.Client{}, Retry: &publish.Retry{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	rel := &release.Release{Version: tag, Providers: []*release.Provider{{Version: tag, Files: []release.File{{Name: file, Data: []byte(data)}}}}}
	if _, err := g.Publish(context.Background(), rel); err != nil {
		t.Fatal(err)
	}
}

func repoOf(t *testing.T, sum *pipeline.MirrorSummary, label string) string {
	t.Helper()
	for _, p := range sum.Providers {
		if p.Label == label {
			return strings.Split(p.Source, "/")[4]
		}
	}
	t.Fatalf("no %s in the summary", label)
	return ""
}

func TestMirror_AChangedUpstreamAssetIsRefusedWithoutReplace(t *testing.T) {
	ctx := context.Background()
	u := newUpstream(t, nil)
	dir := t.TempDir()
	var log bytes.Buffer
	sum, err := pipeline.Mirror(ctx, u.options(t, "file://"+dir, &log, "infrastructure-example:v0.2.1"))
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, "infrastructure-example/v0.2.1/cluster-template-ha.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	changed := string(before) + "# changed upstream\n"
	replaceUpstream(t, u, repoOf(t, sum, "infrastructure-example"), "v0.2.1", "cluster-template-ha.yaml", changed)

	_, err = pipeline.Mirror(ctx, u.options(t, "file://"+dir, &log, "infrastructure-example:v0.2.1"))
	if err == nil {
		t.Fatal("a changed upstream asset was mirrored over the copy without --replace")
	}
	for _, s := range []string{"infrastructure-example", "v0.2.1", "cluster-template-ha.yaml"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error does not name %s: %v", s, err)
		}
	}
	after, _ := os.ReadFile(filepath.Join(dir, "infrastructure-example/v0.2.1/cluster-template-ha.yaml"))
	if !bytes.Equal(before, after) {
		t.Error("the mirrored file changed although the run was refused")
	}

	o := u.options(t, "file://"+dir, &log, "infrastructure-example:v0.2.1")
	o.TargetOptions.Replace = true
	if _, err := pipeline.Mirror(ctx, o); err != nil {
		t.Fatalf("with replace: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "infrastructure-example/v0.2.1/cluster-template-ha.yaml")); string(got) != changed {
		t.Errorf("with replace the mirror holds %q", got)
	}
}

func TestMirror_AFaultMidMirrorIsFinishedByARerun(t *testing.T) {
	ctx := context.Background()
	// Explicit versions: each is read when it is copied, so the faults
	// fall between copies.
	reqs := []string{"infrastructure-example:v0.1.1", "infrastructure-example:v0.2.0", "infrastructure-example:v0.2.1", "infrastructure-sample:v1.1.1"}
	clean := t.TempDir()
	u := newUpstream(t, nil)
	var log bytes.Buffer
	if _, err := pipeline.Mirror(ctx, u.options(t, "file://"+clean, &log, reqs...)); err != nil {
		t.Fatal(err)
	}
	want := listTree(t, clean)

	dir := t.TempDir()
	u.gh.ResetLog()
	u.gh.Inject(fakegh.RouteGetAsset, 9, fakegh.ServerError)
	u.gh.Inject(fakegh.RouteGetAsset, 20, fakegh.Dropped)
	o := u.options(t, "file://"+dir, &log, reqs...)
	o.Concurrency = 1
	if _, err := pipeline.Mirror(ctx, o); err == nil {
		t.Fatal("the mirror did not fail on the injected faults")
	}
	// What is there is whole: every version folder holds all its files.
	for _, f := range listTree(t, dir) {
		if !slices.Contains(want, f) {
			t.Errorf("after the fault the mirror holds %s, which a clean mirror does not", f)
		}
	}
	partial := len(listTree(t, dir))

	sum, err := pipeline.Mirror(ctx, u.options(t, "file://"+dir, &log, reqs...))
	if err != nil {
		t.Fatalf("re-run: %v", err)
	}
	if diff := cmp.Diff(want, listTree(t, dir)); diff != "" {
		t.Errorf("after the re-run the mirror differs from a clean one (-clean +rerun):\n%s", diff)
	}
	up, skip := written(sum)
	if skip == 0 || up == 0 || partial == 0 {
		t.Errorf("re-run wrote %d and skipped %d files after a partial mirror of %d files: want both", up, skip, partial)
	}
}

func TestOpenMirrorTarget(t *testing.T) {
	o := targets.Options{GitLab: gitlab.Options{Token: "glpat-x"}}
	for _, tc := range []struct {
		in, kind, err string
	}{
		{in: "file:///srv/mirror", kind: "file"},
		{in: "gitlab://gitlab.example.com/capi/mirror", kind: "gitlab"},
		{in: "gitlab://gitlab.example.com:8443/capi/mirror", kind: "gitlab"},
		{in: "oci://registry.example.com/capi/providers", kind: "oci"},
		{in: "gitlab://code.example.com/capi/mirror", err: `starts with "gitlab."`},
		{in: "github://acme/mirror", err: "not to GitHub"},
		{in: "oci://registry.example.com", err: "oci://REGISTRY/PATH"},
		{in: "s3://bucket", err: "unknown scheme"},
	} {
		loc, err := targets.Parse(tc.in)
		if err == nil {
			_, err = pipeline.OpenMirrorTarget(context.Background(), loc, o)
		}
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !publish.IsUsage(err)):
			t.Errorf("%s: err = %v, want a usage error with %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || loc.Scheme != tc.kind):
			t.Errorf("%s: %+v, %v; want kind %s", tc.in, loc, err, tc.kind)
		}
	}
}

// mustParse parses a target URL.
func mustParse(t *testing.T, raw string) targets.Location {
	t.Helper()
	loc, err := targets.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestMirror_UnknownProviderAndVersionAreRefusedBeforeCopying(t *testing.T) {
	u := newUpstream(t, nil)
	dir := t.TempDir()
	var log bytes.Buffer
	for req, want := range map[string]string{
		"infrastructure-nope":           "not in clusterctl's provider list",
		"infrastructure-example:v0.2.2": "not a published release",
		"infrastructure-example:v0.3.0": "not a published release",
		"infrastructure-example:v1":     "want vX.Y.Z, latest or latest-N",
	} {
		_, err := pipeline.Mirror(context.Background(), u.options(t, "file://"+dir, &log, req))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", req, err, want)
		}
	}
	if files := listTree(t, dir); len(files) != 0 {
		t.Errorf("refused runs wrote %v", files)
	}
}

// TestMirror_FromAMirror reads providers from a local repository (a
// providers: override with a file:// URL, as a site's config has) and
// writes them into another folder: mirror = read one target, write another.
func TestMirror_FromAMirror(t *testing.T) {
	ctx := context.Background()
	u := newUpstream(t, nil)
	first := t.TempDir()
	var log bytes.Buffer
	if _, err := pipeline.Mirror(ctx, u.options(t, "file://"+first, &log, "infrastructure-example:latest-1")); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "clusterctl.yaml")
	body := "providers:\n- name: example\n  type: InfrastructureProvider\n  url: file://" + first + "/infrastructure-example/latest/infrastructure-components.yaml\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	second := t.TempDir()
	o := u.options(t, "file://"+second, &log, "infrastructure-example:latest-1")
	o.Clusterctl, o.CertManager = clusterctlConfig(t, cfg), false
	sum, err := pipeline.Mirror(ctx, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if diff := cmp.Diff(map[string][]string{"infrastructure-example": {"v0.2.0", "v0.2.1"}}, versionsOf(sum)); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
	want := listTree(t, filepath.Join(first, "infrastructure-example"))
	if diff := cmp.Diff(want, listTree(t, filepath.Join(second, "infrastructure-example"))); diff != "" {
		t.Errorf("the second mirror differs from the first (-first +second):\n%s", diff)
	}
	for _, f := range want {
		a, _ := os.ReadFile(filepath.Join(first, "infrastructure-example", f))
		b, _ := os.ReadFile(filepath.Join(second, "infrastructure-example", f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between the mirrors", f)
		}
	}
}

// clusterctlConfig opens the clusterctl config file as cmd opens the
// user's.
func clusterctlConfig(t testing.TB, file string) pipeline.Clusterctl {
	t.Helper()
	c, err := config.New(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.Clusterctl{File: file, Config: c}
}

// TestMirror_AReRunNamesTheFilesAlreadyThereAsThePublisherDoes: a version
// already at the mirror is not copied again, and its files are named as
// the target names them when it writes them (a folder tree: LABEL/VERSION/
// NAME), so a re-run's "already there" are the first run's "copied".
func TestMirror_AReRunNamesTheFilesAlreadyThereAsThePublisherDoes(t *testing.T) {
	ctx := context.Background()
	u := newUpstream(t, nil)
	dir := t.TempDir()
	var log bytes.Buffer
	first, err := pipeline.Mirror(ctx, u.options(t, "file://"+dir, &log, "infrastructure-example:latest-1"))
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	again, err := pipeline.Mirror(ctx, u.options(t, "file://"+dir, &log, "infrastructure-example:latest-1"))
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(first.Providers) != 1 || len(again.Providers) != 1 || len(first.Providers[0].Versions) != 2 {
		t.Fatalf("mirrored %+v, then %+v", first.Providers, again.Providers)
	}
	for i, v := range first.Providers[0].Versions {
		w := again.Providers[0].Versions[i]
		if len(w.Uploaded) != 0 {
			t.Errorf("%s: the re-run copied %v", w.Version, w.Uploaded)
		}
		if diff := cmp.Diff(v.Uploaded, w.Skipped); diff != "" {
			t.Errorf("%s: the re-run's files already there (+) are not the first run's files copied (-):\n%s", v.Version, diff)
		}
	}
}
