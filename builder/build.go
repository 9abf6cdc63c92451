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
	"strings"
	"sync"

	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"

	"github.com/capirepo/capirepo/contract/finding"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/templates"
)

// ErrNoVersion is returned when neither the options nor the config give a version.
var ErrNoVersion = fmt.Errorf("no release version: pass %s vX.Y.Z or set version: in capirepo.yaml", option.Version)

// Options say what to build.
type Options struct {
	// Dir is the provider tree; it is only read.
	Dir string
	// Config is the tree's loaded configuration (provider.LoadConfig); its
	// before: commands have run (pipeline does both).
	Config *provider.Config
	// Version overrides the config's version.
	Version string
	// Image sets the repository of the manager container's image (tag = version).
	Image string
	// Providers limits the build to these labels ("" = all).
	Providers []string
	// AllowRemote lets kustomizations pull remote bases.
	AllowRemote bool
	// KeepImage keeps the image the kustomization names unless Image is
	// set (capirepo dev: the developer's locally built image).
	KeepImage bool
	// Cache, when set, reuses the renders of earlier Builds given the same
	// cache whose inputs did not change (capirepo dev); nil renders every
	// kustomization. Ignored with AllowRemote: a remote base is not a file
	// the cache can check.
	Cache *RenderCache
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
	// Edits are the changes the build made to what the tree renders
	// (image, pull policy), each to be said once with its count.
	Edits []Edit
}

// ProviderResult describes one rendered provider.
type ProviderResult struct {
	Label     string     `json:"label"`
	Namespace string     `json:"namespace"`
	Images    []string   `json:"images"`
	Objects   int        `json:"objects"`
	Variables []Variable `json:"variables"`
	Templates []string   `json:"templates"`
	// ImageTag is the tag the build gave the manager image ("" when it kept
	// the tree's, or pinned a digest): the lint takes it as the release's.
	ImageTag string `json:"imageTag,omitempty"`
	// MoreComponents are the provider's other components files (config components:).
	MoreComponents []string `json:"moreComponents,omitempty"`
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
		return nil, errors.New("builder: no config: load the tree's with provider.LoadConfig")
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
	} else {
		fs.cache = opts.Cache
	}
	warmUp()
	// kustomize's deprecation notices are reported once, in the warnings.
	if quietKustomize {
		defer kustomizePrints.Hold()()
	}

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
		res.Edits = append(res.Edits, o.edits...)
		if res.Sources == nil {
			res.Sources = map[string]finding.Source{}
		}
		maps.Copy(res.Sources, o.sources)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, withNotices(err, fs)
	}
	if err := oneImage(cfg, opts.Image, specs, out); err != nil {
		return nil, withNotices(err, fs)
	}
	res.Warnings = append(res.Warnings, fs.deprecated.warnings()...)
	return res, nil
}

