package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/versions"
)

// MirrorOptions say what one mirror run copies, from where, to where.
type MirrorOptions struct {
	// Requests are PROVIDER[:VERSION]: a provider label (infrastructure-aws,
	// cluster-api, ...) and a version: vX.Y.Z, latest, or latest-N (latest
	// and the N published versions before it). No version means the
	// provider URL's version (latest unless it names one).
	Requests []string
	// All mirrors every provider the clusterctl config knows, at the URL's version.
	All bool
	// Clusterctl is the user's clusterctl config, whose providers (its
	// defaults and the config's providers:) the requests name and whose
	// cert-manager: entry says which cert-manager is mirrored.
	Clusterctl Clusterctl
	// CertManager mirrors cert-manager at the version clusterctl would install.
	CertManager bool

	// To is where the providers are mirrored to.
	To targets.Location
	// Target is To opened (see OpenMirrorTarget); nil opens it with TargetOptions.
	Target publish.Target
	// TargetOptions open To: its credentials, Replace (a file that changed
	// upstream under a mirrored version may be replaced), its GitLab
	// instance, the registry's settings.
	TargetOptions targets.Options
	// Sources open the repositories the provider URLs point into: the
	// GitHub REST API base (GitHub.APIURL, for GitHub Enterprise or a test
	// server), the tokens (Getenv), the HTTP client and retry policy.
	Sources targets.Options

	// Images, when set, is REGISTRY/PREFIX: every image the mirrored
	// components reference is copied below it.
	Images string
	// Registry authenticates and routes the image copies (keychain,
	// transport, bounded waits).
	Registry publish.Registry

	// RequireSignatures, when set, refuses to copy anything unless every
	// version is signed upstream for this verifier (mirror_signatures.go).
	RequireSignatures *sign.Verifier

	// Concurrency bounds how many providers are mirrored at once; 0 means 4.
	Concurrency int
	// NoVerify skips reading the mirror back through clusterctl.
	NoVerify bool
	// Variables are clusterctl config values for the read-back (gitlab-access-token).
	Variables map[string]string
	// ConfigOut, when set, is the file the site's config (Summary.Config)
	// is written to (atomically, when it changed) once every step passed.
	ConfigOut string

	// Log receives one line per step; nil discards it.
	Log io.Writer
	// Progress hears of each provider version copied (one line rewritten
	// in place on a terminal); nil means none.
	Progress Progress
}

// MirrorSummary is what a mirror run did.
type MirrorSummary struct {
	To          string              `json:"target"`
	Providers   []*MirroredProvider `json:"providers"`
	CertManager *MirroredVersion    `json:"certManager,omitempty"`
	Images      []MirroredImage     `json:"images,omitempty"`
	// Config is the clusterctl config for the site, pointing at the mirror;
	// for a mirror clusterctl cannot read (an OCI registry), the resources
	// of the reader that can (cluster-api-operator's Provider resources).
	Config string `json:"config,omitempty"`
	// ConfigFor names who reads Config when it is not clusterctl ("the
	// operator"); "" for a clusterctl config.
	ConfigFor string `json:"configFor,omitempty"`
	Verified  int    `json:"verified"`
	// Warnings are things the site should know that did not stop the run.
	Warnings []string `json:"warnings,omitempty"`
	// ConfigFile is where ConfigOut was written (absolute).
	ConfigFile string `json:"-"`

	failed bool
}

// MirroredProvider is one provider and the versions copied.
type MirroredProvider struct {
	Label    string             `json:"label"`
	Name     string             `json:"name"`
	Type     string             `json:"type"`
	Source   string             `json:"source"`
	Versions []*MirroredVersion `json:"versions"`
	Error    string             `json:"error,omitempty"`

	id         provider.ID
	components string // the components file the provider URL names
	urlVersion string // the version the provider URL names: latest or vX.Y.Z
	reader     publish.Source
	wants      []string
	resolved   []string
	read       map[string]*release.Provider
	meta       map[string][]byte
}

// MirroredVersion is one copied version: what was written and what was
// already there, and the URL clusterctl reads it from at the mirror.
type MirroredVersion struct {
	Version  string   `json:"version"`
	URL      string   `json:"url"`
	Uploaded []string `json:"uploaded"`
	Skipped  []string `json:"skipped"`
	Replaced []string `json:"replaced"`
	Bytes    int64    `json:"bytes"`

	files []string
}

