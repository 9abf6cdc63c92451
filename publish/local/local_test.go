package local

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/capirepo/capirepo/builder/buildtest"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"

	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/verify"
)

var testVars = map[string]string{"TEST_TOKEN": "t"}

func TestPublish_ExampleReadBackByClusterctl(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	rel := exampleRelease(t, "v0.1.0")
	sum, err := (&Target{Root: root}).Publish(ctx, rel)
	if err != nil {
		t.Fatal(err)
	}
	url := "file://" + filepath.Join(root, "infrastructure-example", "v0.1.0", "infrastructure-components.yaml")
	want := []publish.ProviderURL{{Name: "example", Type: "InfrastructureProvider", URL: url}}
	if diff := cmp.Diff(want, sum.Providers); diff != "" {
		t.Errorf("providers (-want +got):\n%s", diff)
	}
	var wantUploaded []string
	for _, f := range rel.Providers[0].Assets() {
		wantUploaded = append(wantUploaded, "infrastructure-example/v0.1.0/"+f.Name)
	}
	slices.Sort(wantUploaded)
	if diff := cmp.Diff(wantUploaded, sum.Uploaded); diff != "" {
		t.Errorf("uploaded (-want +got):\n%s", diff)
	}

	// clusterctl reads the components and every flavor and class back.
	rep, err := verify.Dir(ctx, root, verify.Options{})
	if err != nil {
		t.Fatalf("clusterctl cannot read the published tree: %v", err)
	}
	var flavors []string
	for _, f := range rep.Providers[0].Flavors {
		flavors = append(flavors, f.File)
	}
	var templates []string
	for _, f := range rel.Providers[0].Files {
		if strings.HasPrefix(f.Name, "cluster-template") {
			templates = append(templates, f.Name)
		}
	}
	slices.Sort(flavors)
	if diff := cmp.Diff(templates, flavors); diff != "" || len(flavors) < 3 {
		t.Errorf("flavors clusterctl read (-built +read):\n%s", diff)
	}
	if len(rep.Providers[0].ClusterClasses) == 0 {
		t.Error("no clusterclass read back")
	}
}

func TestPublish_VersionsSideBySideResolveAsClusterctl(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	pub := &Target{Root: root}
	for _, v := range []string{"v0.1.1", "v0.2.0-rc.1", "v0.1.0"} {
		if _, err := pub.Publish(ctx, buildtest.MinimalRelease(t, v)); err != nil {
			t.Fatal(err)
		}
	}
	// A leftover of an interrupted write must not be listed by clusterctl.
	leftover := filepath.Join(root, "infrastructure-test", ".v0.3.0.tmp-123")
	if err := os.MkdirAll(leftover, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		urlVersion, wantDefault string
	}{
		{"latest", "v0.1.1"}, // releases rank above pre-releases
		{"v0.2.0-rc.1", "v0.2.0-rc.1"},
		{"v0.1.0", "v0.1.0"},
	} {
		t.Run(tc.urlVersion, func(t *testing.T) {
			url := "file://" + filepath.Join(root, "infrastructure-test", tc.urlVersion, "infrastructure-components.yaml")
			repo := clusterctlRepo(t, "infrastructure-test", url, "", testVars)
			if got := repo.DefaultVersion(); got != tc.wantDefault {
				t.Errorf("DefaultVersion = %s, want %s", got, tc.wantDefault)
			}
			vs, err := repo.GetVersions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(vs)
			if diff := cmp.Diff([]string{"v0.1.0", "v0.1.1", "v0.2.0-rc.1"}, vs); diff != "" {
				t.Errorf("versions (-want +got):\n%s", diff)
			}
			c, err := repo.Components().Get(ctx, repositoryOptions(tc.wantDefault))
			if err != nil {
				t.Fatalf("components: %v", err)
			}
			if c.Version() != tc.wantDefault {
				t.Errorf("components version %s", c.Version())
			}
		})
	}
}

