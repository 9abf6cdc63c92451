package publish

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/provider"
)

// ClusterctlConfig is what capirepo writes of a clusterctl config
// (clusterctl.yaml): the providers: list, and for the dev repository and a
// mirror the overrides folder, cert-manager and the image overrides. Every
// command that prints or writes a clusterctl config renders it here.
type ClusterctlConfig struct {
	Providers       []ProviderURL   `json:"providers"`
	OverridesFolder string          `json:"overridesFolder,omitempty"`
	CertManager     *CertManagerURL `json:"cert-manager,omitempty"`
	// Images maps an images: key (a provider label, cert-manager) to where
	// clusterctl takes its images from.
	Images map[string]ImageOverride `json:"images,omitempty"`
}

// CertManagerURL is the cert-manager: entry of a clusterctl config.
type CertManagerURL struct {
	URL     string `json:"url"`
	Version string `json:"version"`
}

// ImageOverride is one entry of a clusterctl config's images:.
type ImageOverride struct {
	// Repository replaces everything before the last '/' of an image name.
	Repository string `json:"repository"`
}

// YAML renders the config as clusterctl reads it.
func (c ClusterctlConfig) YAML() string {
	if c.Providers == nil {
		c.Providers = []ProviderURL{}
	}
	data, err := yaml.Marshal(c)
	if err != nil { // strings, slices and maps of strings always marshal
		panic(fmt.Sprintf("clusterctl config: %v", err))
	}
	return string(data)
}

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
