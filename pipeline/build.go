package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/image"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
)

// How the components name a built image (BuildOptions.ImageRef).
const (
	ImageRefTag    = "tag"    // REPO:VERSION
	ImageRefDigest = "digest" // REPO@sha256:...
)

// BuildOptions say what one build makes.
type BuildOptions struct {
	// Dir is the provider tree; it is only read.
	Dir string
	// ConfigPath names a capirepo.yaml or clusterctl-settings.json; "" looks in Dir.
	ConfigPath string
	// Version is the release version; "" means the config's.
	Version string
	// Out is the dist folder: binaries go to Out/bin (the release files are
	// written by the caller, or by Release's write step).
	Out string
	// Image is the repository of the manager's image (tag = version).
	Image       string
	AllowRemote bool
	// LockTimeout bounds the wait for another capirepo writing into Out;
	// 0 means the default (2 minutes).
	LockTimeout time.Duration

	// Binaries compiles the manager for Platforms ("" = the config's).
	Binaries  bool
	Platforms []string
	// ImagePush pushes, and ImageLayout writes as an OCI layout, an image
	// made of the binaries; either builds the binaries.
	ImagePush   bool
	ImageLayout string
	// ImageRef is ImageRefTag or ImageRefDigest.
	ImageRef string
	// BaseImage is the manager image's base; "" means image.DefaultBase,
	// image.NoBase the bare binary (with a warning).
	BaseImage string
	// Source is the image's source label; "" means the https URL of Dir's
	// origin remote.
	Source string

	// Disabled waives lint rules (--disable), with capirepo.yaml's waivers.
	Disabled map[string]string

	// SourceDateEpoch is $SOURCE_DATE_EPOCH, for reproducible binaries.
	SourceDateEpoch string
	// Env is the environment the go command starts from.
	Env []string
	// Keychain gives registry credentials to pull the base image and push;
	// nil means anonymous.
	Keychain authn.Keychain
}

func (o *BuildOptions) buildsImage() bool { return o.ImagePush || o.ImageLayout != "" }

// Built is one build: the rendered release and what was made beside it.
type Built struct {
	Result *builder.Result
	// Config is the config the release was rendered from, naming the image
	// by digest when ImageRef is ImageRefDigest.
	Config    *provider.Config
	Artifacts Artifacts
}

// Artifacts are what a build makes besides the release files.
type Artifacts struct {
	Binaries []builder.Binary `json:"binaries,omitempty"`
	Image    *image.Built     `json:"image,omitempty"`
}

