package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const repoRoot = "../.."

func loadYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		t.Fatalf("%s does not parse: %v", path, err)
	}
	return m
}

// makeTargets lists the targets a Makefile defines.
func makeTargets(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^([A-Za-z0-9_.-]+):`).FindAllStringSubmatch(string(data), -1) {
		out = append(out, m[1])
	}
	return out
}

// stepRuns returns every run: of every job's steps.
func stepRuns(t *testing.T, file string, wf map[string]any) []string {
	t.Helper()
	jobs, ok := wf["jobs"].(map[string]any)
	if !ok || len(jobs) == 0 {
		t.Fatalf("%s: no jobs", file)
	}
	var runs []string
	for name, j := range jobs {
		job, _ := j.(map[string]any)
		if job["runs-on"] == nil {
			t.Errorf("%s: job %s has no runs-on", file, name)
		}
		steps, _ := job["steps"].([]any)
		if len(steps) == 0 {
			t.Errorf("%s: job %s has no steps", file, name)
		}
		for _, s := range steps {
			step, _ := s.(map[string]any)
			if r, ok := step["run"].(string); ok {
				runs = append(runs, r)
			}
		}
	}
	return runs
}

// trigger returns the workflow's on: (YAML 1.1 reads a bare on as true).
func trigger(wf map[string]any) map[string]any {
	for _, k := range []string{"on", "true"} {
		if m, ok := wf[k].(map[string]any); ok {
			return m
		}
	}
	return nil
}

func TestWorkflows_ParseAndCallMakeTargetsThatExist(t *testing.T) {
	targets := makeTargets(t, "Makefile")
	makeRE := regexp.MustCompile(`\bmake\s+([A-Za-z0-9_.-]+)`)
	for file, want := range map[string][]string{
		".github/workflows/ci.yaml":      {"test", "lint"},
		".github/workflows/release.yaml": {"test"},
	} {
		wf := loadYAML(t, file)
		var called []string
		for _, r := range stepRuns(t, file, wf) {
			for _, m := range makeRE.FindAllStringSubmatch(r, -1) {
				called = append(called, m[1])
				if !slices.Contains(targets, m[1]) {
					t.Errorf("%s runs make %s, which the Makefile does not define (it has %v)", file, m[1], targets)
				}
			}
		}
		for _, w := range want {
			if !slices.Contains(called, w) {
				t.Errorf("%s does not run make %s", file, w)
			}
		}
		if trigger(wf) == nil {
			t.Errorf("%s has no on: triggers", file)
		}
	}
	on := trigger(loadYAML(t, ".github/workflows/ci.yaml"))
	if _, ok := on["pull_request"]; !ok {
		t.Error("ci.yaml does not run on pull requests")
	}
	push, _ := trigger(loadYAML(t, ".github/workflows/release.yaml"))["push"].(map[string]any)
	if tags, _ := push["tags"].([]any); len(tags) != 1 || tags[0] != "v*" {
		t.Errorf("release.yaml runs on tags %v, want [v*]", push["tags"])
	}
}

// TestGoreleaserConfig_BuildsEveryPlatformWithVersion checks goreleaser.yaml's
// structure (goreleaser itself needs Go >= 1.27.1, newer than this toolchain,
// so `goreleaser check` cannot run here; docs/adoption.md says so).
func TestGoreleaserConfig_BuildsEveryPlatformWithVersion(t *testing.T) {
	cfg := loadYAML(t, "goreleaser.yaml")
	if cfg["version"] != float64(2) {
		t.Errorf("version %v, want 2 (GoReleaser v2 config)", cfg["version"])
	}
	if _, ok := cfg["sboms"]; ok {
		t.Error("goreleaser.yaml configures SBOMs")
	}
	builds, _ := cfg["builds"].([]any)
	if len(builds) != 1 {
		t.Fatalf("%d builds, want 1", len(builds))
	}
	b := builds[0].(map[string]any)
	main, _ := b["main"].(string)
	if _, err := os.Stat(filepath.Join(repoRoot, main, "main.go")); err != nil {
		t.Errorf("builds[0].main %q: %v", main, err)
	}
	str := func(v any) string {
		var parts []string
		for _, x := range v.([]any) {
			parts = append(parts, x.(string))
		}
		slices.Sort(parts)
		return strings.Join(parts, ",")
	}
	if got := str(b["goos"]); got != "darwin,linux,windows" {
		t.Errorf("goos %s", got)
	}
	if got := str(b["goarch"]); got != "amd64,arm64" {
		t.Errorf("goarch %s", got)
	}
	if got := str(b["ldflags"]); !strings.Contains(got, "-X main.version={{.Version}}") {
		t.Errorf("ldflags %s do not set main.version", got)
	}
	if !slices.Contains(strings.Split(str(b["env"]), ","), "CGO_ENABLED=0") {
		t.Error("builds are not static (CGO_ENABLED=0)")
	}
	if cs, _ := cfg["checksum"].(map[string]any); cs == nil || cs["disable"] == true {
		t.Error("no checksum file")
	}
}

// capirepoCalls returns the flags used in each `capirepo <cmd> ...` line of text.
func capirepoCalls(text string) map[string][]string {
	text = strings.ReplaceAll(text, "\\\n", " ")
	// Folded YAML scalars and shell continuations carry flags on the next lines.
	text = regexp.MustCompile(`\n\s+--`).ReplaceAllString(text, " --")
	out := map[string][]string{}
	for _, m := range regexp.MustCompile(`(?m)capirepo\s+(build|release|verify|lint|diff|publish github|publish gitlab|publish local)\b([^\n]*)`).FindAllStringSubmatch(text, -1) {
		for _, f := range regexp.MustCompile(`\s--([a-z-]+)`).FindAllStringSubmatch(m[2], -1) {
			out[m[1]] = append(out[m[1]], f[1])
		}
		if _, ok := out[m[1]]; !ok {
			out[m[1]] = nil
		}
	}
	return out
}

func TestAdoptionExamples_ParseAndUseRealFlags(t *testing.T) {
	root := newRootCmd(streams{out: &bytes.Buffer{}, errOut: &bytes.Buffer{}, getenv: func(string) string { return "" }})
	checkFlags := func(file string, text string) {
		calls := capirepoCalls(text)
		if len(calls) == 0 {
			t.Errorf("%s calls no capirepo command", file)
		}
		for name, flags := range calls {
			cmd, _, err := root.Find(strings.Fields(name))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range flags {
				if cmd.Flags().Lookup(f) == nil && cmd.InheritedFlags().Lookup(f) == nil {
					t.Errorf("%s: capirepo %s has no flag --%s", file, name, f)
				}
			}
		}
	}
	for _, file := range []string{"examples/adoption/goreleaser.yaml", "examples/adoption/github-actions-release.yaml", "examples/adoption/github-actions-pr.yaml", "examples/adoption/gitlab-ci.yml"} {
		m := loadYAML(t, file)
		data, _ := os.ReadFile(filepath.Join(repoRoot, file))
		checkFlags(file, string(data))
		switch {
		case strings.Contains(file, "goreleaser"):
			rel, _ := m["release"].(map[string]any)
			if extra, _ := rel["extra_files"].([]any); len(extra) == 0 {
				t.Errorf("%s: no release.extra_files", file)
			}
			before, _ := m["before"].(map[string]any)
			if hooks, _ := before["hooks"].([]any); len(hooks) == 0 || !strings.HasPrefix(hooks[0].(string), "capirepo build") {
				t.Errorf("%s: before.hooks do not run capirepo build", file)
			}
		case strings.Contains(file, "github"):
			stepRuns(t, file, m)
		case strings.Contains(file, "gitlab"):
			job, _ := m["release"].(map[string]any)
			if script, _ := job["script"].([]any); len(script) == 0 {
				t.Errorf("%s: job release has no script", file)
			}
		}
	}
	mk, err := os.ReadFile(filepath.Join(repoRoot, "examples/adoption/Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	checkFlags("examples/adoption/Makefile", strings.ReplaceAll(string(mk), "$(CAPIREPO)", "capirepo"))

	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command("make", "-n", "-f", "examples/adoption/Makefile", "capirepo-release", "CAPIREPO_TAG=v0.1.0",
		"CAPIREPO_IMAGE=ghcr.io/acme/controller", "CAPIREPO_PUBLISH=github://acme/provider")
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n release: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "capirepo release --version v0.1.0 ") || !strings.Contains(string(out), "--publish github://") {
		t.Errorf("make -n release prints:\n%s", out)
	}
}
