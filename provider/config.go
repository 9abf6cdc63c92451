package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"text/template"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/internal/kustomization"
)

// File names looked for at the root of a provider tree.
const (
	ConfigFile   = "capirepo.yaml"
	SettingsFile = "clusterctl-settings.json"
)

// Config is a capirepo.yaml after defaults: one release version for one or
// more providers built from one tree.
type Config struct {
	// File is where the config came from ("" when every value is a default).
	File string `json:"-"`
	// Version of the release; --version overrides it.
	Version   string `json:"version,omitempty"`
	Providers []Spec `json:"providers"`
	Lint      Lint   `json:"lint,omitempty"`
	// Before lists commands run in the tree before rendering (GoReleaser's
	// before.hooks): make targets that write git-ignored inputs the
	// kustomizations read. Opt-in; each is printed before it runs.
	Before []string `json:"before,omitempty"`
}

// Spec describes one provider in a tree. Paths are slash-separated and
// relative to the provider tree (PATH).
type Spec struct {
	// Name is the provider label: cluster-api, infrastructure-aws, ...
	Name           string `json:"name"`
	Kustomize      string `json:"kustomize,omitempty"`
	ComponentsFile string `json:"componentsFile,omitempty"`
	Metadata       string `json:"metadata,omitempty"`
	Image          *Image `json:"image,omitempty"`
	Build          Build  `json:"build,omitempty"`
	// Components lists more components files of the provider, each rendered
	// from its own kustomization (e.g. config/supervisor ->
	// infrastructure-components-supervisor.yaml), beside ComponentsFile.
	Components []Components `json:"components,omitempty"`
	// Patches are kustomize patches applied to rendered release files, for
	// the release only: what a Makefile's sed over the release output did.
	// Each applies to the components files, or to the files its File glob
	// matches (cluster templates). Path is relative to the tree.
	Patches []Patch `json:"patches,omitempty"`
	// NextVersion is the version `capirepo dev` builds (clusterctl-settings.json config.nextVersion).
	NextVersion string `json:"nextVersion,omitempty"`

	// Templates says where the provider's cluster templates come from;
	// capirepo.yaml takes a folder name or a Templates object.
	Templates *Templates `json:"templates,omitempty"`
}

// Components is one more components file and the kustomization it renders from.
type Components struct {
	Kustomize string `json:"kustomize"`
	File      string `json:"file"`
}

// Patch is a kustomize patches: entry: a strategic-merge or JSON 6902
// patch from a file in the tree (Path) or inline (Patch), for the objects
// Target selects (a JSON 6902 patch needs a target).
type Patch struct {
	Path   string       `json:"path,omitempty"`
	Patch  string       `json:"patch,omitempty"`
	Target *PatchTarget `json:"target,omitempty"`
	// File selects the release files the patch applies to by name (a
	// path.Match pattern such as cluster-template-k3s-*.yaml); "" means
	// the components files.
	File string `json:"file,omitempty"`
}

// Applies says whether the patch applies to the release file name;
// components says the file is a components file of the provider.
func (p Patch) Applies(name string, components bool) bool {
	if p.File == "" {
		return components
	}
	ok, _ := path.Match(p.File, name)
	return ok
}

// PatchTarget is kustomize's patch selector.
type PatchTarget struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Name               string `json:"name,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`
}

// Image takes kustomize's images fields. Name selects the image to change,
// as a kustomization's images: entry does: the entry's name (a placeholder
// such as controller) or the image name it renders to; default: the image of
// the provider's manager container. The tag is NewTag, else the Tag template,
// else the version.
type Image struct {
	Name    string `json:"name,omitempty"`
	NewName string `json:"newName,omitempty"`
	NewTag  string `json:"newTag,omitempty"`
	Digest  string `json:"digest,omitempty"`
	// Tag is a Go template for the tag: "{{ .Version }}" (v1.2.3, the
	// default) or "{{ .VersionNoV }}" (1.2.3).
	Tag string `json:"tag,omitempty"`
	// PullPolicy, when set, becomes the provider's manager container's
	// imagePullPolicy; by default the policy the tree sets is kept.
	PullPolicy string `json:"pullPolicy,omitempty" enum:"Always,IfNotPresent,Never"`
}