// Build makes the binaries, then the image (so its digest is known), then
// renders the release; it does not write the release. Progress goes to log.
func Build(ctx context.Context, o BuildOptions, log io.Writer) (*Built, error) {
	if log == nil {
		log = io.Discard
	}
	cfg, err := provider.LoadConfig(o.Dir, o.ConfigPath)
	if err != nil {
		return nil, err
	}
	version := o.Version
	if version == "" {
		version = cfg.Version
	}
	if version == "" {
		return nil, builder.ErrNoVersion
	}
	if _, err := provider.ParseVersion(version); err != nil {
		return nil, err
	}
	// The config's before: commands run first, as GoReleaser's before
	// hooks do: what they generate may be needed by go build too.
	if err := RunBefore(ctx, o.Dir, cfg, log); err != nil {
		return nil, err
	}
	b := &Built{Config: cfg}
	var commit, date string
	if o.Binaries || o.buildsImage() {
		spec, err := cfg.ManagerBuild(o.Platforms)
		if err != nil {
			return nil, err
		}
		commit, date = builder.CommitInfo(ctx, o.Dir, o.SourceDateEpoch)
		fmt.Fprintf(log, "go build %s for %s\n", spec.Main, strings.Join(spec.Platforms, ", "))
		b.Artifacts.Binaries, err = builder.BuildBinaries(ctx, builder.BinaryOptions{
			Dir: o.Dir, Out: o.Out, Build: spec, Version: version, Commit: commit,
			SourceDateEpoch: o.SourceDateEpoch, Env: o.Env, Log: log,
		})
		if err != nil {
			return nil, err
		}
		for _, bin := range b.Artifacts.Binaries {
			fmt.Fprintf(log, "  %-45s %10s  sha256:%s\n", bin.Path, text.Bytes(bin.Size), bin.SHA256[:16])
		}
	}
	if o.buildsImage() {
		source := o.Source
		if source == "" {
			source = builder.SourceURL(ctx, o.Dir)
		}
		bins := make([]image.Binary, len(b.Artifacts.Binaries))
		for i, bin := range b.Artifacts.Binaries {
			bins[i] = image.Binary{OS: bin.Platform.OS, Arch: bin.Platform.Arch, Variant: bin.Platform.Variant, Path: bin.Path}
		}
		img, err := image.Manager(ctx, image.ManagerOptions{
			Repo: o.Image, Tag: cfg.ImageTag(version), Binaries: bins, Base: o.BaseImage,
			Source: source, Version: version, Revision: commit, Created: date,
			Layout: o.ImageLayout, Push: o.ImagePush, Remote: publish.RegistryOptions(publish.Registry{Keychain: o.Keychain}), Log: log,
		})
		if err != nil {
			return nil, err
		}
		b.Artifacts.Image = img
		if o.ImageRef == ImageRefDigest {
			b.Config = cfg.WithImageDigest(img.Digest)
		}
	}
	bo := builder.Options{Dir: o.Dir, Config: b.Config, Version: version, Image: o.Image, AllowRemote: o.AllowRemote}
	if b.Result, err = builder.Build(ctx, bo); err != nil {
		sayNotices(log, err)
		return nil, err
	}
	if img := b.Artifacts.Image; img != nil {
		img.Components = o.Image + ":" + cfg.ImageTag(version)
		if o.ImageRef == ImageRefDigest {
			img.Components = o.Image + "@" + img.Digest
		}
	}
	if len(b.Artifacts.Binaries) > 0 {
		created, _ := time.Parse(time.RFC3339, date)
		if err := sign.AddSBOMs(ctx, b.Result.Release, sbomOptions(b, o, created, log)); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// sbomOptions ask for the SBOMs of what b built: its manager binaries and
// image.
func sbomOptions(b *Built, o BuildOptions, created time.Time, log io.Writer) sign.ReleaseSBOMOptions {
	so := sign.ReleaseSBOMOptions{Created: created, Remote: publish.RegistryOptions(publish.Registry{Keychain: o.Keychain}), Log: log}
	for _, bin := range b.Artifacts.Binaries {
		so.Binaries = append(so.Binaries, sign.Binary{Path: bin.Path, Platform: bin.Platform.String()})
	}
	if img := b.Artifacts.Image; img != nil {
		so.Image = &sign.SBOMImage{Repo: img.Repository(), Digest: img.Digest, Base: img.Base, Pushed: img.Pushed}
	}
	return so
}

// NextVersion is the version a build of the tree in dir takes when it is
// given none: "" when the config names one (the build takes it), else the
// version the tree is developing (provider.NextVersion of its first
// provider; the providers of a tree share one metadata.yaml); from says
// where it came from.
func NextVersion(dir, configPath string) (version, from string, err error) {
	cfg, err := provider.LoadConfig(dir, configPath)
	if err != nil || cfg.Version != "" {
		return "", "", err
	}
	return provider.NextVersion(dir, cfg.Providers[0])
}

// nextVersionTagged says that version, the next version a tree is built
// with when none is given (from says where it came from), is already a tag
// of the tree's git repository: a dev build or a lint of it would pass for
// that release. "" when it is not (or git cannot tell).
func nextVersionTagged(ctx context.Context, dir, version, from string) string {
	return (*tagMemo)(nil).nextVersionTagged(ctx, dir, version, from)
}

// tagMemo remembers nextVersionTagged's git answers for one watch: a tag
// made while it runs is seen at the next start. A nil memo asks git each
// time.
type tagMemo struct {
	mu      sync.Mutex
	commits map[[2]string]string
}

func (m *tagMemo) nextVersionTagged(ctx context.Context, dir, version, from string) string {
	commit := m.tagCommit(ctx, dir, version)
	if commit == "" {
		return ""
	}
	return fmt.Sprintf("%s: the next version %s (%s) is already released: git tag %s (commit %.12s) is in the tree's repository, so what is built now would pass for that release; raise nextVersion to the release being developed, or give %s",
		dir, version, from, version, commit, option.Flag(ctx, option.Version))
}

func (m *tagMemo) tagCommit(ctx context.Context, dir, tag string) string {
	if m == nil {
		return builder.TagCommit(ctx, dir, tag)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := [2]string{dir, tag}
	if c, ok := m.commits[key]; ok {
		return c
	}
	if m.commits == nil {
		m.commits = map[[2]string]string{}
	}
	m.commits[key] = builder.TagCommit(ctx, dir, tag)
	return m.commits[key]
}

// BuildRelease runs the release pipeline's steps up to write, without the
// registry checks between them (upgrade, images): Build, then the run's
// lint and write steps. An error-level finding stops it before anything
// is written. log hears each step (files, findings, writes).
func BuildRelease(ctx context.Context, o BuildOptions, log io.Writer) (*BuildReport, error) {
	if log == nil {
		log = io.Discard
	}
	b, err := Build(ctx, o, log)
	if err != nil {
		return nil, err
	}
	// Said before the lint, as release says them: a tree the lint refuses
	// still hears them (kustomize's deprecation notices among them).
	sayBuild(log, "", b.Result)
	r := &run{o: ReleaseOptions{Build: o, Log: log}, sum: &ReleaseSummary{}, b: b}
	if _, _, err := r.lint(ctx); err != nil {
		return nil, fmt.Errorf("lint: %w; nothing was written", err)
	}
	if _, _, err := r.write(ctx); err != nil {
		return nil, err
	}
	res := b.Result
	rep := &BuildReport{Version: res.Release.Version, Out: o.Out, Providers: res.Providers, Files: map[string][]FileSummary{}, Edits: text.NonNil(res.Edits), Warnings: res.Warnings,
		Artifacts: b.Artifacts, Findings: r.sum.Findings, Waived: r.sum.Waived, rel: res.Release}
	for _, p := range res.Release.Providers {
		for _, f := range p.Assets() {
			rep.Files[p.Label()] = append(rep.Files[p.Label()], FileSummary{Name: f.Name, Size: len(f.Data), SHA256: f.SHA256()})
		}
	}
	return rep, nil
}

// BuildReport is what BuildRelease built and wrote; it prints itself.
type BuildReport struct {
	Version   string                   `json:"version"`
	Out       string                   `json:"out"`
	Providers []builder.ProviderResult `json:"providers"`
	Files     map[string][]FileSummary `json:"files"`
	// Edits are the changes the build made to what the tree renders.
	Edits    []builder.Edit `json:"edits"`
	Warnings []string       `json:"warnings"`
	// Findings and Waived are the lint's, as in the release's summary.
	Findings []contract.Finding       `json:"findings"`
	Waived   []contract.WaivedFinding `json:"waived"`
	Artifacts

	rel *release.Release
}

// FileSummary is one written file.
type FileSummary struct {
	Name   string `json:"name"`
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
}

// WriteText prints each provider's folder, objects, images, variables and
// files.
func (r *BuildReport) WriteText(w io.Writer) {
	for i, p := range r.rel.Providers {
		pr := r.Providers[i]
		fmt.Fprintf(w, "%s %s -> %s\n", p.Label(), p.Version, p.Dir(r.Out))
		fmt.Fprintf(w, "  namespace %s, %d objects, images %v\n", pr.Namespace, pr.Objects, pr.Images)
		writeVariables(w, pr.Variables)
		for _, f := range r.Files[p.Label()] {
			fmt.Fprintf(w, "  %-45s %8d  sha256:%s\n", filepath.Base(f.Name), f.Size, f.SHA256[:16])
		}
	}
}

// WriteJSON prints the report as one JSON document.
func (r *BuildReport) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

func writeVariables(w io.Writer, vars []builder.Variable) {
	if len(vars) == 0 {
		fmt.Fprintln(w, "  variables: none")
		return
	}
	fmt.Fprintln(w, "  variables:")
	for _, v := range vars {
		if v.Required {
			fmt.Fprintf(w, "    %s (required)\n", v.Name)
		} else {
			fmt.Fprintf(w, "    %s (default %q)\n", v.Name, *v.Default)
		}
	}
}

// sayBuild prints what a build says besides its files, a line each, as
// build, release and lint of a tree say it: every edit it made to what the
// tree renders (image, pull policy) with its count, then its warnings.
// indent starts each line.
func sayBuild(log io.Writer, indent string, res *builder.Result) {
	for _, e := range res.Edits {
		fmt.Fprintf(log, "%sedited: %s\n", indent, e)
	}
	sayWarnings(log, indent, res.Warnings)
}

func sayWarnings(log io.Writer, indent string, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(log, "%swarning: %s\n", indent, w)
	}
}

// sayNotices prints the kustomize deprecation notices a failed build
// carries (builder.Error), as a build that passes says its warnings.
func sayNotices(log io.Writer, err error) {
	if be := (*builder.Error)(nil); errors.As(err, &be) {
		sayWarnings(log, "", be.Warnings)
	}
}
