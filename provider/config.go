package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/internal/fsafe"
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
}

// Spec describes one provider in a tree. Paths are slash-separated and
// relative to the provider tree (--dir).
type Spec struct {
	// Name is the provider label: cluster-api, infrastructure-aws, ...
	Name           string `json:"name"`
	Kustomize      string `json:"kustomize,omitempty"`
	ComponentsFile string `json:"componentsFile,omitempty"`
	Metadata       string `json:"metadata,omitempty"`
	Templates      string `json:"templates,omitempty"`
	Image          *Image `json:"image,omitempty"`
	Build          Build  `json:"build,omitempty"`
	// NextVersion is the version `capirepo dev` builds (clusterctl-settings.json config.nextVersion).
	NextVersion string `json:"nextVersion,omitempty"`
}

// Image takes kustomize's images fields. Name selects the image to change
// (default: the image of the manager container); NewTag defaults to the version.
type Image struct {
	Name    string `json:"name,omitempty"`
	NewName string `json:"newName,omitempty"`
	NewTag  string `json:"newTag,omitempty"`
	Digest  string `json:"digest,omitempty"`
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
type Waiver struct {
	Rule   string `json:"rule"`
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

// ParseConfig decodes a capirepo.yaml strictly, so a misspelt field is an error.
func ParseConfig(file string, data []byte) (*Config, error) {
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

// ClusterAPIProvider returns the spec of one of cluster-api's own providers.
func ClusterAPIProvider(label string) (Spec, bool) {
	i := slices.IndexFunc(clusterAPIProviders, func(s Spec) bool { return s.Name == label })
	if i < 0 {
		return Spec{}, false
	}
	return clusterAPIProviders[i], true
}

// conventionalConfig derives a config from the tree's layout: a cluster-api
// checkout gives its three providers; a provider tree with config/default gives
// one provider whose label comes from the kustomization's
// cluster.x-k8s.io/provider label.
func conventionalConfig(dir string) (*Config, error) {
	if isDir(filepath.Join(dir, "core", "config", "default")) && isDir(filepath.Join(dir, "bootstrap", "kubeadm", "config", "default")) {
		return &Config{Providers: slices.Clone(clusterAPIProviders)}, nil
	}
	kfile, err := findKustomization(filepath.Join(dir, filepath.FromSlash(DefaultKustomize)))
	if err != nil {
		return nil, fmt.Errorf("%s: no %s or %s, and no %s kustomization to build: %w", dir, ConfigFile, SettingsFile, DefaultKustomize, err)
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

func findKustomization(dir string) (string, error) {
	for _, n := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		p := filepath.Join(dir, n)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no kustomization.yaml in %s", dir)
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
		field := func(f string) string { return fmt.Sprintf("%s: providers[%d].%s", c.describe(), i, f) }
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
		if s.Templates == "" && isDir(filepath.Join(dir, DefaultTemplates)) {
			s.Templates = DefaultTemplates
		}
		if s.Build.Main == "" {
			s.Build.Main = DefaultMain
		}
		if len(s.Build.Platforms) == 0 {
			s.Build.Platforms = slices.Clone(DefaultPlatforms)
		}
		for name, p := range map[string]string{"kustomize": s.Kustomize, "metadata": s.Metadata, "templates": s.Templates, "build.main": s.Build.Main} {
			if err := CheckRelPath(p); err != nil {
				return fmt.Errorf("%s: %w", field(name), err)
			}
		}
		if s.NextVersion != "" {
			if _, err := ParseVersion(s.NextVersion); err != nil {
				return fmt.Errorf("%s: %w", field("nextVersion"), err)
			}
		}
	}
	if c.Version != "" {
		if _, err := ParseVersion(c.Version); err != nil {
			return fmt.Errorf("%s: field version: %w", c.describe(), err)
		}
	}
	for i, w := range c.Lint.Disable {
		if w.Rule == "" || w.Reason == "" {
			return fmt.Errorf("%s: lint.disable[%d]: a waiver needs both rule and reason", c.describe(), i)
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