// Error is a failed build that has kustomize deprecation notices to say:
// kustomize's own prints of them were dropped while Build ran, so they go
// with the error rather than nowhere. It says and unwraps to Err.
type Error struct {
	Err error
	// Warnings are the notices, as Result.Warnings gives them.
	Warnings []string
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// withNotices is err, carrying the notices of the renders that ran.
func withNotices(err error, fs *treeFS) error {
	if w := fs.deprecated.warnings(); len(w) > 0 {
		return &Error{Err: err, Warnings: w}
	}
	return err
}

// ImageUsageError says one --image was given for providers whose
// kustomizations name different manager images: each needs its own.
type ImageUsageError struct {
	Image  string
	Images map[string]string // provider label -> image its kustomization names
	File   string
}

func (e *ImageUsageError) Error() string {
	var parts []string
	for _, l := range slices.Sorted(maps.Keys(e.Images)) {
		parts = append(parts, fmt.Sprintf("%s (%s)", l, e.Images[l]))
	}
	where := e.File
	if where == "" {
		where = provider.ConfigFile
	}
	return fmt.Sprintf("%s %s would replace the manager image of providers whose kustomizations name different images: %s; give each provider its image with providers[].image.newName in %s instead of %s",
		option.Image, e.Image, strings.Join(parts, ", "), where, option.Image)
}

// oneImage refuses one --image for providers with different manager images;
// providers that share one image (several types from one binary) pass.
func oneImage(cfg *provider.Config, image string, specs []provider.Spec, out []providerOut) error {
	if image == "" || len(specs) < 2 {
		return nil
	}
	images := map[string]string{}
	distinct := map[string]bool{}
	for i, o := range out {
		if o.imageFrom != "" {
			images[specs[i].Name] = o.imageFrom
			distinct[o.imageFrom] = true
		}
	}
	if len(distinct) < 2 {
		return nil
	}
	return &ImageUsageError{Image: image, Images: images, File: cfg.File}
}

type providerOut struct {
	provider *release.Provider
	result   ProviderResult
	warnings []string
	findings []finding.Finding
	sources  map[string]finding.Source
	edits    []Edit
	err      error
	// imageFrom is the image name the kustomization gave the manager
	// before the release image replaced it ("" when nothing was replaced).
	imageFrom string
}

func buildProvider(fs *treeFS, opts Options, s provider.Spec, version string) providerOut {
	id, err := s.ID()
	if err != nil {
		return providerOut{err: err}
	}
	p := &release.Provider{ID: id, Version: version, ComponentsFile: s.ComponentsFile}
	r := ProviderResult{Label: id.Label()}

	// metadata.yaml is copied as it is but for an apiVersion or kind it
	// leaves out (completeMetadata); the lint checks it (CAPI101 ...
	// CAPI107), so its waivers apply and every finding is reported at once.
	var findings []finding.Finding
	mfile := filepath.Join(opts.Dir, filepath.FromSlash(s.Metadata))
	var metaAdded []string
	if mdata, err := fs.ReadFile(mfile); err == nil {
		mdata, metaAdded = completeMetadata(mdata)
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
	tdir := opts.Dir
	tc := make(chan collected, 1)
	if !s.Templates.Enabled() {
		tc <- collected{set: &templates.Set{}}
	} else {
		tdir = filepath.Join(opts.Dir, filepath.FromSlash(s.Templates.Dir))
		loadNone := s.Templates.LoadRestrictor == provider.LoadRestrictorNone
		go func() {
			set, err := templates.Collect(fs, opts.Dir, *s.Templates, func(dir string) ([]byte, error) {
				return renderFlavor(fs, dir, opts.AllowRemote, loadNone)
			})
			tc <- collected{set, err}
		}()
	}

	files := append([]provider.Components{{Kustomize: s.Kustomize, File: s.ComponentsFile}}, s.Components...)
	var imageFrom string
	var edits []Edit
	sources := map[string]finding.Source{
		path.Join(id.Label(), version, provider.MetadataFile): {Path: s.Metadata, Copied: true},
	}
	for i, c := range files {
		kdir := filepath.Join(opts.Dir, filepath.FromSlash(c.Kustomize))
		components, err := renderComponents(fs, kdir, c.File, i == 0, opts, s, version)
		if err != nil {
			<-tc // the templates' renders end inside Build, where their notices are counted and kustomize's prints held
			return providerOut{err: err}
		}
		findings = append(findings, components.findings...)
		edits = append(edits, components.edits...)
		sources[path.Join(id.Label(), version, c.File)] = finding.Source{Path: path.Join(c.Kustomize, "kustomization.yaml"), Locate: components.locate}
		if err := p.Add(c.File, components.yaml); err != nil {
			<-tc
			return providerOut{err: err}
		}
		// Variables that do not parse are CAPI002, reported by the lint.
		vars, _ := variables(c.File, components.yaml)
		if i > 0 {
			r.MoreComponents = append(r.MoreComponents, c.File)
			continue
		}
		r.Namespace, r.Objects, r.Images, r.Variables, r.ImageTag = components.namespace, components.objects, components.images, vars, components.imageTag
		imageFrom = components.imageFrom
	}
	tmpl := <-tc

	if tmpl.err != nil {
		return providerOut{err: tmpl.err}
	}
	set := tmpl.set
	patched := map[string]bool{}
	for i, f := range set.Files {
		patches := patchesFor(s.Patches, f.Name, false)
		if len(patches) == 0 || !strings.HasSuffix(f.Name, ".yaml") && !strings.HasSuffix(f.Name, ".yml") {
			continue // kustomize patches YAML objects; a script is published as it is
		}
		patched[f.Name] = true
		data, err := patchTemplate(fs, opts.Dir, f.Data, patches)
		if err != nil {
			return providerOut{err: fmt.Errorf("%s (from %s): release patches: %w", f.Name, set.Sources[f.Name], err)}
		}
		set.Files[i].Data = data
	}
	warnings := slices.Clone(set.Warnings)
	if s.Templates != nil && len(s.Templates.Set) > 0 {
		warnings = append(warnings, applyTemplateSets(s.Name, s.Templates.Set, set.Files)...)
	}
	if len(metaAdded) > 0 {
		warnings = append(warnings, metadataWarning(s.Name, s.Metadata, metaAdded))
	}
	for i, pt := range s.Patches {
		if pt.File != "" && !slices.ContainsFunc(files, func(c provider.Components) bool { return pt.Applies(c.File, false) }) &&
			!slices.ContainsFunc(set.Files, func(f release.File) bool { return pt.Applies(f.Name, false) }) {
			warnings = append(warnings, fmt.Sprintf("%s: patches[%d].file %q matches no release file; fix the pattern or remove the patch", s.Name, i, pt.File))
		}
	}
	for _, f := range set.Files {
		if _, clash := p.File(f.Name); clash {
			return providerOut{err: fmt.Errorf("%s: template %s has the name of another release file", tdir, f.Name)}
		}
		if err := p.Add(f.Name, f.Data); err != nil {
			return providerOut{err: fmt.Errorf("%s: %w", tdir, err)}
		}
		r.Templates = append(r.Templates, f.Name)
	}
	var asIs []string
	for _, f := range set.Files {
		src := templateSource(fs, opts.Dir, set.Sources[f.Name])
		if patched[f.Name] {
			src.Copied = false // its lines are kustomize's now, not the tree file's
		}
		sources[path.Join(id.Label(), version, f.Name)] = src
		if !release.IsTemplate(f.Name) {
			asIs = append(asIs, f.Name)
		}
	}
	if len(asIs) > 0 {
		warnings = append(warnings, fmt.Sprintf("%s: %s published as they are: clusterctl reads only cluster-template*.yaml and clusterclass-*.yaml as templates, so these are checked as YAML (a .yaml file) or for size and type (another file), not as templates",
			s.Name, strings.Join(asIs, ", ")))
	}
	if len(set.Files) == 0 && id.Type == clusterctlv1.InfrastructureProviderType && (s.Templates == nil || !s.Templates.None) {
		warnings = append(warnings, noTemplates(opts.Dir, s))
	}
	return providerOut{provider: p, result: r, warnings: warnings, findings: findings, sources: sources, imageFrom: imageFrom, edits: edits}
}

type rendered struct {
	yaml      []byte
	objects   int
	images    []string
	namespace string
	imageFrom string
	imageTag  string // the tag the release image got, "" when none was set
	edits     []Edit
	findings  []finding.Finding
	locate    func(string, string) (finding.Location, bool)
}

// plan turns the options and the provider's image settings into what the
// release image of this build is; nil when the image is kept as it is.
func plan(opts Options, s provider.Spec, version string) (*imagePlan, error) {
	img := provider.Image{}
	if s.Image != nil {
		img = *s.Image
	}
	if opts.KeepImage && opts.Image == "" {
		return nil, nil
	}
	p := &imagePlan{name: img.Name, configured: img.Name != "", newName: img.NewName, digest: img.Digest, pullPolicy: img.PullPolicy}
	if opts.Image != "" {
		p.newName = opts.Image
	}
	if p.digest == "" {
		tag, err := img.TagFor(version)
		if err != nil {
			return nil, fmt.Errorf("provider %s: %w", s.Name, err)
		}
		p.tag = tag
	}
	return p, nil
}

// renderComponents renders one kustomization of the provider with the
// release image set before kustomize runs, applies the release patches and
// the release transforms.
func renderComponents(fs *treeFS, kdir, file string, main bool, opts Options, s provider.Spec, version string) (rendered, error) {
	if !opts.AllowRemote {
		if err := checkLocal(fs, kdir); err != nil {
			return rendered{}, err
		}
	}
	desc := fmt.Sprintf("%s (rendered from %s)", file, kdir)
	ip, err := plan(opts, s, version)
	if err != nil {
		return rendered{}, err
	}
	dps, err := deploymentPlans(opts, s, version)
	if err != nil {
		return rendered{}, err
	}
	if dps != nil {
		ip = nil // images: sets each Deployment's image on the render
	}
	rm, changed, from, err := renderImage(fs, kdir, desc, ip)
	if err != nil {
		return rendered{}, err
	}
	if err := oneDeployment(desc, from, configName(opts), changed); err != nil {
		return rendered{}, err
	}
	var byPlan map[string]*deploymentEdit
	if dps != nil {
		if byPlan, err = setDeploymentImages(fs, kdir, desc, rm, dps, main); err != nil {
			return rendered{}, err
		}
	}
	// A reused render, transformed the same way, serializes the same.
	cached := fs.renderOf(rm)
	if patches := patchesFor(s.Patches, file, true); len(patches) > 0 {
		cached = nil // the patches are files the render did not read
		if rm, err = applyPatches(fs, opts.Dir, rm, patches); err != nil {
			return rendered{}, fmt.Errorf("%s: release patches: %w", desc, err)
		}
		// A patch may replace a container; find the changed ones again.
		changed = withImage(rm, changed)
		for _, e := range byPlan {
			e.on = withImage(rm, e.on)
		}
	}
	t := transformer{file: desc, label: s.Name}
	var edits []Edit
	cfgFile := configName(opts)
	if ip != nil && len(changed) > 0 {
		by := "the version as the manager image's tag, capirepo's default"
		switch {
		case opts.Image != "":
			by = option.Image.String()
		case s.Image != nil:
			by = "image: in " + cfgFile
		}
		edits = append(edits, edit(s.Name, file, "image", ip.releaseImage(from), from, by, changed))
		if ip.pullPolicy != "" {
			on := managerPull(changed)
			t.pulls = append(t.pulls, pull{policy: ip.pullPolicy, on: on})
			edits = append(edits, edit(s.Name, file, "imagePullPolicy", ip.pullPolicy, "", "image.pullPolicy in "+cfgFile, on))
		}
	}
	for _, p := range dps {
		e := byPlan[p.key]
		if e == nil || len(e.on) == 0 {
			continue
		}
		cs := e.on
		edits = append(edits, edit(s.Name, file, "image", cs[0].image(), e.was, p.key+" in "+cfgFile, cs))
		if p.img.PullPolicy != "" {
			on := managerPull(cs)
			if p.img.Container != "" {
				on = cs
			}
			t.pulls = append(t.pulls, pull{policy: p.img.PullPolicy, on: on})
			edits = append(edits, edit(s.Name, file, "imagePullPolicy", p.img.PullPolicy, "", p.key+".pullPolicy in "+cfgFile, on))
		}
	}
	ns, err := t.apply(rm)
	if err != nil {
		return rendered{}, err
	}
	if err := labelTypo(fs, kdir, opts.Dir, s.Name, opts.Config.File, t.relabelled); err != nil {
		return rendered{}, err
	}
	findings := labelFindings(fs, kdir, opts.Dir, s.Name, path.Join(s.Name, version, file), t.relabelled, t.labelled)
	// The image fields the config's keys set point at those keys.
	configured := map[[2]string]finding.Location{}
	setBy := func(cs []container, key string, index int) {
		loc := finding.Location{Path: configName(opts)}
		if opts.Config != nil && opts.Config.File != "" {
			loc.Line = configLine(fs, opts.Config.File, s.Name, key, index)
		}
		for _, c := range cs {
			configured[[2]string{objID(c.owner.GetKind(), c.owner.GetNamespace(), c.owner.GetName()), c.field + ".image"}] = loc
		}
	}
	if ip != nil && opts.Image == "" && s.Image != nil && s.Image.NewName != "" {
		setBy(changed, "image", -1)
	}
	for i, p := range dps {
		if e := byPlan[p.key]; e != nil && p.newName != "" {
			setBy(e.on, "images", i)
		}
	}
	locate := imageLocator(fs, kdir, opts.Dir, rm, configured, patchesFor(s.Patches, file, true))
	how := fmt.Sprintf("components %q %q %+v %+v", t.file, t.label, ip, dps)
	data, ok := []byte(nil), false
	if cached != nil {
		data, ok = cached.madeYAML(how)
		data = slices.Clone(data) // the release's own bytes
	}
	if !ok {
		if data, err = asYAML(rm); err != nil {
			return rendered{}, fmt.Errorf("%s: %w", t.file, err)
		}
		if cached != nil {
			cached.keepYAML(how, data)
		}
	}
	imgs := map[string]bool{}
	for _, r := range rm.Resources() {
		for _, c := range containers(r) {
			imgs[c.image()] = true
		}
	}
	out := rendered{yaml: data, objects: rm.Size(), namespace: ns, imageFrom: from, findings: findings, locate: locate, edits: edits}
	if ip != nil && len(changed) > 0 {
		out.imageTag = ip.tag
	}
	if len(dps) > 0 && !slices.ContainsFunc(dps, func(p deploymentPlan) bool { return p.tag != dps[0].tag }) {
		out.imageTag = dps[0].tag // the tag every manager got
	}
	for i := range imgs {
		out.images = append(out.images, i)
	}
	sort.Strings(out.images)
	return out, nil
}

// patchesFor are the release patches that apply to the release file name.
func patchesFor(patches []provider.Patch, name string, components bool) []provider.Patch {
	var out []provider.Patch
	for _, p := range patches {
		if p.Applies(name, components) {
			out = append(out, p)
		}
	}
	return out
}

// kustomizeErr explains a failed render: a path outside the tree, or a file
// the kustomization reads that is missing (often generated by make).
func kustomizeErr(fs *treeFS, kdir string, err error) error {
	if v := fs.Violation(); v != nil {
		return fmt.Errorf("kustomize %s: %w", kdir, v)
	}
	return fmt.Errorf("kustomize %s: %w", kdir, explainOutsideRoot(fs, fs.roots[0], explainMissing(fs.roots[0], explainYAML(fs, kdir, err)), componentsOutsideFix))
}

// renderPlain renders a kustomization without release transforms (flavors).
func renderPlain(fs *treeFS, dir string, allowRemote bool) ([]byte, error) {
	return renderFlavor(fs, dir, allowRemote, false)
}

// renderFlavor renders a flavor; loadNone lets it load files outside its
// folder (kustomize --load-restrictor LoadRestrictionsNone), still only from
// the provider tree.
func renderFlavor(fs *treeFS, dir string, allowRemote, loadNone bool) ([]byte, error) {
	if !allowRemote {
		if err := checkLocal(fs, dir); err != nil {
			return nil, err
		}
	}
	rm, err := kustomize(fs, dir, loadNone)
	if err != nil {
		if v := fs.Violation(); v != nil {
			return nil, v
		}
		return nil, explainOutsideRoot(fs, fs.roots[0], explainYAML(fs, dir, err), flavorOutsideFix)
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

// noTemplates is the warning for an infrastructure provider that ships no
// cluster template: clusterctl generate cluster has nothing to fetch.
func noTemplates(dir string, s provider.Spec) string {
	where := "no templates folder (" + provider.DefaultTemplates + "/)"
	if s.Templates != nil {
		where = "templates settings (" + filepath.Join(dir, filepath.FromSlash(s.Templates.Dir)) + ") found no cluster-template*.yaml, clusterclass-*.yaml or flavor kustomization"
	}
	return fmt.Sprintf("%s: %s: the release has no cluster templates for clusterctl generate cluster; set templates in %s, or templates: {none: true} if that is meant", s.Name, where, provider.ConfigFile)
}
