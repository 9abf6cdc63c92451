package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/image"
	"github.com/capirepo/capirepo/localrepo"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/verify"
)

// Image reference styles for --image-ref.
const (
	imageRefTag    = "tag"
	imageRefDigest = "digest"
)

// validateArtifacts checks the binary and image flags of build and release.
func (o *buildOptions) validateArtifacts() error {
	if o.imageRef != imageRefTag && o.imageRef != imageRefDigest {
		return usagef("--image-ref must be tag or digest, not %q", o.imageRef)
	}
	building := o.imagePush || o.imageLayout != ""
	switch {
	case building && o.image == "":
		return usagef("--image-push and --image-layout need --image REPOSITORY to name the image")
	case o.imageRef == imageRefDigest && !building:
		return usagef("--image-ref digest needs the image built here: add --image-push or --image-layout DIR")
	case o.baseImage != "" && !building:
		return usagef("--base-image is used only when the image is built: add --image-push or --image-layout DIR")
	}
	for _, p := range o.platforms {
		if _, err := builder.ParsePlatform(p); err != nil {
			return usagef("--platforms: %v", err)
		}
	}
	if building {
		o.binaries = true // the image is made of the binaries
	}
	return nil
}

// artifacts are what a build makes besides the release files.
type artifacts struct {
	Binaries []builder.Binary `json:"binaries,omitempty"`
	Image    *imageSummary    `json:"image,omitempty"`
}

type imageSummary struct {
	// Tag is REPO:VERSION, Digest the multi-platform index's digest.
	Tag       string   `json:"tag"`
	Digest    string   `json:"digest"`
	Platforms []string `json:"platforms"`
	Pushed    bool     `json:"pushed"`
	Layout    string   `json:"layout,omitempty"`
	// Components is the image reference the components YAML names.
	Components string `json:"components"`
}

type built struct {
	res *builder.Result
	cfg *provider.Config
	art artifacts
}

// buildAll makes binaries, then the image (so its digest is known), then
// renders the release; it does not write the release.
func buildAll(ctx context.Context, s streams, o *buildOptions, source string) (*built, error) {
	cfg, err := provider.LoadConfig(o.dir, o.config)
	if err != nil {
		return nil, err
	}
	version := o.version
	if version == "" {
		version = cfg.Version
	}
	if version == "" {
		return nil, builder.ErrNoVersion
	}
	if _, err := provider.ParseVersion(version); err != nil {
		return nil, err
	}
	b := &built{cfg: cfg}
	var commit, date string
	if o.binaries {
		spec, err := managerBuild(cfg, o.platforms)
		if err != nil {
			return nil, err
		}
		commit, date = builder.CommitInfo(ctx, o.dir, s.getenv("SOURCE_DATE_EPOCH"))
		fmt.Fprintf(s.errOut, "go build %s for %s\n", spec.Main, strings.Join(spec.Platforms, ", "))
		b.art.Binaries, err = builder.BuildBinaries(ctx, builder.BinaryOptions{
			Dir: o.dir, Out: o.out, Build: spec, Version: version, Commit: commit,
			SourceDateEpoch: s.getenv("SOURCE_DATE_EPOCH"), Env: os.Environ(),
		})
		if err != nil {
			return nil, err
		}
		for _, bin := range b.art.Binaries {
			fmt.Fprintf(s.errOut, "  %-45s %10s  sha256:%s\n", bin.Path, humanBytes(bin.Size), bin.SHA256[:16])
		}
	}
	if o.imagePush || o.imageLayout != "" {
		if source == "" {
			source = gitSource(ctx, o.dir)
		}
		img, digest, err := buildImage(ctx, s, o, b.art.Binaries, version, commit, date, source)
		if err != nil {
			return nil, err
		}
		b.art.Image = img
		if o.imageRef == imageRefDigest {
			b.cfg = withDigest(cfg, digest)
		}
	}
	bo := o.builderOptions()
	bo.Config, bo.Version = b.cfg, version
	if b.res, err = builder.Build(ctx, bo); err != nil {
		return nil, err
	}
	if b.art.Image != nil {
		b.art.Image.Components = o.image + ":" + version
		if o.imageRef == imageRefDigest {
			b.art.Image.Components = o.image + "@" + b.art.Image.Digest
		}
	}
	return b, nil
}

