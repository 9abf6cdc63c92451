//go:build unix

package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/sign/signtest"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/capirepo/capirepo/image/imagetest"
	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	fakegl "github.com/capirepo/capirepo/internal/fake/gitlab"
)

// docs is the harness of TestAdoptionDocs_EveryExampleRuns: the shell runs
// each documented command line as written (variables, ${VAR,,}, make
// recipes), with a capirepo on PATH that only records its arguments; each
// recorded call then runs in this process, where the fakes stand in for
// GitHub, GitLab and the registries.
type docs struct {
	t        *testing.T
	env      map[string]string
	bin      string // the recording capirepo's folder
	argv     string // where it records
	example  string // the example provider
	fragment []byte // examples/adoption/Makefile
}

func newDocs(t *testing.T) *docs {
	t.Helper()
	for _, tool := range []string{"bash", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	d := &docs{t: t, bin: t.TempDir(), argv: t.TempDir(), env: map[string]string{}}
	script := "#!/bin/sh\nn=$(ls \"$CAPIREPO_ARGV\" | wc -l)\nprintf '%s\\0' \"$@\" > \"$CAPIREPO_ARGV/$(printf %04d \"$n\")\"\n"
	if err := os.WriteFile(filepath.Join(d.bin, "capirepo"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// tree copies the example provider into a new folder, with a release series
// for the documented v1.4.x versions and a kubebuilder-style Makefile that
// wires the fragment with the documented lines, and makes it the working
// folder.
func (d *docs) tree(wiring string) string {
	d.t.Helper()
	dir := copyTree(d.t, d.example)
	md, err := os.ReadFile(filepath.Join(dir, "metadata.yaml"))
	if err != nil {
		d.t.Fatal(err)
	}
	md = append(md, []byte("- major: 1\n  minor: 4\n  contract: v1beta2\n")...)
	if !strings.Contains(wiring, "include hack/capirepo.mk") {
		wiring += "\ninclude hack/capirepo.mk\n"
	}
	// The platforms this machine has compiled for already (another
	// architecture would compile the standard library first, for minutes).
	mk := strings.Replace(kubebuilderMakefile, "include capirepo.mk\n", wiring, 1)
	mk = strings.Replace(mk, "ALL_ARCH = amd64 arm64 ppc64le", "ALL_ARCH = amd64 arm64", 1)
	for name, data := range map[string][]byte{"metadata.yaml": md, "Makefile": []byte(mk), "hack/capirepo.mk": d.fragment} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			d.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			d.t.Fatal(err)
		}
	}
	d.t.Chdir(dir)
	return dir
}

// shell runs one command line with bash in the working folder and returns
// the capirepo calls it made.
func (d *docs) shell(line string) [][]string {
	d.t.Helper()
	entries, _ := os.ReadDir(d.argv)
	for _, e := range entries {
		_ = os.Remove(filepath.Join(d.argv, e.Name()))
	}
	cmd := exec.Command("bash", "-ec", line)
	cmd.Env = append(os.Environ(), "PATH="+d.bin+string(os.PathListSeparator)+os.Getenv("PATH"), "CAPIREPO_ARGV="+d.argv)
	for k, v := range d.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		d.t.Fatalf("%s: %v\n%s", line, err, out)
	}
	entries, _ = os.ReadDir(d.argv)
	var calls [][]string
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(d.argv, e.Name()))
		if err != nil {
			d.t.Fatal(err)
		}
		calls = append(calls, strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00"))
	}
	return calls
}

// capirepo runs one recorded call in this process with the harness's environment.
func (d *docs) capirepo(args []string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut, func(k string) string { return d.env[k] })
	return code, out.String(), errOut.String()
}

