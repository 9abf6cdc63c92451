package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/dirlock"
	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/local"
	"github.com/capirepo/capirepo/release"
)

// Names inside the dev repository.
const (
	DevConfigFile  = "config.yaml"
	DevOverrides   = "overrides"
	DevCacheFile   = ".capirepo-dev-cache.json"
	devCacheSchema = 2 // 2: entries keep the build's warnings
)

// DevOptions say what capirepo dev builds and where it writes.
type DevOptions struct {
	// Dir is the provider tree (only read).
	Dir string
	// ConfigPath names a capirepo.yaml or clusterctl-settings.json; "" looks
	// in Dir. A settings file with providers/provider_repos pulls in other
	// provider trees, as create-local-repository.py does.
	ConfigPath string
	// Root is the dev repository; "" means the default folder in
	// clusterctl's configuration folder that Env names
	// (local.Env.DevRepository).
	Root string
	// Env is what clusterctl reads from the process to find its folders:
	// the caller's environment, for the default Root.
	Env local.Env
	// Version, when set, is built for every provider instead of its nextVersion.
	Version string
	// Image sets the repository of the manager image (tag = version);
	// without it the image the kustomization names is kept.
	Image string
	// AllowRemote lets kustomizations pull remote bases, as build's
	// --allow-remote; what they pull is not in the tree, so it is rendered
	// on every run.
	AllowRemote bool
	// BuildID identifies the capirepo build; a different one re-renders
	// everything, since rendering may have changed.
	BuildID string
	// Progress receives one line per provider; nil discards.
	Progress io.Writer
	// LockTimeout is the longest wait for another capirepo writing into
	// Root; 0 means dirlock.DefaultTimeout.
	LockTimeout time.Duration
	// ConfigOut, when set, is a file the clusterctl config is written to as
	// well (atomically, only when its content changed), for the init line.
	ConfigOut string
	// RenderCache, when set, keeps kustomize renders between runs of one
	// process: a run re-renders only the kustomizations that read a changed
	// file. DevWatch gives its runs one.
	RenderCache *builder.RenderCache

	// tags, when set, remembers which next versions are git tags, so a
	// watch asks git once per provider and version, not on every save.
	tags *tagMemo
}

// DevResult says what capirepo dev wrote.
type DevResult struct {
	Root       string                   `json:"root"`
	ConfigFile string                   `json:"configFile"`
	Providers  []DevProvider            `json:"providers"`
	Init       string                   `json:"init"`
	Warnings   []string                 `json:"warnings"`
	Config     publish.ClusterctlConfig `json:"config"`
	// ConfigOut is the absolute path of DevOptions.ConfigOut, the config
	// the init line names; ConfigOutWritten says this run changed it.
	ConfigOut        string `json:"configOut,omitempty"`
	ConfigOutWritten bool   `json:"configOutWritten,omitempty"`
}

// DevProvider is one provider of the dev repository.
type DevProvider struct {
	Label   string `json:"label"`
	Name    string `json:"name"`
	Type    string `json:"type"`
	Version string `json:"version"`
	// VersionFrom says where the version came from: --version, nextVersion
	// or metadata.yaml.
	VersionFrom string `json:"versionFrom"`
	Source      string `json:"devSource"`
	URL         string `json:"url"`
	// Cached is true when the inputs were unchanged and nothing was rendered.
	Cached bool `json:"cached"`
	// Written is true when the version folder was (re)written.
	Written bool `json:"written"`
}

