package builder

import (
	"context"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/internal/dirlock"
	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/provider"
)

const exampleDir = "../examples/infrastructure-example"

// treeState lists every file under dir with its size and mtime, to prove a
// build wrote nothing there.
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%s %s %d", info.ModTime(), info.Mode(), info.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestBuildBinaries_ExampleBothPlatformsReproducibleAndStamped(t *testing.T) {
	ctx := context.Background()
	before := treeState(t, exampleDir)
	opts := BinaryOptions{
		Dir:     exampleDir,
		Build:   provider.Build{Main: ".", Platforms: []string{"linux/amd64", "linux/arm64"}},
		Version: "v0.1.0",
		// Pinned: HEAD of a shared checkout can move between the two builds.
		Commit:          "0123456789abcdef0123456789abcdef01234567",
		SourceDateEpoch: "1700000000",
	}
	var sets [2][]Binary
	for i := range sets {
		opts.Out = t.TempDir()
		bins, err := BuildBinaries(ctx, opts)
		if err != nil {
			t.Fatalf("build %d: %v", i, err)
		}
		sets[i] = bins
	}
	if diff := cmp.Diff(before, treeState(t, exampleDir)); diff != "" {
		t.Errorf("the build changed the provider tree (-before +after):\n%s", diff)
	}
	wantMachine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	for i, b := range sets[0] {
		if got, want := filepath.Base(b.Path), "manager-linux-"+b.Platform.Arch; got != want {
			t.Errorf("binary %d is %s, want %s", i, got, want)
		}
		f, err := elf.Open(b.Path)
		if err != nil {
			t.Fatalf("%s: %v", b.Path, err)
		}
		if f.Machine != wantMachine[b.Platform.Arch] {
			t.Errorf("%s: ELF machine %v, want %v", b.Path, f.Machine, wantMachine[b.Platform.Arch])
		}
		_ = f.Close()
		again := sets[1][i]
		if b.SHA256 != again.SHA256 || b.Size != again.Size {
			t.Errorf("%s: two builds of one tree differ: %s (%d bytes) and %s (%d bytes)", b.Platform, b.SHA256, b.Size, again.SHA256, again.Size)
		}
		entries, err := os.ReadDir(filepath.Dir(b.Path))
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 2 {
			t.Errorf("bin folder holds %d entries, want the 2 binaries and no temporary folder", len(entries))
		}
	}
	// The host can run its own platform's binary: the stamp is what the release says.
	for _, b := range sets[0] {
		if b.Platform.OS != runtime.GOOS || b.Platform.Arch != runtime.GOARCH {
			continue
		}
		out, err := exec.Command(b.Path, "-version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s -version: %v\n%s", b.Path, err, out)
		}
		want := "capi-example-controller v0.1.0 (commit " + opts.Commit + ", built 2023-11-14T22:13:20Z)"
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("-version prints %q, want %q", got, want)
		}
	}
}

