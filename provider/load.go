package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/internal/kustomization"
)

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

// IsSourceTree tells a provider source tree (a capirepo.yaml, a
// clusterctl-settings.json or a kustomization under config/) from a folder
// of release assets.
func IsSourceTree(path string) bool {
	for _, p := range []string{ConfigFile, SettingsFile, DefaultKustomize + "/kustomization.yaml", "core/" + DefaultKustomize + "/kustomization.yaml"} {
		if _, err := os.Stat(filepath.Join(path, filepath.FromSlash(p))); err == nil {
			return true
		}
	}
	return false
}