// Dev builds every provider the configuration names with its next version,
// writes them into the dev repository, writes a clusterctl config there
// pointing at them, and returns the clusterctl init line. A provider whose
// inputs are unchanged since the last run is not rendered again. Dev
// versions are overwritten in place. Nothing is written when any build fails.
func Dev(ctx context.Context, opts DevOptions) (*DevResult, error) {
	root, err := opts.root()
	if err != nil {
		return nil, err
	}
	if opts.Version != "" {
		if _, err := provider.ParseVersion(opts.Version); err != nil {
			return nil, fmt.Errorf("%s: %w", option.Flag(ctx, option.Version), err)
		}
	}
	srcs, err := provider.LoadTreeSpecs(opts.Dir, opts.ConfigPath)
	if err != nil {
		return nil, err
	}
	// Each tree's before: commands run once, before its inputs are hashed.
	ran := map[*provider.Config]bool{}
	for _, s := range srcs {
		if ran[s.Config] {
			continue
		}
		ran[s.Config] = true
		if err := RunBefore(ctx, s.Dir, s.Config, opts.Progress); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(root, DevOverrides), 0o755); err != nil {
		return nil, err
	}
	// The whole run holds the root's lock: a second dev run waits, then
	// finds the first one's output in its cache.
	lock, err := dirlock.Acquire(ctx, root, dirlock.Options{Timeout: opts.LockTimeout, Wait: opts.Progress})
	if err != nil {
		return nil, err
	}
	defer func() { _ = lock.Release() }()
	fsafe.CleanAtomicLeftovers(root, DevConfigFile, DevCacheFile)
	cache := loadCache(filepath.Join(root, DevCacheFile))
	hasher := newTreeHasher(root)

	res := &DevResult{Root: root, ConfigFile: filepath.Join(root, DevConfigFile), Warnings: []string{}}
	type job struct {
		src     provider.TreeSpec
		dp      DevProvider
		key     string
		built   *release.Provider
		cached  bool
		warning []string
	}
	jobs := make([]*job, 0, len(srcs))
	var errs []error
	for _, s := range srcs {
		id, _ := s.Spec.ID()
		v, from, err := devVersion(ctx, s, opts.Version)
		if err != nil {
			errs = append(errs, fmt.Errorf("provider %s: %w", s.Spec.Name, err))
			continue
		}
		j := &job{src: s, dp: DevProvider{Label: s.Spec.Name, Name: id.Name, Type: string(id.Type), Version: v, VersionFrom: from, Source: s.Dir}}
		if opts.Version == "" {
			if w := s.SettingsNextVersionIgnored(v); w != "" {
				res.Warnings = append(res.Warnings, w)
			}
			if w := opts.tags.nextVersionTagged(ctx, s.Dir, v, from); w != "" {
				res.Warnings = append(res.Warnings, w)
			}
		}
		if j.key, err = hasher.key(s, v, opts); err != nil {
			errs = append(errs, fmt.Errorf("provider %s: %w", s.Spec.Name, err))
			continue
		}
		jobs = append(jobs, j)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, j := range jobs {
		dir := filepath.Join(root, j.src.Spec.Name, j.dp.Version)
		if !opts.AllowRemote && cache.hit(j.src.Spec.Name, j.key, dir) {
			// The warnings of the render the folder holds still stand.
			j.cached, j.warning = true, cache.warnings(j.src.Spec.Name)
			continue
		}
		r, err := builder.Build(ctx, builder.Options{
			Dir: j.src.Dir, Config: j.src.Config, Version: j.dp.Version,
			Image: opts.Image, Providers: []string{j.src.Spec.Name},
			// The developer's image (e.g. :dev after make docker-build and
			// kind load) stays unless --image asks for another, as
			// create-local-repository.py leaves it.
			KeepImage: true, AllowRemote: opts.AllowRemote, Cache: opts.RenderCache,
		})
		if err != nil {
			if opts.Progress != nil {
				sayNotices(opts.Progress, err)
			}
			errs = append(errs, err)
			continue
		}
		warnings, err := devGate(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		j.built = r.Release.Providers[0]
		j.warning = append(r.Warnings, warnings...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	pub := &local.Target{Root: root, Replace: true, Kind: "dev", Locked: true}
	var inits []publish.InitVersion
	for _, j := range jobs {
		id, _ := j.src.Spec.ID()
		components := j.src.Spec.ComponentsFile
		j.dp.URL = local.FileURL(filepath.Join(root, j.src.Spec.Name, j.dp.Version, components))
		j.dp.Cached = j.cached
		if j.built != nil {
			sum, err := pub.Publish(ctx, &release.Release{Version: j.dp.Version, Providers: []*release.Provider{j.built}})
			if err != nil {
				return nil, err
			}
			j.dp.Written = len(sum.Uploaded)+len(sum.Replaced) > 0
			cache.put(j.src.Spec.Name, j.key, j.built, j.warning)
		}
		res.Warnings = append(res.Warnings, j.warning...)
		res.Providers = append(res.Providers, j.dp)
		res.Config.Providers = append(res.Config.Providers, publish.ProviderURL{Name: id.Name, Type: string(id.Type), URL: j.dp.URL})
		inits = append(inits, publish.InitVersion{ID: id, Version: j.dp.Version})
		if opts.Progress != nil {
			state := "rendered"
			switch {
			case j.cached:
				state = "unchanged, not rendered"
			case !j.dp.Written:
				state = "rendered, same content"
			}
			fmt.Fprintf(opts.Progress, "%s %s (%s, from %s): %s\n", j.src.Spec.Name, j.dp.Version, j.dp.VersionFrom, j.src.Dir, state)
		}
	}
	res.Config.OverridesFolder = filepath.Join(root, DevOverrides)
	if _, _, err := publish.WriteConfigFile(res.ConfigFile, res.Config); err != nil {
		return nil, err
	}
	if err := cache.save(); err != nil {
		return nil, err
	}
	cfg := res.ConfigFile
	if opts.ConfigOut != "" {
		abs, written, err := publish.WriteConfigFile(opts.ConfigOut, res.Config)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", option.Flag(ctx, option.ConfigOut), err)
		}
		res.ConfigOut, res.ConfigOutWritten, cfg = abs, written, abs
	}
	res.Init = publish.InitCommand(inits, cfg)
	return res, nil
}

// root is the dev repository's absolute path: Root, else the default
// folder Env names.
func (o DevOptions) root() (string, error) {
	if o.Root == "" {
		r, err := o.Env.DevRepository()
		if err != nil {
			return "", publish.UsageError{Err: err}
		}
		return r, nil
	}
	return filepath.Abs(o.Root)
}

// devVersion picks the version to build: --version, else the version the
// tree is developing (provider.NextVersion).
func devVersion(ctx context.Context, s provider.TreeSpec, override string) (version, from string, err error) {
	if override != "" {
		return override, option.Flag(ctx, option.Version), nil
	}
	return provider.NextVersion(s.Dir, s.Spec)
}

// devGate lints a dev build under the config's waivers: errors of the rules
// clusterctl refuses (contract.Rule.Refused) stop it, other errors come back
// as warnings.
func devGate(r *builder.Result) (warnings []string, err error) {
	rep := contract.Lint(r.Release, lintOptions(r, r.Config, nil))
	var errs []error
	for _, f := range rep.Findings {
		switch {
		case f.Severity != contract.Error:
		case refused(f.Rule):
			errs = append(errs, errors.New(f.String()))
		default:
			// Said as what it is here: an error a release would stop on,
			// which the dev build goes past (a :dev image, a schema being written).
			where := f.File
			for _, s := range []string{f.Object, f.Field} {
				if s != "" {
					where += ": " + s
				}
			}
			warnings = append(warnings, fmt.Sprintf("%s: %s (%s: an error in a release, which dev builds anyway)", where, f.Message, f.Rule))
		}
	}
	return warnings, errors.Join(errs...)
}

func refused(id string) bool {
	r, ok := contract.LookupRule(id)
	return ok && r.Refused
}

// WriteText prints a dev run's summary: its warnings and where the dev
// repository and its clusterctl config are on errOut, the clusterctl init
// line that installs the providers on out.
func (r *DevResult) WriteText(out, errOut io.Writer) error {
	r.writeWarnings(errOut)
	fmt.Fprintf(errOut, "dev repository %s, clusterctl config %s\n", r.Root, r.ConfigFile)
	switch {
	case r.ConfigOutWritten:
		fmt.Fprintf(errOut, "clusterctl config for the dev repository written to %s\n", r.ConfigOut)
	case r.ConfigOut != "":
		fmt.Fprintf(errOut, "clusterctl config %s unchanged\n", r.ConfigOut)
	}
	fmt.Fprintln(errOut, "to install the providers, run:")
	_, err := fmt.Fprintln(out, r.Init)
	return err
}

// WriteJSON prints the result as one JSON document on out, its warnings
// on errOut.
func (r *DevResult) WriteJSON(out, errOut io.Writer) error {
	r.writeWarnings(errOut)
	return writeJSON(out, r)
}

func (r *DevResult) writeWarnings(w io.Writer) {
	for _, warning := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warning)
	}
}
