package provider

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/internal/option"
)

// TreeSpec is one provider to build and the tree it comes from.
type TreeSpec struct {
	// Dir is the provider tree (absolute), Config its config, Spec the
	// provider's entry in it.
	Dir    string
	Config *Config
	Spec   Spec
}

func (s TreeSpec) describe() string {
	if s.Config.File != "" {
		return s.Config.File
	}
	return s.Dir
}

// LoadTreeSpecs reads the providers a configuration names the way
// cluster-api's create-local-repository.py does. A clusterctl-settings.json
// with providers or provider_repos is a top-level file: each provider_repos
// entry (relative to dir) is another tree with its own configuration, and
// providers picks which labels to build (cluster-api's own from dir, a
// cluster-api checkout). Any other configuration names the providers of dir
// itself (LoadConfig).
func LoadTreeSpecs(dir, configPath string) ([]TreeSpec, error) {
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	settings := configPath
	if settings == "" && !exists(filepath.Join(dir, ConfigFile)) && exists(filepath.Join(dir, SettingsFile)) {
		settings = filepath.Join(dir, SettingsFile)
	}
	if strings.HasSuffix(settings, ".json") {
		data, err := fsafe.ReadFile(settings)
		if err != nil {
			return nil, fmt.Errorf("read settings: %w", err)
		}
		s, err := DecodeSettings(settings, data)
		if err != nil {
			return nil, err
		}
		if len(s.Providers) > 0 || len(s.ProviderRepos) > 0 {
			return topLevelSpecs(dir, settings, s)
		}
	}
	cfg, err := LoadConfig(dir, configPath)
	if err != nil {
		return nil, err
	}
	out := make([]TreeSpec, 0, len(cfg.Providers))
	for _, spec := range cfg.Providers {
		out = append(out, TreeSpec{Dir: dir, Config: cfg, Spec: spec})
	}
	return out, nil
}

func topLevelSpecs(dir, file string, s *Settings) ([]TreeSpec, error) {
	avail := map[string]TreeSpec{}
	var order []string
	add := func(src TreeSpec, where string) error {
		if prev, dup := avail[src.Spec.Name]; dup {
			return fmt.Errorf("%s: provider %s comes from both %s and %s: list its repository once", file, src.Spec.Name, prev.describe(), where)
		}
		avail[src.Spec.Name] = src
		order = append(order, src.Spec.Name)
		return nil
	}
	if s.Name != "" {
		cfg, err := LoadConfig(dir, file)
		if err != nil {
			return nil, err
		}
		for _, spec := range cfg.Providers {
			if err := add(TreeSpec{Dir: dir, Config: cfg, Spec: spec}, file); err != nil {
				return nil, err
			}
		}
	}
	for i, r := range s.ProviderRepos {
		rdir := r
		if !filepath.IsAbs(rdir) {
			rdir = filepath.Join(dir, filepath.FromSlash(r))
		}
		if fi, err := os.Stat(rdir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%s: provider_repos[%d] %q: %s is not a folder: clone the provider there or fix the path (relative to %s)", file, i, r, rdir, dir)
		}
		cfg, err := LoadConfig(rdir, "")
		if err != nil {
			return nil, fmt.Errorf("%s: provider_repos[%d] %q: %w", file, i, r, err)
		}
		for _, spec := range cfg.Providers {
			if err := add(TreeSpec{Dir: rdir, Config: cfg, Spec: spec}, cfg.File); err != nil {
				return nil, err
			}
		}
	}
	want := s.Providers
	if len(want) == 0 {
		want = order
	}
	var capi *Config
	var out []TreeSpec
	seen := map[string]bool{}
	for i, label := range want {
		if seen[label] {
			return nil, fmt.Errorf("%s: providers[%d] %q is listed twice", file, i, label)
		}
		seen[label] = true
		if src, ok := avail[label]; ok {
			out = append(out, src)
			continue
		}
		if _, ok := ClusterAPIProvider(label); !ok || s.Name != "" {
			return nil, fmt.Errorf("%s: providers[%d] %q: no provider_repos entry provides it: add the folder of its repository (holding its clusterctl-settings.json or capirepo.yaml) to provider_repos", file, i, label)
		}
		if capi == nil {
			cfg, err := LoadConfig(dir, file)
			if err != nil {
				return nil, err
			}
			capi = cfg
		}
		var spec *Spec
		for k := range capi.Providers {
			if capi.Providers[k].Name == label {
				spec = &capi.Providers[k]
			}
		}
		if spec == nil {
			return nil, fmt.Errorf("%s: providers[%d] %q: not found in the settings", file, i, label)
		}
		if !exists(filepath.Join(dir, filepath.FromSlash(spec.Kustomize))) {
			return nil, fmt.Errorf("%s: providers[%d] %q is one of cluster-api's own providers, but %s has no %s: run capirepo dev in a cluster-api checkout, or add the repository that provides it to provider_repos", file, i, label, dir, spec.Kustomize)
		}
		out = append(out, TreeSpec{Dir: dir, Config: capi, Spec: *spec})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no providers to build: list them in providers", file)
	}
	return out, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return !errors.Is(err, fs.ErrNotExist)
}

// SettingsNextVersionIgnored says, when the tree has both a capirepo.yaml
// (the config capirepo reads) and a clusterctl-settings.json whose
// nextVersion is not the version built, that capirepo.yaml wins: the
// settings file is not read, and a developer who edits its nextVersion
// would otherwise see no effect. "" when there is nothing to say (the
// config is not a capirepo.yaml, or the versions agree).
func (s TreeSpec) SettingsNextVersionIgnored(built string) string {
	if filepath.Base(s.Config.File) != ConfigFile {
		return ""
	}
	file := filepath.Join(s.Dir, SettingsFile)
	data, err := fsafe.ReadFile(file)
	if err != nil {
		return ""
	}
	st, err := DecodeSettings(file, data)
	if err != nil || st.Config == nil || st.Config.NextVersion == "" || st.Config.NextVersion == built || (st.Name != "" && st.Name != s.Spec.Name) {
		return ""
	}
	return fmt.Sprintf("%s: nextVersion %s is not used: %s is the config capirepo reads, and wins (building %s); set nextVersion in %s, or pass %s",
		file, st.Config.NextVersion, s.Config.File, built, ConfigFile, option.Version)
}