// A relative --out (the default "dist") is relative to the working
// directory, not to the provider tree go build runs in.
func TestBuildBinaries_RelativeOutFromAnotherDirectory(t *testing.T) {
	dir, err := filepath.Abs(exampleDir)
	if err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	t.Chdir(cwd)
	bins, err := BuildBinaries(context.Background(), BinaryOptions{
		Dir:     dir,
		Out:     "dist",
		Build:   provider.Build{Main: ".", Platforms: []string{"linux/amd64"}},
		Version: "v0.1.0",
		Commit:  "0123456789abcdef0123456789abcdef01234567",
	})
	if err != nil {
		t.Fatalf("BuildBinaries with Out \"dist\" from %s: %v", cwd, err)
	}
	if got, want := bins[0].Path, filepath.Join("dist", "bin", "manager-linux-amd64"); got != want {
		t.Errorf("binary path %s, want %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(cwd, "dist", "bin", "manager-linux-amd64")); err != nil {
		t.Errorf("binary not under the working directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dist")); err == nil {
		t.Errorf("a dist folder appeared in the provider tree %s", dir)
	}
}

func TestBuildBinaries_CompileErrorNamesPlatformAndCompilerMessage(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "go.mod", "module example.com/broken\n\ngo 1.26\n")
	write(t, dir, "main.go", "package main\n\nfunc main() { notDefined() }\n")
	out := t.TempDir()
	_, err := BuildBinaries(context.Background(), BinaryOptions{Dir: dir, Out: out,
		Build: provider.Build{Platforms: []string{"linux/amd64"}}, Version: "v0.1.0"})
	if err == nil {
		t.Fatal("a package that does not compile built")
	}
	for _, want := range []string{"linux/amd64", "undefined: notDefined", "main.go:3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(out, BinDir))
	if len(entries) != 0 {
		t.Errorf("a failed build left %d entries in bin/", len(entries))
	}
	if _, err := os.Stat(filepath.Join(dir, "go.sum")); err == nil {
		t.Error("the build wrote go.sum into the provider tree")
	}
}

func write(t *testing.T, dir, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBuildBinaries_BadOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build provider.Build
		epoch string
		want  string
	}{
		{"platform without arch", provider.Build{Platforms: []string{"linux"}}, "", `build.platforms: platform "linux"`},
		{"platform twice", provider.Build{Platforms: []string{"linux/amd64", "linux/amd64"}}, "", "linux/amd64 is listed twice"},
		{"unknown variant", provider.Build{Platforms: []string{"linux/amd64/v9"}}, "", `variant "v9"`},
		{"main leaves the tree", provider.Build{Main: "../x"}, "", "build.main"},
		{"unknown template field", provider.Build{Ldflags: "-X main.v={{.Tag}}"}, "", "build.ldflags"},
		{"bad template", provider.Build{Ldflags: "-X main.v={{.Version"}, "", "build.ldflags"},
		{"bad epoch", provider.Build{}, "yesterday", "SOURCE_DATE_EPOCH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			_, err := BuildBinaries(context.Background(), BinaryOptions{Dir: t.TempDir(), Out: out, Build: tc.build, SourceDateEpoch: tc.epoch, Commit: "abc"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestRenderLdflags(t *testing.T) {
	info := BuildInfo{Version: "v1.2.3", Commit: "abc", Date: "2024-01-01T00:00:00Z"}
	for _, tc := range []struct{ tmpl, want string }{
		{"", "-s -w -X main.version=v1.2.3 -X main.commit=abc -X main.date=2024-01-01T00:00:00Z"},
		{"-X sigs.k8s.io/x/version.gitVersion={{.Version}}", "-X sigs.k8s.io/x/version.gitVersion=v1.2.3"},
		{"-s", "-s"},
	} {
		got, err := renderLdflags(tc.tmpl, info)
		if err != nil || got != tc.want {
			t.Errorf("renderLdflags(%q) = %q, %v; want %q", tc.tmpl, got, err, tc.want)
		}
	}
}

func TestBuildInfo_DateFromEpochThenCommitThenEmpty(t *testing.T) {
	ctx := context.Background()
	notGit := t.TempDir()
	for _, tc := range []struct {
		name  string
		o     BinaryOptions
		check func(BuildInfo) bool
	}{
		{"epoch wins", BinaryOptions{Dir: exampleDir, SourceDateEpoch: "0"}, func(i BuildInfo) bool { return i.Date == "1970-01-01T00:00:00Z" }},
		{"commit date in a checkout", BinaryOptions{Dir: exampleDir}, func(i BuildInfo) bool {
			if i.Commit == "" {
				return i.Date == "" // not run from a checkout
			}
			_, err := time.Parse(time.RFC3339, i.Date)
			return err == nil && len(i.Commit) == 40
		}},
		{"outside git: all empty", BinaryOptions{Dir: notGit, Version: "v1.0.0"}, func(i BuildInfo) bool { return i == BuildInfo{Version: "v1.0.0"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := buildInfo(ctx, tc.o)
			if err != nil || !tc.check(got) {
				t.Errorf("buildInfo = %+v, %v", got, err)
			}
		})
	}
}

func TestParsePlatform(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Platform
		ok   bool
	}{
		{"linux/amd64", Platform{OS: "linux", Arch: "amd64"}, true},
		{"linux/arm/v7", Platform{OS: "linux", Arch: "arm", Variant: "v7"}, true},
		{"linux/arm64/v8", Platform{OS: "linux", Arch: "arm64", Variant: "v8"}, true},
		{"Linux/amd64", Platform{}, false},
		{"linux/", Platform{}, false},
		{"linux/amd64/v2/x", Platform{}, false},
	} {
		got, err := ParsePlatform(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParsePlatform(%q) = %+v, %v", tc.in, got, err)
		}
	}
	if s := (Platform{OS: "linux", Arch: "arm", Variant: "v7"}).String(); s != "linux/arm/v7" {
		t.Errorf("String() = %q", s)
	}
}

// TestBuildBinaries_RemovesOnlyStagingOfRunsThatAreGone: a killed run's
// staging folder (its lock free) is removed by the next build; a running
// one's (its lock held) is left alone.
func TestBuildBinaries_RemovesOnlyStagingOfRunsThatAreGone(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "go.mod", "module example.com/broken\n\ngo 1.26\n")
	write(t, dir, "main.go", "package main\n\nfunc main() { notDefined() }\n")
	out := t.TempDir()
	dead := filepath.Join(out, BinDir, ".build-dead")
	live := filepath.Join(out, BinDir, ".build-live")
	for _, d := range []string{dead, live} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, d, "manager-linux-amd64", "half")
	}
	// The dead run held its lock once; the kernel freed it when it died.
	if l, err := dirlock.Acquire(context.Background(), dead, dirlock.Options{}); err != nil {
		t.Fatal(err)
	} else {
		_ = l.Release()
	}
	held, err := dirlock.Acquire(context.Background(), live, dirlock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	_, err = BuildBinaries(context.Background(), BinaryOptions{Dir: dir, Out: out,
		Build: provider.Build{Platforms: []string{"linux/amd64"}}, Version: "v0.1.0"})
	if err == nil {
		t.Fatal("a package that does not compile built")
	}
	if _, err := os.Stat(dead); err == nil {
		t.Errorf("the dead run's staging folder %s is still there", dead)
	}
	if _, err := os.Stat(filepath.Join(live, "manager-linux-amd64")); err != nil {
		t.Errorf("the live run's staging folder was touched: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(out, BinDir))
	if len(entries) != 1 {
		t.Errorf("bin/ holds %d entries, want only the live run's staging folder", len(entries))
	}
}

// TestBuildBinaries_FindsTheProvidersVersionPackage: a provider whose
// version lives in its own version package, in cluster-api's pattern (no
// main.version), gets it stamped; a manager with no version variable at
// all, or ldflags naming variables it lacks, gets a warning that says so.
func TestBuildBinaries_FindsTheProvidersVersionPackage(t *testing.T) {
	host := runtime.GOOS + "/" + runtime.GOARCH
	versionPkg := `package version

import "fmt"

var (
	gitMajor     string
	gitMinor     string
	gitVersion   string
	gitCommit    string
	gitTreeState string
	buildDate    string
)

func String() string {
	return fmt.Sprintf("%s %s.%s %s %s %s", gitVersion, gitMajor, gitMinor, gitCommit, gitTreeState, buildDate)
}
`
	tree := func(files map[string]string) string {
		files["go.mod"] = "module example.com/provider\n\ngo 1.22\n"
		return testtree.Write(t, files)
	}
	build := func(dir, ldflags string) (string, string) {
		t.Helper()
		var log strings.Builder
		bins, err := BuildBinaries(context.Background(), BinaryOptions{Dir: dir, Out: t.TempDir(), Log: &log,
			Build:   provider.Build{Main: "./cmd/manager", Platforms: []string{host}, Ldflags: ldflags},
			Version: "v1.4.2", Commit: "0123456789abcdef0123456789abcdef01234567", SourceDateEpoch: "1700000000"})
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bins[0].Path).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", bins[0].Path, err, out)
		}
		return strings.TrimSpace(string(out)), log.String()
	}

	withPkg := tree(map[string]string{"version/version.go": versionPkg,
		"cmd/manager/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/provider/version\"\n)\n\nfunc main() { fmt.Println(version.String()) }\n"})
	got, log := build(withPkg, "")
	// Not a git checkout: no tree state.
	if want := "v1.4.2 1.4 0123456789abcdef0123456789abcdef01234567  2023-11-14T22:13:20Z"; got != want {
		t.Errorf("the manager says %q, want %q", got, want)
	}
	if !strings.Contains(log, "version stamped into example.com/provider/version (buildDate, gitCommit, gitMajor, gitMinor, gitTreeState, gitVersion)") || strings.Contains(log, "warning") {
		t.Errorf("log:\n%s", log)
	}

	none := tree(map[string]string{"cmd/manager/main.go": "package main\n\nfunc main() { println(\"manager\") }\n"})
	if _, log := build(none, ""); !strings.Contains(log, "warning: the ldflags set no variable of the manager (-X main.version, -X main.commit, -X main.date: ./cmd/manager has none of them") {
		t.Errorf("log:\n%s", log)
	}
	if _, log := build(withPkg, "-X main.version={{.Version}} -X example.com/provider/version.gitVersion={{.Version}}"); !strings.Contains(log, "warning: build.ldflags sets main.version, which the manager does not have") {
		t.Errorf("log:\n%s", log)
	}
}
