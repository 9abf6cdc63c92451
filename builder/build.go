package builder

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/Masterminds/semver/v3"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/templates"
)

// ErrNoVersion is returned when neither the options nor the config give a version.
var ErrNoVersion = errors.New("no release version: pass --version vX.Y.Z or set version: in capirepo.yaml")

// Options say what to build.
type Options struct {
	// Dir is the provider tree; it is only read.
	Dir string
	// ConfigPath names a capirepo.yaml or clusterctl-settings.json anywhere;
	// "" looks in Dir. Config, when set, is used instead of loading one.
	ConfigPath string
	Config     *provider.Config
	// Version overrides the config's version.
	Version string
	// Image sets the repository of the manager container's image (tag = version).
	Image string
	// Providers limits the build to these labels ("" = all).
	Providers []string
	// AllowRemote lets kustomizations pull remote bases.
	AllowRemote bool
}

// Result is a built release with what was learnt on the way.
type Result struct {
	Release   *release.Release
	Config    *provider.Config
	Providers []ProviderResult
	Warnings  []string
}

// ProviderResult describes one rendered provider.
type ProviderResult struct {
	Label     string     `json:"label"`
	Namespace string     `json:"namespace"`
	Images    []string   `json:"images"`
	Objects   int        `json:"objects"`
	Variables []Variable `json:"variables"`
	Templates []string   `json:"templates"`
}

// Variable is a ${VAR} in the components, as clusterctl lists it.
type Variable struct {
	Name     string  `json:"name"`
	Default  *string `json:"default,omitempty"`
	Required bool    `json:"required"`
}