func TestPublish_IdenticalIsNoOpDifferentNeedsReplace(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	rel := buildtest.MinimalRelease(t, "v0.1.0")
	if _, err := (&Target{Root: root}).Publish(ctx, rel); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "infrastructure-test", "v0.1.0")
	before := testtree.ReadDir(t, dir)

	sum, err := (&Target{Root: root}).Publish(ctx, rel)
	if err != nil {
		t.Fatalf("identical re-publish: %v", err)
	}
	if len(sum.Uploaded)+len(sum.Replaced) != 0 || len(sum.Skipped) != len(before) {
		t.Errorf("identical re-publish: uploaded %v replaced %v skipped %v", sum.Uploaded, sum.Replaced, sum.Skipped)
	}

	changed := buildtest.Clone(rel)
	p := changed.Providers[0]
	if err := p.Add("metadata.yaml", append(bytes.Clone(p.Files[slices.IndexFunc(p.Files, func(f release.File) bool { return f.Name == "metadata.yaml" })].Data), "# edited\n"...)); err != nil {
		t.Fatal(err)
	}
	if err := p.Add("cluster-template-new.yaml", []byte("kind: Cluster\n")); err != nil {
		t.Fatal(err)
	}
	_, err = (&Target{Root: root}).Publish(ctx, changed)
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("publish different content without --replace: err = %v, want a ConflictError", err)
	}
	want := &ConflictError{Dir: dir, Changed: []string{"metadata.yaml", "checksums.txt"}, Added: []string{"cluster-template-new.yaml"}}
	slices.Sort(ce.Changed)
	slices.Sort(want.Changed)
	if diff := cmp.Diff(want, ce); diff != "" {
		t.Errorf("conflict (-want +got):\n%s", diff)
	}
	for _, s := range []string{"metadata.yaml", "cluster-template-new.yaml", "--replace"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}
	if diff := cmp.Diff(before, testtree.ReadDir(t, dir)); diff != "" {
		t.Errorf("a refused publish changed the folder:\n%s", diff)
	}

	sum, err = (&Target{Root: root, Replace: true}).Publish(ctx, changed)
	if err != nil {
		t.Fatalf("--replace: %v", err)
	}
	slices.Sort(sum.Replaced)
	if diff := cmp.Diff([]string{"infrastructure-test/v0.1.0/checksums.txt", "infrastructure-test/v0.1.0/metadata.yaml"}, sum.Replaced); diff != "" {
		t.Errorf("replaced (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"infrastructure-test/v0.1.0/cluster-template-new.yaml"}, sum.Uploaded); diff != "" {
		t.Errorf("added (-want +got):\n%s", diff)
	}
	after := testtree.ReadDir(t, dir)
	if !strings.HasSuffix(after["metadata.yaml"], "# edited\n") || after["cluster-template-new.yaml"] == "" {
		t.Errorf("--replace did not write the new content: %v", slices.Sorted(mapsKeys(after)))
	}
	if testtree.HasLeftover(t, filepath.Dir(dir)) {
		t.Errorf("temporary folders left: %v", testtree.Names(t, filepath.Dir(dir)))
	}
	if _, err := release.LoadProvider(dir); err != nil {
		t.Errorf("replaced folder does not match its checksums: %v", err)
	}
}