// managerBuild is the one build section --binaries compiles: providers of
// a tree that share a manager share it; different ones are refused.
func managerBuild(cfg *provider.Config, platforms []string) (provider.Build, error) {
	var spec provider.Build
	for i, p := range cfg.Providers {
		if i == 0 {
			spec = p.Build
			continue
		}
		if p.Build.Main != spec.Main || p.Build.Ldflags != spec.Ldflags || !slices.Equal(p.Build.Platforms, spec.Platforms) {
			return spec, usagef("--binaries builds one manager, but providers %s and %s have different build sections in %s",
				cfg.Providers[0].Name, p.Name, cfg.File)
		}
	}
	if len(platforms) > 0 {
		spec.Platforms = platforms
	}
	return spec, nil
}

func withDigest(cfg *provider.Config, digest string) *provider.Config {
	c := *cfg
	c.Providers = slices.Clone(cfg.Providers)
	for i := range c.Providers {
		img := provider.Image{}
		if c.Providers[i].Image != nil {
			img = *c.Providers[i].Image
		}
		img.NewTag, img.Digest = "", digest
		c.Providers[i].Image = &img
	}
	return &c
}

func buildImage(ctx context.Context, s streams, o *buildOptions, bins []builder.Binary, version, commit, date, source string) (*imageSummary, string, error) {
	created := time.Unix(0, 0)
	if date != "" {
		if t, err := time.Parse(time.RFC3339, date); err == nil {
			created = t
		}
	}
	remoteOpts := []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain), remote.WithUserAgent("capirepo")}
	in := make([]image.Binary, len(bins))
	sum := &imageSummary{Tag: o.image + ":" + version}
	for i, b := range bins {
		in[i] = image.Binary{OS: b.Platform.OS, Arch: b.Platform.Arch, Variant: b.Platform.Variant, Path: b.Path}
		sum.Platforms = append(sum.Platforms, b.Platform.String())
	}
	base := o.baseImage
	if base == "" {
		base = "(empty)"
	}
	fmt.Fprintf(s.errOut, "image %s: base %s, %s\n", sum.Tag, base, strings.Join(sum.Platforms, ", "))
	idx, err := image.Build(ctx, image.Options{Binaries: in, Base: o.baseImage, Source: source, Version: version, Revision: commit,
		Created: created, Remote: remoteOpts})
	if err != nil {
		return nil, "", err
	}
	d, err := idx.Digest()
	if err != nil {
		return nil, "", err
	}
	sum.Digest = d.String()
	if o.imageLayout != "" {
		if err := image.WriteLayout(o.imageLayout, idx, version); err != nil {
			return nil, "", err
		}
		sum.Layout = o.imageLayout
		fmt.Fprintf(s.errOut, "  OCI layout %s (%s)\n", o.imageLayout, sum.Digest)
	}
	if o.imagePush {
		if _, err := image.Push(ctx, idx, o.image, version, remoteOpts...); err != nil {
			return nil, "", err
		}
		sum.Pushed = true
		fmt.Fprintf(s.errOut, "  pushed %s@%s\n", sum.Tag, sum.Digest)
	}
	return sum, sum.Digest, nil
}

// gitSource is the https URL of the checkout's origin remote, without any
// credentials it may hold, for the image's source label; "" if none.
func gitSource(ctx context.Context, dir string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "remote", "get-url", "origin").Output()
	if err != nil {
		return ""
	}
	return sourceURL(strings.TrimSpace(string(out)))
}

func sourceURL(remoteURL string) string {
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

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// ---- capirepo release ----

type releaseOptions struct {
	build     buildOptions
	publish   []string
	dryRun    bool
	replace   bool
	githubAPI string
	gitlabURL string
	// gitlabTokenType is private, bearer or job (CI_JOB_TOKEN).
	gitlabTokenType string
}

// target is one --publish URL.
type target struct {
	raw           string
	kind          string // github, gitlab, file
	owner, name   string // github
	host, project string // gitlab
	dir           string // file
}

func parseTarget(s string) (target, error) {
	t := target{raw: s}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return t, usagef("--publish %q: want github://OWNER/NAME, gitlab://HOST/PROJECT or file://DIR", s)
	}
	t.kind = scheme
	switch scheme {
	case "github":
		owner, name, ok := strings.Cut(strings.Trim(rest, "/"), "/")
		if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			return t, usagef("--publish %q: want github://OWNER/NAME", s)
		}
		t.owner, t.name = owner, name
	case "gitlab":
		host, project, ok := strings.Cut(strings.Trim(rest, "/"), "/")
		if !ok || host == "" || project == "" {
			return t, usagef("--publish %q: want gitlab://HOST/GROUP/[SUBGROUP/]PROJECT", s)
		}
		t.host, t.project = host, project
	case "file":
		if rest == "" {
			return t, usagef("--publish %q: want file://DIR", s)
		}
		t.dir = rest
	default:
		return t, usagef("--publish %q: unknown scheme %q (github, gitlab or file)", s, scheme)
	}
	return t, nil
}