// TagFor returns the tag the release image gets for version: NewTag, else
// the Tag template, else the version.
func (i Image) TagFor(version string) (string, error) {
	if i.NewTag != "" {
		return i.NewTag, nil
	}
	if i.Tag == "" {
		return version, nil
	}
	t, err := template.New("image.tag").Option("missingkey=error").Parse(i.Tag)
	if err != nil {
		return "", fmt.Errorf("image.tag %q: %w", i.Tag, err)
	}
	var b strings.Builder
	data := struct{ Version, VersionNoV string }{version, strings.TrimPrefix(version, "v")}
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("image.tag %q: %w (use {{ .Version }} or {{ .VersionNoV }})", i.Tag, err)
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("image.tag %q gives an empty tag", i.Tag)
	}
	return b.String(), nil
}

// Build says how to compile the manager binary.
type Build struct {
	Main      string   `json:"main,omitempty"`
	Platforms []string `json:"platforms,omitempty"`
	Ldflags   string   `json:"ldflags,omitempty"`
}

// Lint holds waived rules.
type Lint struct {
	Disable []Waiver `json:"disable,omitempty"`
}

// Waiver turns a lint rule off, with the reason printed whenever it applies.
// Object and File narrow it to findings on matching objects and files
// (globs, * matching any text); a waiver that matches nothing is reported.
type Waiver struct {
	Rule string `json:"rule"`
	// Object is Kind/name or Kind/namespace/name, e.g.
	// CustomResourceDefinition/awsclustercontrolleridentities.*.
	Object string `json:"object,omitempty"`
	// File is the release file name (cluster-template-*.yaml) or its path
	// <label>/<version>/<name>.
	File   string `json:"file,omitempty"`
	Reason string `json:"reason"`
}

// ID returns the provider's name and type from its label.
func (s Spec) ID() (ID, error) { return ParseLabel(s.Name) }

// Defaults for a conventional provider tree.
const (
	DefaultKustomize = "config/default"
	DefaultTemplates = "templates"
	DefaultMain      = "."
)

// DefaultPlatforms are the platforms a manager is built for unless told otherwise.
var DefaultPlatforms = []string{"linux/amd64", "linux/arm64"}

// LoadConfig reads the provider tree's configuration. configPath may name a
// capirepo.yaml or clusterctl-settings.json anywhere; when it is empty,
// dir/capirepo.yaml, then dir/clusterctl-settings.json are tried, and without
// either the tree's conventions decide. Paths inside are relative to dir.
func LoadConfig(dir, configPath string) (*Config, error) {
	if configPath == "" {
		for _, name := range []string{ConfigFile, SettingsFile} {
			p := filepath.Join(dir, name)
			if _, err := os.Stat(p); err == nil {
				configPath = p
				break
			}
		}
	}
	var cfg *Config
	if configPath == "" {
		c, err := conventionalConfig(dir)
		if err != nil {
			return nil, err
		}
		cfg = c
	} else {
		data, err := fsafe.ReadFile(configPath)
		if err != nil {
			return nil, fmt.Errorf("read config: %w", err)
		}
		if strings.HasSuffix(configPath, ".json") {
			cfg, err = ParseSettings(configPath, data)
			if err == nil {
				cfg.Providers = clusterAPILayout(dir, cfg.Providers)
			}
		} else {
			cfg, err = ParseConfig(configPath, data)
		}
		if err != nil {
			return nil, err
		}
		if cfg.File == "" {
			cfg.File = configPath
		}
	}
	if len(cfg.Providers) == 0 {
		return nil, fmt.Errorf("%s: no providers", cfg.describe())
	}
	return cfg, cfg.defaultAndValidate(dir)
}

func (c *Config) describe() string {
	if c.File == "" {
		return "provider tree conventions"
	}
	return c.File
}

// where names a key of the config file with its line, when the file is
// YAML: capirepo.yaml:7: providers[0].componentsFile.
func (c *Config) where(path string) string {
	loc := c.describe()
	if ext := filepath.Ext(c.File); ext == ".yaml" || ext == ".yml" {
		if data, err := os.ReadFile(c.File); err == nil {
			if line := lineOf(data, path); line > 0 {
				loc = fmt.Sprintf("%s:%d", loc, line)
			}
		}
	}
	return loc + ": " + path
}