// TestPublish_SigningAPublishedVersionAddsWithoutReplace: files a
// published version lacks (a Sigstore bundle, provenance) are added
// without --replace and reported as added, not replaced; changing one of
// them afterwards needs --replace again.
func TestPublish_SigningAPublishedVersionAddsWithoutReplace(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	rel := buildtest.MinimalRelease(t, "v0.1.0")
	if _, err := (&Target{Root: root}).Publish(ctx, rel); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "infrastructure-test", "v0.1.0")
	signed := buildtest.Clone(rel)
	for _, n := range []string{"checksums.txt.sigstore.json", "provenance.intoto.json"} {
		if err := signed.Providers[0].Attach(n, []byte(`{"signed":"`+n+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := (&Target{Root: root}).Publish(ctx, signed)
	if err != nil {
		t.Fatalf("adding signatures to a published version without --replace: %v", err)
	}
	slices.Sort(sum.Uploaded)
	if diff := cmp.Diff([]string{"infrastructure-test/v0.1.0/checksums.txt.sigstore.json", "infrastructure-test/v0.1.0/provenance.intoto.json"}, sum.Uploaded); diff != "" || len(sum.Replaced) != 0 {
		t.Errorf("added (-want +got):\n%s\nreplaced %v", diff, sum.Replaced)
	}
	if got := testtree.ReadDir(t, dir); got["provenance.intoto.json"] == "" || got["metadata.yaml"] == "" {
		t.Errorf("folder after signing: %v", slices.Sorted(mapsKeys(got)))
	}

	resigned := buildtest.Clone(signed)
	resigned.Providers[0].Attached[1].Data = []byte(`{"signed":"again"}`)
	var ce *ConflictError
	if _, err := (&Target{Root: root}).Publish(ctx, resigned); !errors.As(err, &ce) || !strings.Contains(err.Error(), "--replace") {
		t.Fatalf("changing an added file without --replace: %v, want a ConflictError", err)
	}
}

func TestPublish_ConflictWritesNoProvider(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	a := buildtest.MinimalRelease(t, "v0.1.0")
	if _, err := (&Target{Root: root}).Publish(ctx, a); err != nil {
		t.Fatal(err)
	}
	// A two-provider release whose second provider conflicts: the first,
	// new one must not be written either.
	b := buildtest.Clone(a)
	b.Providers[0].Files[0].Data = append(bytes.Clone(b.Providers[0].Files[0].Data), '\n')
	other := buildtest.Clone(a).Providers[0]
	other.ID = provider.ID{Name: "other", Type: "InfrastructureProvider"}
	b.Providers = append([]*release.Provider{other}, b.Providers...)
	if _, err := (&Target{Root: root}).Publish(ctx, b); err == nil {
		t.Fatal("conflicting release was published")
	}
	if _, err := os.Stat(filepath.Join(root, "infrastructure-other")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the non-conflicting provider was written before the conflict was found: %v", err)
	}
}

func TestPublish_RejectsUnsafeNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(r *release.Release)
		want string
	}{
		{"version with ..", func(r *release.Release) { r.Version = "../v0.1.0"; r.Providers[0].Version = "../v0.1.0" }, "version"},
		{"provider version with /", func(r *release.Release) { r.Providers[0].Version = "v0.1.0/x" }, "v0.1.0/x"},
		{"provider name with /", func(r *release.Release) { r.Providers[0].ID.Name = "a/b" }, "a/b"},
		{"provider name with ..", func(r *release.Release) { r.Providers[0].ID.Name = ".." }, ".."},
		{"file name with /", func(r *release.Release) { r.Providers[0].Files[0].Name = "sub/metadata.yaml" }, "sub/metadata.yaml"},
		{"file name ..", func(r *release.Release) { r.Providers[0].Files[0].Name = ".." }, `".."`},
		{"no version", func(r *release.Release) { r.Version = "" }, "version"},
		{"version without v", func(r *release.Release) { r.Version = "0.1.0"; r.Providers[0].Version = "0.1.0" }, "must start with 'v'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			r := buildtest.Clone(buildtest.MinimalRelease(t, "v0.1.0"))
			tc.edit(r)
			_, err := (&Target{Root: root}).Publish(context.Background(), r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %q", err, tc.want)
			}
			if n := testtree.Names(t, root); len(n) != 0 {
				t.Errorf("wrote %v for a refused release", n)
			}
		})
	}
}

func TestPublish_OverridesWinOverAnotherURL(t *testing.T) {
	ctx := context.Background()
	repoRoot, overrides := t.TempDir(), t.TempDir()
	rel := buildtest.MinimalRelease(t, "v0.1.0")
	if _, err := (&Target{Root: repoRoot}).Publish(ctx, rel); err != nil {
		t.Fatal(err)
	}
	over := buildtest.Clone(rel)
	p := over.Providers[0]
	comp := bytes.Replace(p.Components().Data, []byte("registry.example.com/test/sidecar:1.0"), []byte("registry.example.com/test/sidecar:override"), 1)
	if bytes.Equal(comp, p.Components().Data) {
		t.Fatal("test edit did not change the components")
	}
	if err := p.Add(p.ComponentsFile, comp); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Target{Root: overrides, Kind: "overrides"}).Publish(ctx, over); err != nil {
		t.Fatal(err)
	}
	url := "file://" + filepath.Join(repoRoot, "infrastructure-test", "v0.1.0", "infrastructure-components.yaml")
	repo := clusterctlRepo(t, "infrastructure-test", url, overrides, testVars)
	raw, err := repo.Components().Raw(ctx, repositoryOptions("v0.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, comp) {
		t.Errorf("clusterctl read the repository's components, not the override")
	}
	// Without the overrides folder the repository's own file is read.
	raw, err = clusterctlRepo(t, "infrastructure-test", url, "", testVars).Components().Raw(ctx, repositoryOptions("v0.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, rel.Providers[0].Components().Data) {
		t.Errorf("without overrides clusterctl did not read the repository's components")
	}
}

// TestCleanLeftovers_RestoresFolderMovedAside simulates a crash inside
// ReplaceDir after the old folder was moved aside and before the new one
// arrived: the next run must bring the old folder back.
func TestCleanLeftovers_RestoresFolderMovedAside(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	rel := buildtest.MinimalRelease(t, "v0.1.0")
	if _, err := (&Target{Root: root}).Publish(ctx, rel); err != nil {
		t.Fatal(err)
	}
	labelDir := filepath.Join(root, "infrastructure-test")
	dir := filepath.Join(labelDir, "v0.1.0")
	want := testtree.ReadDir(t, dir)
	staged, err := release.StageDir(labelDir, "v0.1.0", []release.File{{Name: "half.yaml", Data: []byte("x")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, staged+".old"); err != nil {
		t.Fatal(err)
	}
	if err := release.CleanLeftovers(labelDir); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"v0.1.0"}, testtree.Names(t, labelDir)); diff != "" {
		t.Errorf("label folder (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, testtree.ReadDir(t, dir)); diff != "" {
		t.Errorf("restored folder (-want +got):\n%s", diff)
	}
}

func TestLeftoverVersion(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		ok            bool
	}{
		{".v0.1.0.tmp-123", "v0.1.0", true},
		{".v0.1.0-rc.1.tmp-99.old", "v0.1.0-rc.1", true},
		{"v0.1.0", "", false},
		{".v0.1.0", "", false},
		{".git.tmp-1", "", false},
		{".notes", "", false},
	} {
		v, ok := release.LeftoverVersion(tc.name)
		if v != tc.version || ok != tc.ok {
			t.Errorf("leftoverVersion(%q) = %q, %v; want %q, %v", tc.name, v, ok, tc.version, tc.ok)
		}
	}
}

const helperEnv = "LOCALREPO_TEST_HELPER"

// TestMain lets the test binary act as an interruptible publisher process.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "publish-and-hang" {
		hangingPublish()
		return
	}
	code := m.Run()
	buildtest.RemoveTrees()
	os.Exit(code)
}