// Step statuses in the summary.
const (
	statusOK      = "ok"
	statusFailed  = "failed"
	statusSkipped = "skipped"
	statusNotRun  = "not run"
)

type stepResult struct {
	Step   string `json:"step"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

type releaseSummary struct {
	Version   string             `json:"version"`
	DryRun    bool               `json:"dryRun"`
	Steps     []stepResult       `json:"steps"`
	Artifacts artifacts          `json:"artifacts"`
	Published []*publish.Summary `json:"published"`
}

type step struct {
	name string
	run  func(context.Context) (detail string, skipped bool, err error)
}

func newReleaseCmd(s streams, g *globalOptions) *cobra.Command {
	o := &releaseOptions{}
	cmd := &cobra.Command{
		Use:   "release",
		Short: "Build, lint, publish and verify a release in one run; stop at the first failure",
		Long: `release builds the provider tree (with --binaries and --image-push, the manager
binaries and image first), lints the release against the clusterctl and
provider contracts, publishes it to every --publish target and reads each
back through clusterctl. It stops at the first failure and prints what was
and was not done. --dry-run does everything except publishing.

Targets: github://OWNER/NAME (GITHUB_TOKEN), gitlab://HOST/PROJECT
(GITLAB_ACCESS_TOKEN), file://DIR (a local repository tree).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRelease(cmd.Context(), s, g, o)
		},
	}
	o.build.bind(cmd)
	f := cmd.Flags()
	f.StringArrayVar(&o.publish, "publish", nil, "target: github://OWNER/NAME, gitlab://HOST/PROJECT or file://DIR (repeatable)")
	f.BoolVar(&o.dryRun, "dry-run", false, "build, lint and verify the dist folder; publish nothing")
	f.BoolVar(&o.replace, "replace", false, "let published files that differ be replaced")
	f.StringVar(&o.githubAPI, "github-api-url", "", "GitHub REST API base (default $GITHUB_API_URL, else https://api.github.com/)")
	f.StringVar(&o.gitlabURL, "gitlab-url", "", "GitLab instance URL for gitlab:// targets (default https://HOST)")
	f.StringVar(&o.gitlabTokenType, "gitlab-token-type", "private", "GitLab token header for gitlab:// targets: private or bearer (GITLAB_ACCESS_TOKEN), or job (CI_JOB_TOKEN)")
	return cmd
}

