package builder

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/capirepo/capirepo/internal/dirlock"
	"github.com/capirepo/capirepo/internal/epoch"
	"github.com/capirepo/capirepo/provider"
)

// DefaultLdflags is used when build.ldflags is empty: a stripped binary with
// the version variables kubebuilder-style mains declare (main.version,
// main.commit, main.date), and, added by the build, those of a version
// package of the provider's module in cluster-api's pattern (gitVersion,
// gitCommit, buildDate, ...). -X of a variable the manager does not have is
// ignored by the linker; the build says so when none is set.
const DefaultLdflags = "-s -w -X main.version={{.Version}} -X main.commit={{.Commit}} -X main.date={{.Date}}"

// BinDir is the folder under the output folder that holds the binaries.
const BinDir = "bin"

// BinaryOptions say how to compile a provider's manager.
type BinaryOptions struct {
	// Dir is the provider tree; it is only read. Build.Main is relative to it.
	Dir string
	// Out is the output folder; binaries go to Out/bin/<Name>-<os>-<arch>.
	Out string
	// Name is the file name prefix; "" means "manager".
	Name string
	// Build is the provider's build section (main package, platforms, ldflags).
	Build provider.Build
	// Version fills {{.Version}} in the ldflags.
	Version string
	// Commit fills {{.Commit}}; "" means `git rev-parse HEAD` in Dir, or
	// empty when Dir is not a git checkout.
	Commit string
	// SourceDateEpoch is $SOURCE_DATE_EPOCH (Unix seconds). {{.Date}} is that
	// time; without it the commit's date, without a commit empty, so that
	// two builds of one tree give the same bytes.
	SourceDateEpoch string
	// Env is the environment the go command starts from (cmd/ passes the
	// process environment); nil means the current process's. GOOS, GOARCH,
	// GOARM, CGO_ENABLED and GOFLAGS are always set by the build.
	Env []string
	// GoCommand is the go binary; "" means "go" from PATH.
	GoCommand string
	// Log hears which version variables the ldflags stamp, and a warning
	// when they stamp none; nil says nothing.
	Log io.Writer
}

// Platform is os/arch[/variant], as in an OCI image index.
type Platform struct {
	OS, Arch, Variant string
}

func (p Platform) String() string {
	s := p.OS + "/" + p.Arch
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

// ParsePlatform reads os/arch[/variant]; a variant is accepted for arm
// (v5, v6, v7, which set GOARM) and arm64 (v8, which changes nothing).
func ParsePlatform(s string) (Platform, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return Platform{}, fmt.Errorf("platform %q: want os/arch or os/arch/variant, e.g. linux/amd64", s)
	}
	p := Platform{OS: parts[0], Arch: parts[1]}
	if len(parts) == 3 {
		p.Variant = parts[2]
		switch {
		case p.Arch == "arm" && (p.Variant == "v5" || p.Variant == "v6" || p.Variant == "v7"):
		case p.Arch == "arm64" && p.Variant == "v8":
		default:
			return Platform{}, fmt.Errorf("platform %q: variant %q is only known for arm (v5, v6, v7) and arm64 (v8)", s, p.Variant)
		}
	}
	for _, part := range parts {
		if strings.ContainsFunc(part, func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') }) {
			return Platform{}, fmt.Errorf("platform %q: use lower-case letters and digits only", s)
		}
	}
	return p, nil
}

// Binary is one compiled manager.
type Binary struct {
	Platform Platform `json:"platform"`
	Path     string   `json:"path"`
	Size     int64    `json:"size"`
	SHA256   string   `json:"sha256"`
}

// BuildInfo is what the ldflags template is filled with.
type BuildInfo struct {
	Version, Commit, Date string
}