// ParseConfig decodes a capirepo.yaml strictly, so a misspelt field is an
// error. Mistakes in its shape are named with file, line and path, and the
// nearest field or the expected form (checkShape).
func ParseConfig(file string, data []byte) (*Config, error) {
	if err := checkShape(file, data, reflect.TypeFor[Config]()); err != nil {
		return nil, err
	}
	var cfg Config
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	cfg.File = file
	return &cfg, nil
}

// Settings is cluster-api's clusterctl-settings.json as create-local-repository.py
// reads it: a provider's own file (name + config), or a top-level file naming
// the providers to build and the provider_repos to pull them from.
type Settings struct {
	Name          string          `json:"name,omitempty"`
	Config        *SettingsConfig `json:"config,omitempty"`
	ConfigFolder  string          `json:"configFolder,omitempty"`
	Providers     []string        `json:"providers,omitempty"`
	ProviderRepos []string        `json:"provider_repos,omitempty"`
}

// SettingsConfig is the config object of a provider's clusterctl-settings.json.
type SettingsConfig struct {
	ComponentsFile string `json:"componentsFile,omitempty"`
	NextVersion    string `json:"nextVersion,omitempty"`
	ConfigFolder   string `json:"configFolder,omitempty"`
	Type           string `json:"type,omitempty"`
}

// DecodeSettings decodes a clusterctl-settings.json without interpreting it.
func DecodeSettings(file string, data []byte) (*Settings, error) {
	var s Settings
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &s, nil
}

// ParseSettings turns a provider's clusterctl-settings.json into a Config with
// one provider. A top-level settings file (providers/provider_repos) inside a
// cluster-api tree yields cluster-api's own providers.
func ParseSettings(file string, data []byte) (*Config, error) {
	s, err := DecodeSettings(file, data)
	if err != nil {
		return nil, err
	}
	if s.Name == "" {
		if len(s.Providers) == 0 {
			return nil, fmt.Errorf("%s: field name is empty: a provider's clusterctl-settings.json names its provider label", file)
		}
		var specs []Spec
		for _, p := range s.Providers {
			spec, ok := ClusterAPIProvider(p)
			if !ok {
				continue // comes from a provider_repos entry; capirepo dev resolves those
			}
			specs = append(specs, spec)
		}
		return &Config{File: file, Providers: specs}, nil
	}
	spec := Spec{Name: s.Name, Kustomize: s.ConfigFolder}
	if s.Config != nil {
		spec.ComponentsFile = s.Config.ComponentsFile
		spec.NextVersion = s.Config.NextVersion
		if s.Config.ConfigFolder != "" {
			spec.Kustomize = s.Config.ConfigFolder
		}
	}
	return &Config{File: file, Providers: []Spec{spec}}, nil
}

// clusterAPIProviders mirrors the providers create-local-repository.py knows
// for a cluster-api checkout (without the test providers).
var clusterAPIProviders = []Spec{
	{Name: "cluster-api", Kustomize: "core/config/default", ComponentsFile: "core-components.yaml"},
	{Name: "bootstrap-kubeadm", Kustomize: "bootstrap/kubeadm/config/default", ComponentsFile: "bootstrap-components.yaml"},
	{Name: "control-plane-kubeadm", Kustomize: "controlplane/kubeadm/config/default", ComponentsFile: "control-plane-components.yaml"},
}

// clusterAPIDevProviders are the test providers of a cluster-api checkout
// that create-local-repository.py also knows: CAPD, with its development
// components file, cluster-api's metadata.yaml and its templates.
var clusterAPIDevProviders = []Spec{
	{Name: "infrastructure-docker", Kustomize: "test/infrastructure/docker/config/default",
		ComponentsFile: "infrastructure-components-development.yaml", Templates: &Templates{Dir: "test/infrastructure/docker/templates"}},
}

// clusterAPILayout finds core's kustomization as the checkout has it:
// core/config/default, or config/default in trees from before core moved
// (where create-local-repository.py still looks).
func clusterAPILayout(dir string, specs []Spec) []Spec {
	out := slices.Clone(specs)
	for i := range out {
		if out[i].Name == CoreProviderName && out[i].Kustomize == "core/config/default" &&
			!isDir(filepath.Join(dir, "core", "config", "default")) && isDir(filepath.Join(dir, "config", "default")) {
			out[i].Kustomize = DefaultKustomize
		}
	}
	return out
}