// signing sets the job's OIDC token for identity (what GitHub Actions and
// GitLab CI hand a job) and points --sign at an in-memory Sigstore: the
// command as written, with the two flags that name another instance than
// the public one (cosign's own), which the test cannot reach.
func (d *docs) signing(line, identity, issuer string) string {
	d.t.Helper()
	if !strings.Contains(line, "--sign") {
		d.t.Fatalf("%s: no --sign", line)
	}
	ss := signtest.New(d.t)
	sc, tr := ss.WriteFiles(d.t, d.t.TempDir())
	d.env["SIGSTORE_ID_TOKEN"] = signtest.Token(identity, issuer)
	return line + " --signing-config " + sc + " --trusted-root " + tr
}

// runs runs every capirepo call of a command line and wants each to succeed.
func (d *docs) runs(line string) [][]string {
	d.t.Helper()
	calls := d.shell(line)
	for _, c := range calls {
		if code, stdout, stderr := d.capirepo(c); code != 0 {
			d.t.Fatalf("%s\ncapirepo %s: exit %d\nstdout: %s\nstderr: %s", line, strings.Join(c, " "), code, stdout, stderr)
		}
	}
	return calls
}

// fenced returns the fenced blocks of markdown in the language lang.
func fenced(md, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?ms)^```"+lang+"\n(.*?)^```").FindAllStringSubmatch(md, -1) {
		out = append(out, m[1])
	}
	return out
}

