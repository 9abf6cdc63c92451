package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/drone/envsubst/v2"
	"sigs.k8s.io/yaml"
)

// Env holds what clusterctl reads from the process to find its files; cmd/
// fills it from the environment.
type Env struct {
	XDGConfigHome string
	Home          string
	// Getenv expands ${VAR} in overridesFolder and supplies OVERRIDESFOLDER,
	// as clusterctl does; nil means an empty environment.
	Getenv func(string) string
}

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

// ConfigDir is clusterctl's configuration folder: $XDG_CONFIG_HOME/cluster-api,
// else $HOME/.config/cluster-api.
func (e Env) ConfigDir() (string, error) {
	base := e.XDGConfigHome
	if base == "" || !filepath.IsAbs(base) {
		if e.Home == "" {
			return "", errors.New("neither XDG_CONFIG_HOME nor HOME is set: pass the folder explicitly")
		}
		base = filepath.Join(e.Home, ".config")
	}
	return filepath.Join(base, "cluster-api"), nil
}

// DevRepository is where capirepo dev writes the dev repository by default,
// the folder cluster-api's create-local-repository.py uses: dev-repository
// in clusterctl's configuration folder.
func (e Env) DevRepository() (string, error) {
	d, err := e.ConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "dev-repository"), nil
}

// legacyDir is clusterctl's older configuration folder, $HOME/.cluster-api.
func (e Env) legacyDir() string {
	if e.Home == "" {
		return ""
	}
	return filepath.Join(e.Home, ".cluster-api")
}

// OverridesFolder returns the overrides folder clusterctl would use, and
// where that choice came from, in clusterctl's order
// (cmd/clusterctl/client/repository/overrides.go): overridesFolder from the
// environment (OVERRIDESFOLDER) or from the clusterctl config (configFile,
// or else the default clusterctl.yaml in the config folder or
// ~/.cluster-api), expanded with envsubst; else
// $XDG_CONFIG_HOME/cluster-api/overrides, unless that does not exist and
// ~/.cluster-api/overrides does.
func OverridesFolder(env Env, configFile string) (folder, source string, err error) {
	configured, source := env.getenv("OVERRIDESFOLDER"), "OVERRIDESFOLDER"
	if strings.TrimSpace(configured) == "" {
		if configFile == "" {
			configFile = env.defaultConfigFile()
		}
		if configFile != "" {
			if configured, err = readOverridesFolder(configFile); err != nil {
				return "", "", err
			}
			source = configFile + " overridesFolder"
		}
	}
	if strings.TrimSpace(configured) != "" {
		folder, err := envsubst.Eval(configured, env.getenv)
		if err != nil {
			return "", "", fmt.Errorf("%s: cannot expand %q: %w", source, configured, err)
		}
		if !filepath.IsAbs(folder) {
			return "", "", fmt.Errorf("%s: %q is not an absolute path, which clusterctl needs", source, folder)
		}
		return folder, source, nil
	}
	dir, err := env.ConfigDir()
	if err != nil {
		return "", "", err
	}
	folder = filepath.Join(dir, "overrides")
	if _, err := os.Stat(folder); errors.Is(err, fs.ErrNotExist) && env.legacyDir() != "" {
		legacy := filepath.Join(env.legacyDir(), "overrides")
		if _, err := os.Stat(legacy); err == nil {
			return legacy, "~/.cluster-api/overrides (exists, and the XDG folder does not)", nil
		}
	}
	return folder, "clusterctl's default", nil
}

// defaultConfigFile finds the clusterctl config clusterctl reads without
// --config: clusterctl.{yaml,yml,json} in the config folder, else in ~/.cluster-api.
func (e Env) defaultConfigFile() string {
	var dirs []string
	if d, err := e.ConfigDir(); err == nil {
		dirs = append(dirs, d)
	}
	if d := e.legacyDir(); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		for _, ext := range []string{"yaml", "yml", "json"} {
			p := filepath.Join(d, "clusterctl."+ext)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p
			}
		}
	}
	return ""
}

// readOverridesFolder reads overridesFolder from a clusterctl config; keys
// are matched case-insensitively, as viper does.
func readOverridesFolder(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read clusterctl config: %w", err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	for k, v := range m {
		if strings.EqualFold(k, "overridesFolder") {
			s, ok := v.(string)
			if !ok {
				return "", fmt.Errorf("%s: field overridesFolder must be a string", file)
			}
			return s, nil
		}
	}
	return "", nil
}
