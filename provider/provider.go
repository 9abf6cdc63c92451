package provider

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
)

// Type is clusterctl's provider type, reused so names and ordering match clusterctl.
type Type = clusterctlv1.ProviderType

// CoreProviderName is the only name a core provider may have.
const CoreProviderName = "cluster-api"

// CertManager is cert-manager as clusterctl names it when it reads
// cert-manager's manifest through its repository code
// (cluster/cert_manager.go): a provider named cert-manager with no type. Its
// label, folder and package name is cert-manager, and it is also the key of
// its images: override.
var CertManager = ID{Name: "cert-manager"}

// ProviderLabel is the label clusterctl puts on, and expects on, every object of a provider.
const ProviderLabel = "cluster.x-k8s.io/provider"

// kinds lists the provider types in clusterctl's install order with their label
// prefix and the components file name the clusterctl contract suggests.
var kinds = []struct {
	typ        Type
	prefix     string
	components string
}{
	{clusterctlv1.CoreProviderType, "", "core-components.yaml"},
	{clusterctlv1.BootstrapProviderType, "bootstrap-", "bootstrap-components.yaml"},
	{clusterctlv1.ControlPlaneProviderType, "control-plane-", "control-plane-components.yaml"},
	{clusterctlv1.InfrastructureProviderType, "infrastructure-", "infrastructure-components.yaml"},
	{clusterctlv1.IPAMProviderType, "ipam-", "ipam-components.yaml"},
	{clusterctlv1.RuntimeExtensionProviderType, "runtime-extension-", "runtime-extension-components.yaml"},
	{clusterctlv1.AddonProviderType, "addon-", "addon-components.yaml"},
}

// Types returns the seven provider types in clusterctl's order.
func Types() []Type {
	out := make([]Type, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k.typ)
	}
	return out
}

// ID names one provider: its clusterctl name and type. Its Label is what
// folders, packages and the cluster.x-k8s.io/provider label are called.
type ID struct {
	Name string
	Type Type
}

// Label returns the provider label, e.g. infrastructure-aws or cluster-api.
func (id ID) Label() string { return clusterctlv1.ManifestLabel(id.Name, id.Type) }

// DefaultComponentsFile returns the components file name the clusterctl contract suggests.
func (id ID) DefaultComponentsFile() string {
	for _, k := range kinds {
		if k.typ == id.Type {
			return k.components
		}
	}
	return "components.yaml"
}

// ParseLabel turns a provider label (cluster-api, bootstrap-kubeadm,
// infrastructure-aws, ...) into its name and type.
func ParseLabel(label string) (ID, error) {
	if label == CoreProviderName {
		return ID{Name: CoreProviderName, Type: clusterctlv1.CoreProviderType}, nil
	}
	// Longest prefixes first would matter only if one prefix began another; none does.
	for _, k := range kinds[1:] {
		if name, ok := strings.CutPrefix(label, k.prefix); ok {
			if err := CheckName(name); err != nil {
				return ID{}, fmt.Errorf("provider label %q: %w", label, err)
			}
			return ID{Name: name, Type: k.typ}, nil
		}
	}
	return ID{}, fmt.Errorf("provider label %q has no known type prefix: use cluster-api, or one of %s followed by a name",
		label, strings.Join(prefixes(), ", "))
}

func prefixes() []string {
	var out []string
	for _, k := range kinds[1:] {
		out = append(out, k.prefix)
	}
	return out
}

// CheckName checks a provider name as clusterctl's config does (lower-case
// DNS-1123 label, so it can be a folder and a package name as well).
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("empty provider name")
	}
	if len(name) > 63 {
		return fmt.Errorf("provider name %q is longer than 63 characters", name)
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' && i > 0 && i < len(name)-1
		if !ok {
			return fmt.Errorf("provider name %q must be lower-case letters, digits and inner dashes", name)
		}
	}
	return nil
}

// Characters a published file name may hold on every target: GitHub's REST
// API renames a release asset whose name holds any other (a space, '+',
// '~', ':', '(' ... become '.' or '-'), and GitLab's generic packages refuse
// a file name with other characters than these and '+'.
const (
	githubNameChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
	gitlabNameChars = githubNameChars + "+"
)

// CheckFlavorName checks a flavor: the <flavor> of the
// cluster-template-<flavor>.yaml that clusterctl generate cluster --flavor
// fetches. clusterctl takes any name it can build that file name of
// (v1.24.10-crs, pre-v1.33, Ubuntu_22.04); refused is only what clusterctl
// or a target cannot carry: no name, a path separator or "..", a file name
// too long for a file system (the dist folder, file:// targets), and the
// characters GitHub renames or GitLab refuses, each said with its target.
func CheckFlavorName(flavor string) error {
	if flavor == "" {
		return errors.New("flavor name is empty: cluster-template.yaml is the default flavor, and clusterctl cannot ask for cluster-template-.yaml")
	}
	if err := CheckFileName("flavor name", flavor); err != nil {
		return err
	}
	file := "cluster-template-" + flavor + ".yaml"
	if len(file) > 255 {
		return fmt.Errorf("flavor name %q makes a file name of %d bytes: file systems take at most 255 (the dist folder, file:// targets)", flavor, len(file))
	}
	var bad []string
	for _, r := range flavor {
		if !strings.ContainsRune(githubNameChars, r) && !slices.Contains(bad, strconv.QuoteRune(r)) {
			bad = append(bad, strconv.QuoteRune(r))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	which := "GitHub renames a release asset whose name holds it (its REST API turns it into '.' or '-'), so clusterctl does not find " + file + " there"
	if strings.ContainsFunc(flavor, func(r rune) bool { return !strings.ContainsRune(gitlabNameChars, r) }) {
		which += ", and GitLab's generic packages refuse the file name"
	}
	return fmt.Errorf("flavor name %q holds %s: %s; use letters, digits, '.', '-' and '_'", flavor, strings.Join(bad, ", "), which)
}

// CheckFileName checks a name that becomes one path element of a release:
// a flavor, a ClusterClass name or an asset file name. It never holds a path
// separator or "..", so nothing can be written outside its folder.
func CheckFileName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s is empty", what)
	case strings.ContainsAny(name, `/\`) || strings.Contains(name, ".."):
		return fmt.Errorf("%s %q must not contain '/', '\\' or '..'", what, name)
	case name != path.Clean(name) || strings.HasPrefix(name, "."):
		return fmt.Errorf("%s %q is not a plain file name", what, name)
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("%s %q holds a control character", what, name)
	}
	return nil
}
