package builder

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/capirepo/capirepo/contract/finding"
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
	// Sources lead lint findings back to the tree: release path
	// (<label>/<version>/<name>) -> the file it was copied from or the
	// kustomization it was rendered from (contract.Options.Sources).
	Sources map[string]finding.Source
	// Findings are what the build itself found (a missing metadata.yaml, a
	// provider label it rewrote). They are lint findings: Lint reports
	// them with the lint's own, under the same waivers.
	Findings []finding.Finding
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
	if _, err := provider.ParseVersion(version); err != nil {
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
	var extra []string
	if opts.AllowRemote {
		extra = append(extra, filepath.Clean(osTempDir()))
	}
	fs, err := newTreeFS(opts.Dir, extra...)
	if err != nil {
		return nil, err
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
			out[i] = buildProvider(fs, opts, s, version)
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
		res.Findings = append(res.Findings, o.findings...)
		if res.Sources == nil {
			res.Sources = map[string]finding.Source{}
		}
		maps.Copy(res.Sources, o.sources)
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
	findings []finding.Finding
	sources  map[string]finding.Source
	err      error
}

func buildProvider(fs *treeFS, opts Options, s provider.Spec, version string) providerOut {
	id, err := s.ID()
	if err != nil {
		return providerOut{err: err}
	}
	p := &release.Provider{ID: id, Version: version, ComponentsFile: s.ComponentsFile}
	r := ProviderResult{Label: id.Label()}

	// metadata.yaml is copied as it is; the lint checks it (CAPI101 ...
	// CAPI107), so its waivers apply and every finding is reported at once.
	var findings []finding.Finding
	mfile := filepath.Join(opts.Dir, filepath.FromSlash(s.Metadata))
	if mdata, err := fs.ReadFile(mfile); err == nil {
		if err := p.Add(provider.MetadataFile, mdata); err != nil {
			return providerOut{err: err}
		}
	} else if !fs.Exists(mfile) {
		findings = append(findings, finding.Finding{
			Rule: ruleMetadataMissing, Severity: finding.Error,
			File:    path.Join(id.Label(), version, provider.MetadataFile),
			Message: fmt.Sprintf("%s (metadata: in the config) does not exist: clusterctl cannot map version %s to a contract", s.Metadata, version),
		})
	} else {
		return providerOut{err: fmt.Errorf("metadata: %w", err)}
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
	findings = append(findings, components.findings...)
	tmpl := <-tc
	if err != nil {
		return providerOut{err: err}
	}
	r.Namespace = ns
	if err := p.Add(s.ComponentsFile, components.yaml); err != nil {
		return providerOut{err: err}
	}
	r.Objects, r.Images = components.objects, components.images
	// Variables that do not parse are CAPI002, reported by the lint.
	r.Variables, _ = variables(s.ComponentsFile, components.yaml)

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
	sources := map[string]finding.Source{
		path.Join(id.Label(), version, provider.MetadataFile): {Path: s.Metadata, Copied: true},
		path.Join(id.Label(), version, s.ComponentsFile):      {Path: path.Join(s.Kustomize, "kustomization.yaml"), Locate: components.locate},
	}
	for _, f := range set.Files {
		sources[path.Join(id.Label(), version, f.Name)] = templateSource(fs, s.Templates, tdir, f.Name)
	}
	return providerOut{provider: p, result: r, warnings: set.Warnings, findings: findings, sources: sources}
}

type rendered struct {
	yaml     []byte
	objects  int
	images   []string
	findings []finding.Finding
	locate   func(string) (finding.Location, bool)
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
	findings := labelFindings(fs, kdir, opts.Dir, s.Name, path.Join(s.Name, version, s.ComponentsFile), t.relabelled)
	locate := objectLocator(fs, kdir, opts.Dir, rm)
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
	out := rendered{yaml: data, objects: rm.Size(), findings: findings, locate: locate}
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