// ClusterAPIProvider returns the spec of one of the providers a cluster-api
// checkout holds (the core trio and CAPD), as create-local-repository.py's
// built-in table has them.
func ClusterAPIProvider(label string) (Spec, bool) {
	for _, s := range slices.Concat(clusterAPIProviders, clusterAPIDevProviders) {
		if s.Name == label {
			return s, true
		}
	}
	return Spec{}, false
}

// conventionalConfig derives a config from the tree's layout: a cluster-api
// checkout gives its three providers; a provider tree with config/default gives
// one provider whose label comes from the kustomization's
// cluster.x-k8s.io/provider label.
func conventionalConfig(dir string) (*Config, error) {
	if isDir(filepath.Join(dir, "bootstrap", "kubeadm", "config", "default")) &&
		(isDir(filepath.Join(dir, "core", "config", "default")) || isDir(filepath.Join(dir, "controlplane", "kubeadm", "config", "default"))) {
		return &Config{Providers: clusterAPILayout(dir, clusterAPIProviders)}, nil
	}
	kdir := filepath.Join(dir, filepath.FromSlash(DefaultKustomize))
	kfile := kustomization.Find(filesys.MakeFsOnDisk(), kdir)
	if kfile == "" {
		return nil, fmt.Errorf("%s: no %s or %s, and no %s kustomization to build: no kustomization.yaml in %s", dir, ConfigFile, SettingsFile, DefaultKustomize, kdir)
	}
	label, err := labelFromKustomization(kfile)
	if err != nil {
		return nil, err
	}
	if label == "" {
		return nil, fmt.Errorf("%s: no cluster.x-k8s.io/provider label to name the provider: write a %s with providers[].name", kfile, ConfigFile)
	}
	return &Config{Providers: []Spec{{Name: label}}}, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// labelFromKustomization reads the provider label a kustomization sets with
// labels: or commonLabels:.
func labelFromKustomization(file string) (string, error) {
	data, err := fsafe.ReadFile(file)
	if err != nil {
		return "", err
	}
	var k struct {
		CommonLabels map[string]string `json:"commonLabels"`
		Labels       []struct {
			Pairs map[string]string `json:"pairs"`
		} `json:"labels"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	if v := k.CommonLabels[ProviderLabel]; v != "" {
		return v, nil
	}
	for _, l := range k.Labels {
		if v := l.Pairs[ProviderLabel]; v != "" {
			return v, nil
		}
	}
	return "", nil
}

func (c *Config) defaultAndValidate(dir string) error {
	seen := map[string]bool{}
	for i := range c.Providers {
		s := &c.Providers[i]
		field := func(f string) string { return c.where(fmt.Sprintf("providers[%d].%s", i, f)) }
		id, err := s.ID()
		if err != nil {
			return fmt.Errorf("%s: %w", field("name"), err)
		}
		if seen[s.Name] {
			return fmt.Errorf("%s: provider %q is listed twice", field("name"), s.Name)
		}
		seen[s.Name] = true
		if s.Kustomize == "" {
			s.Kustomize = DefaultKustomize
		}
		if s.ComponentsFile == "" {
			s.ComponentsFile = id.DefaultComponentsFile()
		}
		if err := CheckFileName("componentsFile", s.ComponentsFile); err != nil {
			return fmt.Errorf("%s: %w", field("componentsFile"), err)
		}
		if !strings.HasSuffix(s.ComponentsFile, ".yaml") {
			return fmt.Errorf("%s: %q must end in .yaml", field("componentsFile"), s.ComponentsFile)
		}
		if s.Metadata == "" {
			s.Metadata = MetadataFile
		}
		if err := s.defaultTemplates(dir, c.Providers, field); err != nil {
			return err
		}
		if s.Build.Main == "" {
			s.Build.Main = DefaultMain
		}
		if len(s.Build.Platforms) == 0 {
			s.Build.Platforms = slices.Clone(DefaultPlatforms)
		}
		for name, p := range map[string]string{"kustomize": s.Kustomize, "metadata": s.Metadata, "build.main": s.Build.Main} {
			if err := CheckRelPath(p); err != nil {
				return fmt.Errorf("%s: %w", field(name), err)
			}
		}
		if err := s.validateExtras(dir, field); err != nil {
			return err
		}
		if s.NextVersion != "" {
			if _, err := ParseVersion(s.NextVersion); err != nil {
				return fmt.Errorf("%s: %w", field("nextVersion"), err)
			}
		}
	}
	if c.Version != "" {
		if _, err := ParseVersion(c.Version); err != nil {
			return fmt.Errorf("%s: %w", c.where("version"), err)
		}
	}
	for i, b := range c.Before {
		if strings.TrimSpace(b) == "" {
			return fmt.Errorf("%s: before[%d] is empty: write the command to run, e.g. make generate-manifests", c.describe(), i)
		}
	}
	for i, w := range c.Lint.Disable {
		if w.Rule == "" || w.Reason == "" {
			return fmt.Errorf("%s: a waiver needs both rule and reason: {rule: RULE, reason: why it does not apply}", c.where(fmt.Sprintf("lint.disable[%d]", i)))
		}
	}
	return nil
}

// CheckRelPath accepts a slash-separated path inside the provider tree.
func CheckRelPath(p string) error {
	if p == "" {
		return nil
	}
	if path.IsAbs(p) || filepath.IsAbs(p) {
		return fmt.Errorf("path %q must be relative to the provider tree", p)
	}
	clean := path.Clean(filepath.ToSlash(p))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return fmt.Errorf("path %q leaves the provider tree", p)
	}
	return nil
}

// PullPolicies are the imagePullPolicy values Kubernetes accepts.
var PullPolicies = []string{"Always", "IfNotPresent", "Never"}

// validateExtras checks image, components and patches of one provider.
func (s *Spec) validateExtras(dir string, field func(string) string) error {
	if img := s.Image; img != nil {
		if img.NewTag != "" && img.Tag != "" {
			return fmt.Errorf("%s: newTag and tag are both set: keep tag (a template such as \"{{ .VersionNoV }}\") or newTag (a literal), not both", field("image"))
		}
		if img.Digest != "" && (img.NewTag != "" || img.Tag != "") {
			return fmt.Errorf("%s: digest and a tag are both set: an image is pinned by one of them", field("image"))
		}
		if _, err := img.TagFor("v0.0.0"); err != nil {
			return fmt.Errorf("%s: %w", field("image.tag"), err)
		}
		if img.PullPolicy != "" && !slices.Contains(PullPolicies, img.PullPolicy) {
			return fmt.Errorf("%s: %q is not one of %s", field("image.pullPolicy"), img.PullPolicy, strings.Join(PullPolicies, ", "))
		}
	}
	files := map[string]bool{s.ComponentsFile: true}
	for i, c := range s.Components {
		f := func(n string) string { return field(fmt.Sprintf("components[%d].%s", i, n)) }
		if c.Kustomize == "" {
			return fmt.Errorf("%s: empty: name the folder of the kustomization to render, e.g. config/supervisor", f("kustomize"))
		}
		if err := CheckRelPath(c.Kustomize); err != nil {
			return fmt.Errorf("%s: %w", f("kustomize"), err)
		}
		if err := CheckFileName("file", c.File); err != nil {
			return fmt.Errorf("%s: %w", f("file"), err)
		}
		if !strings.HasSuffix(c.File, ".yaml") {
			return fmt.Errorf("%s: %q must end in .yaml", f("file"), c.File)
		}
		if files[c.File] {
			return fmt.Errorf("%s: %q is already a components file of this provider", f("file"), c.File)
		}
		files[c.File] = true
	}
	for i, p := range s.Patches {
		f := func(n string) string { return field(fmt.Sprintf("patches[%d]%s", i, n)) }
		switch {
		case p.Path == "" && p.Patch == "":
			return fmt.Errorf("%s: neither path nor patch is set: give the patch file (relative to the tree) or the patch inline", f(""))
		case p.Path != "" && p.Patch != "":
			return fmt.Errorf("%s: both path and patch are set: keep one", f(""))
		}
		if err := CheckRelPath(p.Path); err != nil {
			return fmt.Errorf("%s: %w", f(".path"), err)
		}
		if p.Path != "" && !isFile(filepath.Join(dir, filepath.FromSlash(p.Path))) {
			return fmt.Errorf("%s: %s is not a file in the provider tree %s", f(".path"), p.Path, dir)
		}
		if _, err := path.Match(p.File, ""); err != nil || strings.Contains(p.File, "/") {
			return fmt.Errorf("%s: %q is not a release file name pattern (path.Match, no '/'), e.g. cluster-template-k3s-*.yaml", f(".file"), p.File)
		}
	}
	return nil
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