// Build renders every provider of the tree into an in-memory release.
func Build(ctx context.Context, opts Options) (*Result, error) {
	cfg := opts.Config
	if cfg == nil {
		var err error
		if cfg, err = provider.LoadConfig(opts.Dir, opts.ConfigPath); err != nil {
			return nil, err
		}
	}
	version := opts.Version
	if version == "" {
		version = cfg.Version
	}
	if version == "" {
		return nil, ErrNoVersion
	}
	sv, err := provider.ParseVersion(version)
	if err != nil {
		return nil, err
	}
	specs := cfg.Providers
	if len(opts.Providers) > 0 {
		specs = nil
		for _, s := range cfg.Providers {
			if slices.Contains(opts.Providers, s.Name) {
				specs = append(specs, s)
			}
		}
		if len(specs) != len(opts.Providers) {
			return nil, fmt.Errorf("%s: asked for providers %v, config has %d of them", cfg.File, opts.Providers, len(specs))
		}
	}
	fs, err := newTreeFS(opts.Dir)
	if err != nil {
		return nil, err
	}
	if opts.AllowRemote {
		// Remote bases are cloned into a private folder; local paths stay
		// confined to the tree.
		scratch, err := remoteScratch()
		if err != nil {
			return nil, err
		}
		fs.allowScratch(scratch)
	}
	warmUp()

	res := &Result{Release: &release.Release{Version: version}, Config: cfg}
	out := make([]providerOut, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		wg.Go(func() {
			if err := ctx.Err(); err != nil {
				out[i].err = err
				return
			}
			out[i] = buildProvider(fs, opts, s, version, sv)
		})
	}
	wg.Wait()
	var errs []error
	for i, o := range out {
		if o.err != nil {
			errs = append(errs, fmt.Errorf("provider %s: %w", specs[i].Name, o.err))
			continue
		}
		res.Release.Providers = append(res.Release.Providers, o.provider)
		res.Providers = append(res.Providers, o.result)
		res.Warnings = append(res.Warnings, o.warnings...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return res, nil
}

type providerOut struct {
	provider *release.Provider
	result   ProviderResult
	warnings []string
	err      error
}

func buildProvider(fs *treeFS, opts Options, s provider.Spec, version string, sv *semver.Version) providerOut {
	id, err := s.ID()
	if err != nil {
		return providerOut{err: err}
	}
	p := &release.Provider{ID: id, Version: version, ComponentsFile: s.ComponentsFile}
	r := ProviderResult{Label: id.Label()}

	// Metadata first: a version it does not cover is the commonest mistake.
	mfile := filepath.Join(opts.Dir, filepath.FromSlash(s.Metadata))
	mdata, err := fs.ReadFile(mfile)
	if err != nil {
		return providerOut{err: fmt.Errorf("metadata: %w", err)}
	}
	md, err := provider.ParseMetadata(mfile, mdata)
	if err != nil {
		return providerOut{err: err}
	}
	if err := provider.CheckCovers(mfile, md, sv); err != nil {
		return providerOut{err: err}
	}
	if err := p.Add(provider.MetadataFile, mdata); err != nil {
		return providerOut{err: err}
	}

	// The templates render while the components do: they are independent.
	type collected struct {
		set *templates.Set
		err error
	}
	tdir := filepath.Join(opts.Dir, filepath.FromSlash(s.Templates))
	tc := make(chan collected, 1)
	if s.Templates == "" {
		tc <- collected{set: &templates.Set{}}
	} else {
		go func() {
			set, err := templates.Collect(fs, tdir, func(dir string) ([]byte, error) {
				return renderPlain(fs, dir, opts.AllowRemote)
			})
			tc <- collected{set, err}
		}()
	}

	kdir := filepath.Join(opts.Dir, filepath.FromSlash(s.Kustomize))
	components, ns, err := renderComponents(fs, kdir, opts, s, version)
	tmpl := <-tc
	if err != nil {
		return providerOut{err: err}
	}
	r.Namespace = ns
	if err := p.Add(s.ComponentsFile, components.yaml); err != nil {
		return providerOut{err: err}
	}
	r.Objects, r.Images = components.objects, components.images
	if r.Variables, err = variables(s.ComponentsFile, components.yaml); err != nil {
		return providerOut{err: err}
	}

	if tmpl.err != nil {
		return providerOut{err: tmpl.err}
	}
	set := tmpl.set
	for _, f := range set.Files {
		if _, clash := p.File(f.Name); clash {
			return providerOut{err: fmt.Errorf("%s: template %s has the name of another release file", tdir, f.Name)}
		}
		if err := p.Add(f.Name, f.Data); err != nil {
			return providerOut{err: fmt.Errorf("%s: %w", tdir, err)}
		}
		r.Templates = append(r.Templates, f.Name)
	}
	return providerOut{provider: p, result: r, warnings: set.Warnings}
}

type rendered struct {
	yaml    []byte
	objects int
	images  []string
}

// renderComponents renders the provider's kustomization and applies the
// release transforms.
func renderComponents(fs *treeFS, kdir string, opts Options, s provider.Spec, version string) (rendered, string, error) {
	if !opts.AllowRemote {
		if err := checkLocal(fs, kdir, map[string]bool{}); err != nil {
			return rendered{}, "", err
		}
	}
	rm, err := Kustomize(fs, kdir)
	if err != nil {
		if v := fs.Violation(); v != nil {
			return rendered{}, "", fmt.Errorf("kustomize %s: %w", kdir, v)
		}
		return rendered{}, "", fmt.Errorf("kustomize %s: %w", kdir, err)
	}
	img := provider.Image{}
	if s.Image != nil {
		img = *s.Image
	}
	if opts.Image != "" {
		img.NewName = opts.Image
	}
	if img.NewTag == "" && img.Digest == "" {
		img.NewTag = version
	}
	t := transformer{file: fmt.Sprintf("%s (rendered from %s)", s.ComponentsFile, kdir), label: s.Name, image: img}
	ns, err := t.apply(rm)
	if err != nil {
		return rendered{}, "", err
	}
	data, err := asYAML(rm)
	if err != nil {
		return rendered{}, "", fmt.Errorf("%s: %w", t.file, err)
	}
	imgs := map[string]bool{}
	for _, r := range rm.Resources() {
		for _, c := range containers(r) {
			imgs[c.image()] = true
		}
	}
	out := rendered{yaml: data, objects: rm.Size()}
	for i := range imgs {
		out.images = append(out.images, i)
	}
	sort.Strings(out.images)
	return out, ns, nil
}

// renderPlain renders a kustomization without release transforms (flavors).
func renderPlain(fs *treeFS, dir string, allowRemote bool) ([]byte, error) {
	if !allowRemote {
		if err := checkLocal(fs, dir, map[string]bool{}); err != nil {
			return nil, err
		}
	}
	rm, err := Kustomize(fs, dir)
	if err != nil {
		if v := fs.Violation(); v != nil {
			return nil, v
		}
		return nil, err
	}
	return asYAML(rm)
}

// variables lists the ${VAR}s of a file as clusterctl's processor does (variableMap).
func variables(file string, data []byte) ([]Variable, error) {
	m, err := variableMap(data)
	if err != nil {
		return nil, fmt.Errorf("%s: variables do not parse as clusterctl reads them: %w", file, err)
	}
	out := make([]Variable, 0, len(m))
	for name, def := range m {
		out = append(out, Variable{Name: name, Default: def, Required: def == nil})
	}
	slices.SortFunc(out, func(a, b Variable) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out, nil
}