// Mirror copies providers (and cert-manager, and the images) from their
// upstream repositories to the target, then reads every copied version
// back through clusterctl. Providers are copied Concurrency at a time; one
// that fails does not stop the others, and the error names each provider,
// version and file. A re-run copies only what is missing; a file that
// changed upstream under a version already mirrored is refused unless the
// target was opened with Replace.
func Mirror(ctx context.Context, o MirrorOptions) (*MirrorSummary, error) {
	sum, err := mirrorRun(ctx, o)
	if sum == nil {
		return nil, err
	}
	if sum.failed = err != nil; err == nil && o.ConfigOut != "" {
		if sum.ConfigFile, _, err = publish.WriteFileIfChanged(o.ConfigOut, []byte(sum.Config)); err != nil {
			sum.failed, err = true, fmt.Errorf("%s: %w", option.Flag(ctx, option.ConfigOut), err)
		}
	}
	return sum, err
}

func mirrorRun(ctx context.Context, o MirrorOptions) (*MirrorSummary, error) {
	if err := o.Validate(ctx); err != nil {
		return nil, err
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Target == nil {
		t, err := OpenMirrorTarget(ctx, o.To, o.TargetOptions)
		if err != nil {
			return nil, fmt.Errorf("%s %w", option.Flag(ctx, option.To), err)
		}
		o.Target = t
	}
	cfg := o.Clusterctl.Config
	if cfg == nil {
		return nil, errors.New("mirror: no clusterctl config to find the providers in")
	}
	provs, err := selectProviders(cfg, o.Requests, o.All)
	if err != nil {
		return nil, err
	}
	m := &mirror{o: o, reach: o.Target.Clusterctl(), sum: &MirrorSummary{To: o.To.URL, Providers: provs}, readers: map[string]publish.Source{}}
	for _, p := range provs {
		if p.reader, err = m.source(ctx, p); err != nil {
			return nil, err
		}
	}

	// Every version is resolved (its metadata.yaml read) before anything
	// is copied, so a request that cannot be met stops the run with
	// nothing written.
	if err := m.each(ctx, provs, m.resolveProvider); err != nil {
		return m.sum, err
	}
	if o.RequireSignatures != nil {
		if err := m.each(ctx, provs, m.requireSignatures); err != nil {
			return m.sum, err
		}
	}
	for _, p := range provs {
		m.total += len(p.resolved)
	}
	errs := []error{m.each(ctx, provs, m.provider)}
	if o.CertManager {
		if err := m.certManager(ctx, cfg); err != nil {
			errs = append(errs, fmt.Errorf("cert-manager: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return m.sum, err
	}
	if o.Images != "" {
		if err := m.images(ctx); err != nil {
			return m.sum, err
		}
	}
	if m.sum.Config, err = m.siteConfig(); err != nil {
		return m.sum, err
	}
	if m.reach.ProviderURL == nil {
		m.sum.ConfigFor = m.reach.Reader
	}
	if !o.NoVerify {
		if err := m.verify(ctx); err != nil {
			return m.sum, fmt.Errorf("verify the mirror through clusterctl: %w", err)
		}
	}
	return m.sum, nil
}

// Validate says, before anything is read, what the options cannot ask
// for: providers to mirror are named (Requests) or All is set, not both.
// The errors are publish.UsageErrors.
func (o MirrorOptions) Validate(ctx context.Context) error {
	switch {
	case o.All && len(o.Requests) > 0:
		return publish.Usagef("%s mirrors every provider of the clusterctl config: give no PROVIDER with it", option.Flag(ctx, option.All))
	case !o.All && len(o.Requests) == 0:
		return publish.Usagef("name at least one PROVIDER[:VERSION] (e.g. infrastructure-aws:latest), or %s", option.Flag(ctx, option.All))
	}
	return nil
}

type mirror struct {
	o     MirrorOptions
	reach publish.Reach // how clusterctl reads the target
	sum   *MirrorSummary

	mu      sync.Mutex
	readers map[string]publish.Source // by source repository
	// done and total count the provider versions, for Progress.
	done, total int
	// certManagerComponents is cert-manager's manifest, for its images.
	certManagerComponents []byte
}

func (m *mirror) logf(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, _ = fmt.Fprintf(m.o.Log, "mirror: "+format+"\n", args...)
}

// selectProviders resolves the requests (or --all) through clusterctl's
// provider list: its defaults and the user's providers: overrides.
func selectProviders(cfg config.Client, requests []string, all bool) ([]*MirroredProvider, error) {
	list, err := cfg.Providers().List()
	if err != nil {
		return nil, fmt.Errorf("clusterctl providers: %w", err)
	}
	byLabel := map[string]config.Provider{}
	for _, p := range list {
		byLabel[p.ManifestLabel()] = p
	}
	mk := func(p config.Provider) *MirroredProvider {
		return &MirroredProvider{Label: p.ManifestLabel(), Name: p.Name(), Type: string(p.Type()), Source: p.URL(),
			id:   provider.ID{Name: p.Name(), Type: p.Type()},
			read: map[string]*release.Provider{}, meta: map[string][]byte{}}
	}
	var out []*MirroredProvider
	if all {
		for _, p := range list {
			out = append(out, mk(p))
		}
		return out, nil
	}
	// One entry per provider, with every version asked for: the versions
	// of one provider are written one after the other.
	byReq := map[string]*MirroredProvider{}
	for _, r := range requests {
		label, version, _ := strings.Cut(r, ":")
		p, ok := byLabel[label]
		if !ok {
			return nil, fmt.Errorf("provider %q is not in clusterctl's provider list nor in the providers: of the clusterctl config: use a provider label such as infrastructure-aws or cluster-api, or add the provider to the config's providers list", label)
		}
		if version != "" {
			w, ok := versions.ParseWant(version)
			if !ok {
				return nil, fmt.Errorf("%s: version %q: want vX.Y.Z, latest or latest-N", r, version)
			}
			if _, err := provider.ParseVersion(w.Version); !w.Latest && err != nil {
				return nil, fmt.Errorf("%s: version %q: want vX.Y.Z, latest or latest-N", r, version)
			}
		}
		mp, ok := byReq[label]
		if !ok {
			mp = mk(p)
			byReq[label] = mp
			out = append(out, mp)
		}
		if !slices.Contains(mp.wants, version) {
			mp.wants = append(mp.wants, version)
		}
	}
	return out, nil
}

// source returns the reader of a provider URL (a GitHub release, a GitLab
// package, a local folder: whatever publish/targets reads) and takes the
// components file and version the URL names. Providers of one repository
// share a reader.
func (m *mirror) source(ctx context.Context, p *MirroredProvider) (publish.Source, error) {
	loc, version, components, err := targets.ParseProviderURL(p.Source)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Label, err)
	}
	p.components, p.urlVersion = components, version
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.readers[loc.Key]
	if !ok {
		if r, err = loc.Open(ctx, m.o.Sources); err != nil {
			return nil, fmt.Errorf("%s: %w", p.Label, err)
		}
		m.readers[loc.Key] = r
	}
	return r, nil
}

// ref is one version of a provider, with the components file its URL names.
func (p *MirroredProvider) ref(version string) publish.Ref {
	return publish.Ref{ID: p.id, Version: version, Components: p.components}
}

// alreadyThere compares the source's listing of a version with the
// target's: a version the target holds with every file of the same sha256
// is not downloaded again. It returns nil when the version must be copied
// (or compared by the publisher, which refuses a changed file without
// Replace).
func (m *mirror) alreadyThere(ctx context.Context, p *MirroredProvider, v string) (*MirroredVersion, error) {
	if m.reach.ProviderURL == nil { // the publisher compares what it writes
		return nil, nil
	}
	// The mirror holds no checksums.txt, so its copy is compared by listing:
	// every file of the release there, with the same sha256 and size.
	have, err := m.o.Target.List(ctx, p.ref(v))
	if err != nil {
		// Not there, or not whole (an interrupted upload): the publisher
		// compares file by file and finishes it.
		if !errors.Is(err, publish.ErrNotFound) {
			m.logf("%s %s: the mirror's copy cannot be listed whole (%v): copying", p.Label, v, err)
		}
		return nil, nil
	}
	components, want, err := publish.ReleaseFiles(ctx, p.reader, p.ref(v), have)
	if err != nil {
		return nil, err
	}
	// The signatures and SBOMs upstream holds are copied too.
	extra, err := extras(ctx, p.reader, p.ref(v))
	if err != nil {
		return nil, err
	}
	maps.Copy(want, extra)
	mv := &MirroredVersion{Version: v, Uploaded: []string{}, Replaced: []string{}}
	for name, w := range want {
		h, ok := have[name]
		if !ok || w.SHA256 == "" || w.SHA256 != h.SHA256 || w.Size != h.Size {
			return nil, nil
		}
		if !isMirrorExtra(name) {
			mv.files = append(mv.files, name)
		}
	}
	slices.Sort(mv.files)
	mv.Skipped = m.targetNames(p, v, components, slices.Sorted(maps.Keys(want)))
	mv.URL = m.reach.ProviderURL(p.ref(v))
	return mv, nil
}

// targetNames names files of one provider version as the target's Publish
// names them in its summary (publish.Planner: LABEL/VERSION/NAME in a
// folder tree, PACKAGE/NAME in GitLab), so a version found already there
// is said as one the publisher compared; LABEL/NAME for a target that
// cannot say.
func (m *mirror) targetNames(p *MirroredProvider, v, components string, names []string) []string {
	if pl, ok := m.o.Target.(publish.Planner); ok {
		rp := &release.Provider{ID: p.id, Version: v, ComponentsFile: components, NoChecksums: true}
		for _, n := range names {
			rp.Files = append(rp.Files, release.File{Name: n})
		}
		if out, err := pl.Planned(&release.Release{Version: v, Providers: []*release.Provider{rp}}); err == nil && len(out) == len(names) {
			return slices.Sorted(slices.Values(out))
		}
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = p.Label + "/" + n
	}
	return out
}

// read reads one version once (the latest resolution reads metadata.yaml of
// candidates, and those are mirrored afterwards, without reading it again).
func (m *mirror) read(ctx context.Context, p *MirroredProvider, version string) (*release.Provider, error) {
	if rp, ok := p.read[version]; ok {
		return rp, nil
	}
	var have []release.File
	m.mu.Lock()
	if meta, ok := p.meta[version]; ok {
		have = append(have, release.File{Name: provider.MetadataFile, Data: meta})
	}
	m.mu.Unlock()
	// The files clusterctl reads, and the release's other assets as they are.
	rp, err := publish.ReadRelease(ctx, p.reader, p.ref(version), have...)
	if err != nil {
		return nil, err
	}
	if err := addExtras(ctx, p.reader, p.ref(version), rp); err != nil {
		return nil, err
	}
	p.read[version] = rp
	return rp, nil
}

// each runs fn for every provider, Concurrency at a time; a provider that
// fails does not stop the others. The errors name the provider.
func (m *mirror) each(ctx context.Context, provs []*MirroredProvider, fn func(context.Context, *MirroredProvider) error) error {
	return boundedEach(ctx, len(provs), m.o.Concurrency, func(i int) error {
		p := provs[i]
		if err := fn(ctx, p); err != nil {
			p.Error = err.Error()
			return fmt.Errorf("%s: %w", p.Label, err)
		}
		return nil
	})
}

// boundedEach runs fn(i) for every i below n, at most limit at a time, and
// joins the errors; the calls a cancelled ctx keeps from starting fail with
// its error, and one failure stops none of the others.
func boundedEach(ctx context.Context, n, limit int, fn func(i int) error) error {
	var wg sync.WaitGroup
	sem := make(chan struct{}, limit)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-sem }()
			errs[i] = fn(i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// resolveProvider resolves the versions of one provider, oldest first.
func (m *mirror) resolveProvider(ctx context.Context, p *MirroredProvider) error {
	wants := p.wants
	if len(wants) == 0 {
		wants = []string{""}
	}
	for _, want := range wants {
		if want == "" {
			want = p.urlVersion
		}
		vs, err := m.resolve(ctx, p, want)
		if err != nil {
			return err
		}
		m.logf("%s: %s resolves to %s", p.Label, want, strings.Join(vs, ", "))
		for _, v := range vs {
			if !slices.Contains(p.resolved, v) {
				p.resolved = append(p.resolved, v)
			}
		}
	}
	slices.SortFunc(p.resolved, versions.Compare)
	return nil
}

// provider mirrors the resolved versions of one provider, oldest first.
func (m *mirror) provider(ctx context.Context, p *MirroredProvider) error {
	for _, v := range p.resolved {
		n := m.start(p.Label + " " + v)
		mv, err := m.version(ctx, p, v)
		m.finish(n, p.Label+" "+v, mv, err)
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *mirror) start(what string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done++
	if m.o.Progress != nil {
		m.o.Progress.Start(m.done, m.total, what)
	}
	return m.done
}

func (m *mirror) finish(n int, what string, mv *MirroredVersion, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.o.Progress == nil {
		return
	}
	r := StepResult{Step: what, Status: StatusOK}
	switch {
	case err != nil:
		r.Status, r.Detail = StatusFailed, firstLine(err.Error())
	case mv != nil:
		r.Detail = fmt.Sprintf("%d copied, %d already there, %d replaced", len(mv.Uploaded), len(mv.Skipped), len(mv.Replaced))
	}
	m.o.Progress.Done(n, m.total, r)
}

// version mirrors one version of a provider: nothing downloaded when the
// target lists the same files, else read and published (the publisher
// compares and writes what is missing).
func (m *mirror) version(ctx context.Context, p *MirroredProvider, v string) (*MirroredVersion, error) {
	if mv, err := m.alreadyThere(ctx, p, v); err != nil {
		return nil, fmt.Errorf("version %s: %w", v, err)
	} else if mv != nil {
		m.mu.Lock()
		p.Versions = append(p.Versions, mv)
		m.mu.Unlock()
		m.logf("%s %s: all %d files already there, nothing downloaded", p.Label, v, len(mv.Skipped))
		return mv, nil
	}
	rp, err := m.read(ctx, p, v)
	if err != nil {
		return nil, fmt.Errorf("read %s from %s: %w", v, p.Source, err)
	}
	rp.NoChecksums = true // only what the release holds
	sum, err := m.o.Target.Publish(ctx, &release.Release{Version: v, Providers: []*release.Provider{rp}})
	if err != nil {
		return nil, fmt.Errorf("version %s: %w", v, err)
	}
	mv := &MirroredVersion{Version: v, Uploaded: sum.Uploaded, Skipped: sum.Skipped, Replaced: sum.Replaced, Bytes: sum.BytesUploaded}
	for _, pu := range sum.Providers {
		if pu.Name == p.Name && pu.Type == p.Type {
			mv.URL = pu.URL
		}
	}
	for _, f := range rp.Files {
		if !isMirrorExtra(f.Name) {
			mv.files = append(mv.files, f.Name)
		}
	}
	m.mu.Lock()
	p.Versions = append(p.Versions, mv)
	m.mu.Unlock()
	m.logf("%s %s: %d written, %d already there, %d replaced", p.Label, v, len(mv.Uploaded), len(mv.Skipped), len(mv.Replaced))
	return mv, nil
}

// WriteJSON prints the summary as one JSON document on out.
func (s *MirrorSummary) WriteJSON(out, _ io.Writer) error { return writeJSON(out, s) }

// WriteText prints what a mirror run did besides each version's counts,
// which were said as it was copied: the images' counts and the warnings on
// errOut; then, once every step passed, the site's config on out (or where
// ConfigOut wrote it, on errOut).
func (s *MirrorSummary) WriteText(out, errOut io.Writer) error {
	if len(s.Images) > 0 {
		copied := 0
		for _, i := range s.Images {
			if i.Copied {
				copied++
			}
		}
		fmt.Fprintf(errOut, "images: %d copied, %d already there\n", copied, len(s.Images)-copied)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(errOut, "warning: %s\n", w)
	}
	what := "clusterctl config for the site"
	if s.ConfigFor != "" {
		what = "Provider resources of " + s.ConfigFor + " for the site (clusterctl cannot install from this mirror)"
	}
	switch {
	case s.failed:
	case s.ConfigFile != "":
		fmt.Fprintf(errOut, "%s written to %s\n", what, s.ConfigFile)
	default:
		if _, err := io.WriteString(out, s.Config); err != nil {
			return err
		}
		if s.ConfigFor != "" {
			fmt.Fprintf(errOut, "%s on stdout\n", what)
		}
	}
	return nil
}
