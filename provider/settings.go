package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
)

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