// commandLines splits a shell block into its commands: continuation lines
// joined, comment lines dropped.
func commandLines(block string) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// squash folds whitespace and writes ${VAR} as $VAR, to compare a
// documented command with an example file's.
func squash(s string) string {
	s = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`).ReplaceAllString(s, "$$$1")
	return strings.Join(strings.Fields(s), " ")
}

// registries serves go-containerregistry's in-process registry for every
// registry the documents name (ghcr.io, gcr.io for the base image and the
// kubebuilder REGISTRY, the GitLab CI registry), with the base image there.
func registries(t *testing.T) {
	t.Helper()
	local := imagetest.NewRegistry(t)
	before := remote.DefaultTransport
	remote.DefaultTransport = routeHosts{to: local, next: &http.Transport{}, hosts: []string{"ghcr.io", "gcr.io", "registry.gitlab.example.com"}}
	t.Cleanup(func() { remote.DefaultTransport = before })
	imagetest.PushIndex(t, "gcr.io/distroless/static:nonroot", "linux/amd64", "linux/arm64/v8")
}

// routeHosts sends requests for hosts to another, over plain HTTP.
type routeHosts struct {
	to    string
	hosts []string
	next  http.RoundTripper
}

func (r routeHosts) RoundTrip(req *http.Request) (*http.Response, error) {
	if slices.Contains(r.hosts, req.URL.Host) {
		req = req.Clone(req.Context())
		req.URL.Scheme, req.URL.Host, req.Host = "http", r.to, r.to
	}
	return r.next.RoundTrip(req)
}

// TestAdoptionDocs_EveryExampleRuns runs every example of docs/adoption.md
// and examples/adoption/ as written, in a copy of the example provider
// whose kubebuilder-style Makefile includes the fragment with the
// documented wiring: the Makefile targets, the two-step flow of a draft
// made before its images are promoted, the GoReleaser hook and the
// publish step after it, the GitHub Actions and GitLab CI release steps
// (with their CI variables), against the fake GitHub and GitLab and an
// in-process registry. Each checks what it published.
func TestAdoptionDocs_EveryExampleRuns(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "adoption.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(data)
	// Everything read from the checkout is read now: each case works in its own tree.
	fragment, err := os.ReadFile(filepath.Join(repoRoot, "examples", "adoption", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	goreleaser := loadYAML(t, "examples/adoption/goreleaser.yaml")
	workflow := loadYAML(t, "examples/adoption/github-actions-release.yaml")
	gitlabCI := loadYAML(t, "examples/adoption/gitlab-ci.yml")
	example := exampleDir(t)
	shBlocks, makeBlocks := fenced(md, "sh"), fenced(md, "make")
	if len(shBlocks) != 6 || len(makeBlocks) != 1 {
		t.Fatalf("docs/adoption.md has %d sh and %d make blocks; this test runs 6 and 1: teach it the new ones", len(shBlocks), len(makeBlocks))
	}
	pullRequest := loadYAML(t, "examples/adoption/github-actions-pr.yaml")
	const token = "ghp_adoption-docs"
	gh := fakegh.New(t, fakegh.WithToken(token))
	registries(t)
	newRun := func(t *testing.T, repo string) *docs {
		if repo != "" {
			gh.AddRepo("acme", repo, false)
		}
		d := newDocs(t)
		d.env = map[string]string{"GITHUB_TOKEN": token, "GITHUB_API_URL": gh.APIURL()}
		d.example, d.fragment = example, fragment
		return d
	}
	// OWNER/NAME in the documents is the test's repository.
	ownerName := func(s, repo string) string { return strings.ReplaceAll(s, "OWNER/NAME", "acme/"+repo) }

	t.Run("Makefile fragment: capirepo-release", func(t *testing.T) {
		d := newRun(t, "provider-make")
		d.tree(ownerName(makeBlocks[0], "provider-make"))
		var calls [][]string
		for _, line := range commandLines(shBlocks[0]) {
			calls = append(calls, d.runs(line)...)
		}
		// make -n runs nothing; make runs capirepo release once.
		if len(calls) != 1 || calls[0][0] != "release" || !slices.Contains(calls[0], "gcr.io/provider/provider-controller") ||
			!slices.Contains(calls[0], "linux/amd64,linux/arm64") {
			t.Errorf("make ran capirepo %q", calls)
		}
		rels := gh.Releases("acme", "provider-make")
		// The 8 release files, provenance.intoto.json and the SBOMs of the two
		// manager binaries and the image.
		if len(rels) != 1 || rels[0].Draft || rels[0].Tag != "v1.4.0" || len(rels[0].Assets) != 12 || assetData(t, rels, "manager-image.cdx.json") == nil {
			t.Errorf("releases %+v", rels)
		}
		if !strings.Contains(string(assetData(t, rels, "infrastructure-components.yaml")), "image: gcr.io/provider/provider-controller@sha256:") {
			t.Error("the components do not name the pushed image by digest")
		}
	})

	t.Run("a draft before the images are promoted", func(t *testing.T) {
		d := newRun(t, "provider-twostep")
		d.tree("")
		lines := commandLines(ownerName(shBlocks[1], "provider-twostep"))
		if len(lines) != 2 {
			t.Fatalf("the two-step block has %d commands: %q", len(lines), lines)
		}
		d.runs(lines[0])
		if rels := gh.Releases("acme", "provider-twostep"); len(rels) != 1 || !rels[0].Draft {
			t.Fatalf("step 1 left %+v, want one draft", rels)
		}
		// The image is not promoted yet: step 2 stops and the draft stays.
		calls := d.shell(lines[1])
		if code, _, stderr := d.capirepo(calls[0]); code != 1 || !strings.Contains(stderr, "not found in the registry") {
			t.Fatalf("step 2 before the promotion: exit %d: %s", code, stderr)
		}
		if rels := gh.Releases("acme", "provider-twostep"); !rels[0].Draft {
			t.Fatal("the draft was published before its image was promoted")
		}
		imagetest.PushIndex(t, "ghcr.io/capirepo/capi-example-controller:v1.4.0", "linux/amd64", "linux/arm64")
		d.runs(lines[1])
		if rels := gh.Releases("acme", "provider-twostep"); len(rels) != 1 || rels[0].Draft {
			t.Errorf("step 2 left %+v, want the release published", rels)
		}
	})

	t.Run("GoReleaser", func(t *testing.T) {
		d := newRun(t, "provider-goreleaser")
		dir := d.tree("")
		cfg := goreleaser
		hooks := cfg["before"].(map[string]any)["hooks"].([]any)
		if doc := fenced(md, "yaml")[0]; !strings.Contains(squash(doc), squash(hooks[0].(string))) {
			t.Errorf("the documented hook is not the example's:\n%s", doc)
		}
		tag := "v1.4.3"
		for _, h := range hooks {
			d.runs(strings.ReplaceAll(h.(string), "{{ .Tag }}", tag))
		}
		// GoReleaser makes a draft with the extra files.
		var assets []fakegh.Asset
		for _, e := range cfg["release"].(map[string]any)["extra_files"].([]any) {
			glob := strings.ReplaceAll(e.(map[string]any)["glob"].(string), "{{ .Tag }}", tag)
			files, _ := filepath.Glob(filepath.Join(dir, glob))
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				assets = append(assets, fakegh.Asset{Name: filepath.Base(f), Data: data})
			}
		}
		if len(assets) != 8 {
			t.Fatalf("extra_files match %d files, want the 8 release files", len(assets))
		}
		gh.AddRelease("acme", "provider-goreleaser", fakegh.Release{Tag: tag, Draft: true, Assets: assets})
		// The next CI step the documents give.
		next := regexp.MustCompile("`(capirepo publish github out --repo OWNER/NAME)`").FindStringSubmatch(md)
		if next == nil {
			t.Fatal("docs/adoption.md no longer says how GoReleaser's draft is published")
		}
		d.runs(ownerName(next[1], "provider-goreleaser"))
		rels := gh.Releases("acme", "provider-goreleaser")
		if len(rels) != 1 || rels[0].Draft || len(rels[0].Assets) != 9 { // provenance.intoto.json added
			t.Errorf("releases %+v", rels)
		}
	})

	t.Run("GitHub Actions", func(t *testing.T) {
		// A repository name with upper case, which GitHub allows and image names do not.
		d := newRun(t, "Provider-Actions")
		d.tree("")
		gh.AddTag("acme", "Provider-Actions", "v1.4.1", "0123456789abcdef0123456789abcdef01234567") // the workflow runs on the pushed tag
		wf := workflow
		var step string
		for _, r := range stepRuns(t, "github-actions-release.yaml", wf) {
			if strings.HasPrefix(r, "capirepo release") {
				step = r
			}
		}
		if squash(step) != squash(commandLines(shBlocks[2])[0]) {
			t.Errorf("the documented step differs from the workflow's:\n%s\n%s", shBlocks[2], step)
		}
		d.env["GITHUB_REF_NAME"], d.env["GITHUB_REPOSITORY"] = "v1.4.1", "acme/Provider-Actions"
		notes := gh.Calls(fakegh.RouteGenerateNotes)
		calls := d.runs(d.signing(step, "https://github.com/acme/Provider-Actions/.github/workflows/release.yaml@refs/tags/v1.4.1", signtest.GitHubIssuer))
		if !slices.Contains(calls[0], "ghcr.io/acme/provider-actions-controller") {
			t.Errorf("the workflow ran capirepo %q", calls)
		}
		rels := gh.Releases("acme", "Provider-Actions")
		if len(rels) != 1 || rels[0].Draft || rels[0].Tag != "v1.4.1" || rels[0].Body == "" || gh.Calls(fakegh.RouteGenerateNotes) != notes+1 {
			t.Errorf("releases %+v, generate-notes called %d times", rels, gh.Calls(fakegh.RouteGenerateNotes)-notes)
		}

		// The pull-request workflow's lint, as SARIF for code scanning.
		var lint string
		for _, r := range stepRuns(t, "github-actions-pr.yaml", pullRequest) {
			if strings.HasPrefix(r, "capirepo lint") {
				lint = r
			}
		}
		if squash(lint) != squash(commandLines(shBlocks[3])[0]) {
			t.Errorf("the documented lint step differs from the workflow's:\n%s\n%s", shBlocks[3], lint)
		}
		calls = d.shell(lint)
		if code, stdout, stderr := d.capirepo(calls[0]); code != 0 || !strings.Contains(stdout, `"version": "2.1.0"`) {
			t.Errorf("the pull request's lint: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
	})

	t.Run("GitLab CI", func(t *testing.T) {
		d := newRun(t, "")
		d.tree("")
		gl := fakegl.New(t)
		gl.AddProject(7, "acme/provider-gitlab", false)
		gl.AddToken("glpat-adoption-docs", fakegl.AccessToken)
		gl.AddTag("acme/provider-gitlab", "v1.4.2", "main") // the job runs on the pushed tag
		// gitlab.example.com is the fake; the in-memory Sigstore is on loopback.
		before, toGitLab := http.DefaultTransport, gl.Transport("gitlab.example.com")
		http.DefaultTransport = roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.URL.Host == "gitlab.example.com" {
				return toGitLab.RoundTrip(r)
			}
			return before.RoundTrip(r)
		})
		t.Cleanup(func() { http.DefaultTransport = before })
		job := gitlabCI["release"].(map[string]any)
		var script string
		for _, s := range job["script"].([]any) {
			if strings.HasPrefix(s.(string), "capirepo release") {
				script = s.(string)
			}
		}
		if squash(script) != squash(commandLines(shBlocks[4])[0]) {
			t.Errorf("the documented job differs from the example's:\n%s\n%s", shBlocks[4], script)
		}
		for k, v := range map[string]string{"CI_COMMIT_TAG": "v1.4.2", "CI_SERVER_HOST": "gitlab.example.com", "CI_PROJECT_PATH": "acme/provider-gitlab",
			"CI_REGISTRY_IMAGE": "registry.gitlab.example.com/acme/provider-gitlab", "GITLAB_ACCESS_TOKEN": "glpat-adoption-docs"} {
			d.env[k] = v
		}
		d.runs(d.signing(script, "https://gitlab.com/acme/provider-gitlab//.gitlab-ci.yml@refs/tags/v1.4.2", "https://gitlab.com"))
		if files := gl.Files("acme/provider-gitlab", "infrastructure-example", "v1.4.2"); len(files) < 8 {
			t.Errorf("the package holds %d files", len(files))
		}
		if gl.Count(fakegl.RouteCreateRelease) != 1 {
			t.Errorf("%d GitLab Releases made, want 1 (--gitlab-release)", gl.Count(fakegl.RouteCreateRelease))
		}

		// The merge request job's Code Quality report.
		lintJob := gitlabCI["capirepo-lint"].(map[string]any)
		lint := lintJob["script"].([]any)[0].(string)
		if squash(lint) != squash(commandLines(shBlocks[5])[0]) {
			t.Errorf("the documented lint job differs from the example's:\n%s\n%s", shBlocks[5], lint)
		}
		if reports := lintJob["artifacts"].(map[string]any)["reports"].(map[string]any); reports["codequality"] != "gl-code-quality-report.json" || !strings.HasSuffix(lint, "> gl-code-quality-report.json") {
			t.Errorf("the lint job's report is not the one it writes: %v, %s", reports, lint)
		}
		calls := d.shell(lint)
		if code, stdout, stderr := d.capirepo(calls[0]); code != 0 || contract.CheckCodeQuality([]byte(stdout)) != nil {
			t.Errorf("the merge request's lint: exit %d (%v)\nstdout: %s\nstderr: %s", code, contract.CheckCodeQuality([]byte(stdout)), stdout, stderr)
		}
	})
}

// assetData returns the named asset of the first release.
func assetData(t *testing.T, rels []fakegh.Release, name string) []byte {
	t.Helper()
	for _, a := range rels[0].Assets {
		if a.Name == name {
			return a.Data
		}
	}
	t.Fatalf("no asset %s", name)
	return nil
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