// hangingPublish publishes the minimal release with one extra file into
// $ROOT and stops once the new folder is staged, waiting to be killed.
func hangingPublish() {
	t := &testing.T{}
	rel := buildtest.Clone(buildtest.MinimalRelease(t, "v0.1.0"))
	if err := rel.Providers[0].Add("cluster-template-new.yaml", []byte("kind: Cluster\n")); err != nil {
		panic(err)
	}
	p := &Target{Root: os.Getenv("ROOT"), Replace: true, staged: func([]string) {
		if err := os.WriteFile(os.Getenv("MARKER"), nil, 0o644); err != nil {
			panic(err)
		}
		time.Sleep(time.Minute)
	}}
	_, err := p.Publish(context.Background(), rel)
	panic(err)
}

func TestPublish_KilledMidWriteLeavesPreviousState(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	rel := buildtest.MinimalRelease(t, "v0.1.0")
	if _, err := (&Target{Root: root}).Publish(ctx, rel); err != nil {
		t.Fatal(err)
	}
	labelDir := filepath.Join(root, "infrastructure-test")
	dir := filepath.Join(labelDir, "v0.1.0")
	before := testtree.ReadDir(t, dir)

	marker := filepath.Join(t.TempDir(), "staged")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=publish-and-hang", "ROOT="+root, "MARKER="+marker,
		"TMPDIR="+t.TempDir()) // the killed helper cannot clean up its build tree
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("helper never staged its folder: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	if diff := cmp.Diff(before, testtree.ReadDir(t, dir)); diff != "" {
		t.Errorf("killed publish changed the version folder (-before +after):\n%s", diff)
	}
	if !testtree.HasLeftover(t, labelDir) {
		t.Fatalf("expected the killed run's staged folder in %v", testtree.Names(t, labelDir))
	}
	url := "file://" + filepath.Join(root, "infrastructure-test", "latest", "infrastructure-components.yaml")
	repo := clusterctlRepo(t, "infrastructure-test", url, "", testVars)
	vs, err := repo.GetVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"v0.1.0"}, vs); diff != "" {
		t.Errorf("clusterctl lists the leftover (-want +got):\n%s", diff)
	}

	// The next run cleans the leftover and finds nothing to do.
	sum, err := (&Target{Root: root}).Publish(ctx, rel)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Uploaded)+len(sum.Replaced) != 0 {
		t.Errorf("re-run wrote %v %v", sum.Uploaded, sum.Replaced)
	}
	if testtree.HasLeftover(t, labelDir) {
		t.Errorf("leftover not cleaned: %v", testtree.Names(t, labelDir))
	}
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func repositoryOptions(version string) repository.ComponentsOptions {
	return repository.ComponentsOptions{Version: version}
}
