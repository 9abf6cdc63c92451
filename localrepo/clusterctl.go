package localrepo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/drone/envsubst/v2"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
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

// DevRoot is where capirepo dev writes the dev repository by default, the
// folder create-local-repository.py uses.
func (e Env) DevRoot() (string, error) {
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

// ClusterctlConfig is the part of a clusterctl config capirepo writes.
type ClusterctlConfig struct {
	Providers       []ConfigProvider `json:"providers"`
	OverridesFolder string           `json:"overridesFolder,omitempty"`
}

// ConfigProvider is one entry of a clusterctl config's providers list.
type ConfigProvider struct {
	Name string `json:"name"`
	Type string `json:"type"`
	URL  string `json:"url"`
}

// ConfigFor turns a publish summary's providers into config entries.
func ConfigFor(ps []publish.ProviderURL) []ConfigProvider {
	out := make([]ConfigProvider, 0, len(ps))
	for _, p := range ps {
		out = append(out, ConfigProvider(p))
	}
	return out
}

// YAML renders the config as clusterctl reads it.
func (c ClusterctlConfig) YAML() ([]byte, error) { return yaml.Marshal(c) }

// initFlags are clusterctl init's flags per provider type, in its order.
var initFlags = []struct {
	typ  provider.Type
	flag string
}{
	{"CoreProvider", "--core"},
	{"BootstrapProvider", "--bootstrap"},
	{"ControlPlaneProvider", "--control-plane"},
	{"InfrastructureProvider", "--infrastructure"},
	{"IPAMProvider", "--ipam"},
	{"RuntimeExtensionProvider", "--runtime-extension"},
	{"AddonProvider", "--addon"},
}

// InitVersion is one provider and the version to install.
type InitVersion struct {
	ID      provider.ID
	Version string
}

// InitCommand returns the clusterctl init command line that installs the
// providers at their versions with the given config; only the flags of the
// provider types present are set.
func InitCommand(ps []InitVersion, configFile string) string {
	var b strings.Builder
	b.WriteString("clusterctl init")
	for _, f := range initFlags {
		var vals []string
		for _, p := range ps {
			if p.ID.Type == f.typ {
				vals = append(vals, p.ID.Name+":"+p.Version)
			}
		}
		if len(vals) > 0 {
			slices.Sort(vals)
			fmt.Fprintf(&b, " %s %s", f.flag, strings.Join(vals, ","))
		}
	}
	fmt.Fprintf(&b, " --config %s", shellQuote(configFile))
	return b.String()
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		safe := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:=@%,", r)
		return !safe
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeFileAtomic writes data to name through a temporary file in the same
// folder and a rename, so a reader sees the old file or the new one.
func writeFileAtomic(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