func runRelease(ctx context.Context, s streams, g *globalOptions, o *releaseOptions) error {
	if err := o.build.validateArtifacts(); err != nil {
		return err
	}
	var targets []target
	for _, raw := range o.publish {
		t, err := parseTarget(raw)
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}
	if len(targets) == 0 && !o.dryRun {
		return usagef("release needs at least one --publish target, or --dry-run")
	}
	if o.githubAPI == "" {
		o.githubAPI = s.getenv("GITHUB_API_URL")
	}
	// Publishers first: a missing token or a bad URL fails before anything is built.
	publishers := make([]publish.Publisher, len(targets))
	if !o.dryRun {
		for i, t := range targets {
			p, err := o.publisher(s, t)
			if err != nil {
				return err
			}
			publishers[i] = p
		}
	}

	sum := &releaseSummary{DryRun: o.dryRun, Version: o.build.version}
	var b *built
	source := ""
	for _, t := range targets {
		if t.kind == "github" && source == "" {
			source = "https://github.com/" + t.owner + "/" + t.name
		}
	}
	steps := []step{{name: "build", run: func(ctx context.Context) (string, bool, error) {
		var err error
		if b, err = buildAll(ctx, s, &o.build, source); err != nil {
			return "", false, err
		}
		sum.Version, sum.Artifacts = b.res.Release.Version, b.art
		files, size := 0, 0
		for _, p := range b.res.Release.Providers {
			for _, f := range p.Assets() {
				files++
				size += len(f.Data)
				fmt.Fprintf(s.errOut, "  %-60s %10s\n", filepath.Join(p.Label(), p.Version, f.Name), humanBytes(int64(len(f.Data))))
			}
		}
		for _, w := range b.res.Warnings {
			fmt.Fprintf(s.errOut, "  warning: %s\n", w)
		}
		d := fmt.Sprintf("%d providers, %d files (%s)", len(b.res.Release.Providers), files, humanBytes(int64(size)))
		if n := len(b.art.Binaries); n > 0 {
			d += fmt.Sprintf("; %d binaries", n)
		}
		if img := b.art.Image; img != nil {
			d += "; image " + img.Components
		}
		return d, false, nil
	}}, {name: "lint", run: func(context.Context) (string, bool, error) {
		rep := contract.Lint(b.res.Release, contract.Options{Disabled: contract.Disabled(b.cfg.Lint)})
		if len(rep.Findings) > 0 {
			_ = rep.WriteText(s.errOut)
		}
		d := fmt.Sprintf("%d errors, %d warnings", rep.Count(contract.Error), rep.Count(contract.Warning))
		if rep.HasErrors() {
			return d, false, fmt.Errorf("lint: %s: fix them, or waive a rule with a reason in capirepo.yaml lint.disable", d)
		}
		return d, false, nil
	}}, {name: "write", run: func(context.Context) (string, bool, error) {
		if err := release.Write(o.build.out, b.res.Release); err != nil {
			return "", false, fmt.Errorf("write %s: %w", o.build.out, err)
		}
		return "dist in " + o.build.out, false, nil
	}}}
	for i, t := range targets {
		var ps *publish.Summary
		steps = append(steps, step{name: "publish " + t.raw, run: func(ctx context.Context) (string, bool, error) {
			if o.dryRun {
				return "dry run: nothing published", true, nil
			}
			var err error
			if ps, err = publishers[i].Publish(ctx, b.res.Release); err != nil {
				return "", false, err
			}
			sum.Published = append(sum.Published, ps)
			sizes := map[string]int{}
			for _, p := range b.res.Release.Providers {
				for _, f := range p.Assets() {
					sizes[f.Name] = len(f.Data)
				}
			}
			for _, n := range ps.Uploaded {
				fmt.Fprintf(s.errOut, "  uploaded %-51s %10s\n", n, humanBytes(int64(sizes[n])))
			}
			return fmt.Sprintf("%s: %d uploaded (%s), %d unchanged, %d replaced", ps.URL, len(ps.Uploaded), humanBytes(ps.BytesUploaded),
				len(ps.Skipped), len(ps.Replaced)), false, nil
		}}, step{name: "verify " + t.raw, run: func(ctx context.Context) (string, bool, error) {
			if o.dryRun {
				return "dry run: verified with the dist step below", true, nil
			}
			return o.verifyTarget(ctx, s, t, ps, b)
		}})
	}
	if o.dryRun || len(targets) == 0 {
		steps = append(steps, step{name: "verify dist", run: func(ctx context.Context) (string, bool, error) {
			return verifyDist(ctx, s, o.build.out, b.res.Release.Version, "")
		}})
	}

	failed := runSteps(ctx, s, steps, &sum.Steps)
	if g.output == "json" {
		if err := printJSON(s.out, sum); err != nil {
			return err
		}
	} else {
		writeSteps(s.errOut, sum.Steps)
		for _, p := range sum.Published {
			_ = p.WriteText(s.out)
		}
	}
	return failed
}

// runSteps runs steps in order, stops at the first failure and records
// every step's status.
func runSteps(ctx context.Context, s streams, steps []step, results *[]stepResult) error {
	pr := newProgress(s.errOut)
	var failed error
	for i, st := range steps {
		if failed != nil {
			*results = append(*results, stepResult{Step: st.name, Status: statusNotRun})
			continue
		}
		pr.start(i+1, len(steps), st.name)
		detail, skipped, err := st.run(ctx)
		r := stepResult{Step: st.name, Status: statusOK, Detail: detail}
		switch {
		case err != nil:
			r.Status, r.Detail = statusFailed, firstLine(err.Error())
			failed = fmt.Errorf("%s: %w", st.name, err)
		case skipped:
			r.Status = statusSkipped
		}
		pr.done(i+1, len(steps), r)
		*results = append(*results, r)
	}
	return failed
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func writeSteps(w io.Writer, steps []stepResult) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tSTATUS\tDETAIL")
	for _, r := range steps {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Step, r.Status, r.Detail)
	}
	_ = tw.Flush()
}

// progress writes step lines: plain lines for logs and CI, one rewritten
// line on a terminal.
type progress struct {
	w    io.Writer
	term bool
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	term := false
	if ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			term = true
		}
	}
	return &progress{w: w, term: term}
}