// BuildBinaries compiles the manager for every platform concurrently with
// -trimpath, CGO_ENABLED=0, -buildvcs=false and -mod=readonly, the version
// stamped through the ldflags. Binaries are built in a temporary folder under
// Out and moved into Out/bin only when every platform compiled, so a failure
// leaves no partial set behind. Nothing is written under Dir.
func BuildBinaries(ctx context.Context, o BinaryOptions) ([]Binary, error) {
	if o.Name == "" {
		o.Name = "manager"
	}
	if o.GoCommand == "" {
		o.GoCommand = "go"
	}
	main := o.Build.Main
	if main == "" {
		main = provider.DefaultMain
	}
	if err := provider.CheckRelPath(main); err != nil {
		return nil, fmt.Errorf("build.main: %w", err)
	}
	names := o.Build.Platforms
	if len(names) == 0 {
		names = provider.DefaultPlatforms
	}
	platforms := make([]Platform, 0, len(names))
	seen := map[Platform]bool{}
	for _, n := range names {
		p, err := ParsePlatform(n)
		if err != nil {
			return nil, fmt.Errorf("build.platforms: %w", err)
		}
		if seen[p] {
			return nil, fmt.Errorf("build.platforms: %s is listed twice", p)
		}
		seen[p] = true
		platforms = append(platforms, p)
	}
	info, err := buildInfo(ctx, o)
	if err != nil {
		return nil, err
	}
	ldflags, err := renderLdflags(o.Build.Ldflags, info)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	binDir := filepath.Join(o.Out, BinDir)
	tmp, release, err := stageBinaries(ctx, o.Out, binDir)
	if err != nil {
		return nil, err
	}
	defer release()

	pkg := "./" + strings.TrimPrefix(filepath.ToSlash(filepath.Clean(main)), "./")
	if filepath.Clean(main) == "." {
		pkg = "."
	}
	ldflags, notes, err := versionLdflags(ctx, o, dir, pkg, ldflags, stampOf(ctx, o.Dir, info))
	if err != nil {
		return nil, err
	}
	if o.Log != nil {
		for _, n := range notes {
			fmt.Fprintf(o.Log, "  %s\n", n)
		}
	}
	out := make([]Binary, len(platforms))
	errs := make([]error, len(platforms))
	var wg sync.WaitGroup
	for i, p := range platforms {
		wg.Go(func() {
			name := binaryName(o.Name, p)
			target := filepath.Join(tmp, name)
			errs[i] = goBuild(ctx, o, dir, pkg, p, ldflags, target)
			if errs[i] == nil {
				out[i], errs[i] = describe(p, target)
				out[i].Path = filepath.Join(binDir, name)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// The set moves in under Out's lock, so two builds never leave a mix.
	lock, err := dirlock.Acquire(ctx, o.Out, dirlock.Options{What: "writing into"})
	if err != nil {
		return nil, err
	}
	defer func() { _ = lock.Release() }()
	for _, b := range out {
		if err := os.Rename(filepath.Join(tmp, filepath.Base(b.Path)), b.Path); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// stageBinaries makes this run's staging folder Out/bin/.build-*, locked by
// its own dirlock for as long as the run lives, and removes the staging
// folders of runs that are gone (their lock is free). Both happen under
// Out's lock, so no folder is seen between its creation and its lock. The
// returned func removes the folder and gives its lock up.
func stageBinaries(ctx context.Context, out, binDir string) (string, func(), error) {
	root, err := dirlock.Acquire(ctx, out, dirlock.Options{What: "writing into"})
	if err != nil {
		return "", nil, err
	}
	defer func() { _ = root.Release() }()
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return "", nil, err
	}
	if entries, err := os.ReadDir(binDir); err == nil {
		for _, e := range entries {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), ".build-") {
				continue
			}
			d := filepath.Join(binDir, e.Name())
			if l, err := dirlock.Acquire(ctx, d, dirlock.Options{Timeout: -1}); err == nil {
				_ = l.Release()
				_ = os.RemoveAll(d)
			}
		}
	}
	tmp, err := os.MkdirTemp(binDir, ".build-")
	if err != nil {
		return "", nil, err
	}
	// go build runs in the provider tree, so its -o must not be relative
	// to the working directory of capirepo.
	if tmp, err = filepath.Abs(tmp); err != nil {
		return "", nil, err
	}
	own, err := dirlock.Acquire(ctx, tmp, dirlock.Options{Timeout: -1})
	if err != nil {
		_ = os.RemoveAll(tmp)
		return "", nil, err
	}
	return tmp, func() {
		_ = own.Release()
		_ = os.RemoveAll(tmp)
	}, nil
}

func binaryName(prefix string, p Platform) string {
	n := prefix + "-" + p.OS + "-" + p.Arch
	if p.Variant != "" {
		n += "-" + p.Variant
	}
	if p.OS == "windows" {
		n += ".exe"
	}
	return n
}

func goBuild(ctx context.Context, o BinaryOptions, dir, pkg string, p Platform, ldflags, target string) error {
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=" + ldflags, "-o", target, pkg}
	cmd := exec.CommandContext(ctx, o.GoCommand, args...)
	cmd.Dir = dir
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	set := map[string]string{"GOOS": p.OS, "GOARCH": p.Arch, "CGO_ENABLED": "0", "GOFLAGS": "-mod=readonly"}
	if p.Arch == "arm" && p.Variant != "" {
		set["GOARM"] = strings.TrimPrefix(p.Variant, "v")
	}
	cmd.Env = withEnv(env, set)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("go build %s for %s (in %s) failed:\n%s", pkg, p, o.Dir, msg)
	}
	return nil
}

// withEnv returns env with the keys of set replaced.
func withEnv(env []string, set map[string]string) []string {
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}

func describe(p Platform, path string) (Binary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Binary{}, err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return Binary{}, err
	}
	return Binary{Platform: p, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// buildInfo fills the version, the commit and a reproducible date.
func buildInfo(ctx context.Context, o BinaryOptions) (BuildInfo, error) {
	info := BuildInfo{Version: o.Version, Commit: o.Commit}
	if info.Commit == "" {
		info.Commit = git(ctx, o.Dir, "rev-parse", "HEAD")
	}
	switch {
	case o.SourceDateEpoch != "":
		t, err := epoch.Parse(o.SourceDateEpoch)
		if err != nil {
			return info, fmt.Errorf("SOURCE_DATE_EPOCH %q: want Unix seconds", o.SourceDateEpoch)
		}
		info.Date = t.Format(time.RFC3339)
	case info.Commit != "":
		if d := git(ctx, o.Dir, "log", "-1", "--format=%ct", info.Commit); d != "" {
			if sec, err := strconv.ParseInt(d, 10, 64); err == nil {
				info.Date = time.Unix(sec, 0).UTC().Format(time.RFC3339)
			}
		}
	}
	return info, nil
}

// CommitInfo returns the commit and commit date (RFC 3339, UTC) of the git
// checkout holding dir; both are empty when dir is not in one. It is what
// BuildBinaries stamps, for callers that label other artefacts the same way.
func CommitInfo(ctx context.Context, dir, sourceDateEpoch string) (commit, date string) {
	info, err := buildInfo(ctx, BinaryOptions{Dir: dir, SourceDateEpoch: sourceDateEpoch})
	if err != nil {
		return info.Commit, ""
	}
	return info.Commit, info.Date
}

// TagCommit is the commit the git tag names in the repository holding dir
// (an annotated tag peeled to its commit); "" when there is no such tag,
// no git, or no repository.
func TagCommit(ctx context.Context, dir, tag string) string {
	if tag == "" || strings.HasPrefix(tag, "-") {
		return ""
	}
	return git(ctx, dir, "rev-parse", "--verify", "--quiet", "refs/tags/"+tag+"^{commit}")
}

// SourceURL is the https URL of dir's git origin remote, without any
// credentials it may hold (the image's source label, the artifacts' source
// annotation); "" if there is none.
func SourceURL(ctx context.Context, dir string) string {
	return sourceURL(git(ctx, dir, "remote", "get-url", "origin"))
}

func sourceURL(remoteURL string) string {
	if remoteURL == "" {
		return ""
	}
	r := strings.TrimSuffix(remoteURL, ".git")
	if rest, ok := strings.CutPrefix(r, "git@"); ok { // git@host:owner/name
		host, p, ok := strings.Cut(rest, ":")
		if !ok {
			return ""
		}
		return "https://" + host + "/" + p
	}
	u, err := url.Parse(r)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "ssh") || u.Host == "" {
		return ""
	}
	u.User, u.Scheme = nil, "https"
	return u.String()
}

// git runs a read-only git command in dir and returns its trimmed output,
// or "" when git is missing or dir is not a checkout.
func git(ctx context.Context, dir string, args ...string) string {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func renderLdflags(tmpl string, info BuildInfo) (string, error) {
	if tmpl == "" {
		tmpl = DefaultLdflags
	}
	t, err := template.New("ldflags").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return "", fmt.Errorf("build.ldflags %q: %w", tmpl, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, info); err != nil {
		return "", fmt.Errorf("build.ldflags %q: %w (use {{.Version}}, {{.Commit}} and {{.Date}})", tmpl, err)
	}
	return b.String(), nil
}