func (p *progress) start(n, total int, name string) {
	if p.term {
		fmt.Fprintf(p.w, "\r\033[K[%d/%d] %s ...", n, total, name)
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] %s\n", n, total, name)
}

func (p *progress) done(n, total int, r stepResult) {
	prefix := ""
	if p.term {
		prefix = "\r\033[K"
	}
	fmt.Fprintf(p.w, "%s[%d/%d] %s: %s", prefix, n, total, r.Step, r.Status)
	if r.Detail != "" {
		fmt.Fprintf(p.w, " (%s)", r.Detail)
	}
	fmt.Fprintln(p.w)
}

func (o *releaseOptions) publisher(s streams, t target) (publish.Publisher, error) {
	switch t.kind {
	case "github":
		token := s.getenv("GITHUB_TOKEN")
		if token == "" {
			return nil, usagef("--publish %s: set GITHUB_TOKEN", t.raw)
		}
		return publish.NewGitHub(publish.GitHubOptions{Owner: t.owner, Repo: t.name, Replace: o.replace,
			APIURL: o.githubAPI, Token: token, HTTPClient: httpClient(), Progress: s.errOut})
	case "gitlab":
		u := o.gitlabURL
		if u == "" {
			u = "https://" + t.host
		}
		tt, token, err := gitlabToken(s.getenv, o.gitlabTokenType)
		if err != nil {
			return nil, fmt.Errorf("--publish %s: %w", t.raw, err)
		}
		return publish.NewGitLab(publish.GitLabOptions{URL: u, Project: t.project, Replace: o.replace,
			Token: token, TokenType: tt, HTTPClient: httpClient(), Progress: s.errOut})
	case "file":
		return &localrepo.Publisher{Root: t.dir, Replace: o.replace}, nil
	}
	return nil, usagef("--publish %s: unknown target", t.raw)
}

// verifyTarget reads a published target back through clusterctl. clusterctl
// reads GitHub releases only from github.com and GitLab packages only from
// https://gitlab.* hosts; for any other API the dist folder is verified
// instead, and the detail says so.
func (o *releaseOptions) verifyTarget(ctx context.Context, s streams, t target, ps *publish.Summary, b *built) (string, bool, error) {
	version := b.res.Release.Version
	switch t.kind {
	case "file":
		rep, err := verify.Dir(ctx, t.dir, verify.Options{Version: version})
		if err != nil {
			return "", false, err
		}
		_ = rep.WriteText(s.errOut)
		return fmt.Sprintf("%d providers read back from %s through clusterctl", len(rep.Providers), t.dir), false, nil
	case "github":
		api := strings.TrimSuffix(o.githubAPI, "/") + "/"
		if o.githubAPI != "" && api != publish.DefaultGitHubAPI {
			return verifyDist(ctx, s, o.build.out, version, "clusterctl reads GitHub releases only from github.com, not "+o.githubAPI+": verified the built dist instead")
		}
	case "gitlab":
		u := o.gitlabURL
		if u == "" {
			u = "https://" + t.host
		}
		pu, err := url.Parse(u)
		if err != nil || pu.Scheme != "https" || !strings.HasPrefix(pu.Host, "gitlab.") {
			return verifyDist(ctx, s, o.build.out, version, "clusterctl reads GitLab packages only from https://gitlab.* hosts, not "+u+": verified the built dist instead")
		}
	}
	var targets []verify.Target
	for _, pu := range ps.Providers {
		tg := verify.Target{URL: pu.URL, Version: version}
		for _, p := range b.res.Release.Providers {
			if p.ID.Name == pu.Name && string(p.ID.Type) == pu.Type {
				tg.ID = p.ID
				for _, f := range p.Files {
					tg.Files = append(tg.Files, f.Name)
				}
			}
		}
		targets = append(targets, tg)
	}
	rep, err := verify.Repository(ctx, targets, verify.Options{Version: version, Variables: tokenVariables(s.getenv)})
	if err != nil {
		return "", false, err
	}
	_ = rep.WriteText(s.errOut)
	return fmt.Sprintf("%d providers read back from %s through clusterctl", len(rep.Providers), ps.URL), false, nil
}

func verifyDist(ctx context.Context, s streams, out, version, why string) (string, bool, error) {
	rep, err := verify.Dir(ctx, out, verify.Options{Version: version})
	if err != nil {
		return "", false, err
	}
	_ = rep.WriteText(s.errOut)
	d := fmt.Sprintf("%d providers in %s read back through clusterctl", len(rep.Providers), out)
	if why != "" {
		d = why + "; " + d
	}
	return d, false, nil
}
