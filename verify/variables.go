package verify

import (
	"maps"
	"slices"
	"strings"
)

// Values verify gives the variables clusterctl itself sets for
// `clusterctl generate cluster` (cli/config.go:templateOptionsToVariables).
const (
	// Namespace is the target namespace for components and templates alike.
	Namespace = "capirepo-verify"
	// ClusterName is CLUSTER_NAME: a DNS-1123 subdomain, as clusterctl demands.
	ClusterName = "capirepo-verify"
	// KubernetesVersion is KUBERNETES_VERSION unless Options gives another.
	KubernetesVersion = "v1.33.0"
)

// Placeholder is the value a required variable gets when the caller gave
// none and its name does not suggest another type. It is a DNS-1123 label,
// so it is also valid where the variable names an object, a label value, a
// host name part or an image tag.
const Placeholder = "capirepo-placeholder"

// PlaceholderRegistry stands in for image registries and repositories: a
// reserved .invalid host, so an image built from it parses but never pulls.
const PlaceholderRegistry = "registry.invalid/capirepo"

// PlaceholderFor guesses a value for a required variable from its name, so that
// numbers, versions, booleans, images and base64 blobs land in typed fields (clusterctl
// converts a topology Cluster to its Go type, which fails on a string where an
// integer belongs). Anything else gets Placeholder.
func PlaceholderFor(name string) string {
	n := strings.ToUpper(name)
	has := func(parts ...string) bool {
		return slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(n, p) })
	}
	suffix := func(parts ...string) bool {
		return slices.ContainsFunc(parts, func(p string) bool { return strings.HasSuffix(n, p) })
	}
	switch {
	case has("B64", "BASE64"):
		// base64 of Placeholder: decodes, and is a plain string as well.
		return "Y2FwaXJlcG8tcGxhY2Vob2xkZXI="
	case suffix("_COUNT", "_REPLICAS", "_PORT", "_SIZE", "_NUMBER", "_CPUS", "_CPU", "_GB", "_MB", "_MIB", "_GIB"):
		return "1"
	case suffix("_IMAGE"):
		// clusterctl parses every Deployment image as a fully qualified reference.
		return PlaceholderRegistry + "/placeholder:v0.0.0"
	case suffix("_REGISTRY", "_REPOSITORY", "_REPO"):
		return PlaceholderRegistry
	case suffix("_TAG"):
		return "v0.0.0"
	case suffix("_VERSION"):
		return KubernetesVersion
	case suffix("_ENABLED", "_ENABLE", "_DISABLED") || strings.HasPrefix(n, "ENABLE_") || strings.HasPrefix(n, "DISABLE_"):
		return "false"
	}
	return Placeholder
}

// values holds the variables of one clusterctl config: the fixed template
// values, the caller's, and placeholders added as required variables are
// discovered. It remembers where each value came from for the report.
type values struct {
	set         map[string]string
	placeholder map[string]bool
}

func newValues(kubernetesVersion string, given map[string]string) *values {
	v := &values{set: map[string]string{}, placeholder: map[string]bool{}}
	v.set["NAMESPACE"] = Namespace
	v.set["CLUSTER_NAME"] = ClusterName
	v.set["KUBERNETES_VERSION"] = kubernetesVersion
	v.set["CONTROL_PLANE_MACHINE_COUNT"] = "1"
	v.set["WORKER_MACHINE_COUNT"] = "1"
	maps.Copy(v.set, given)
	return v
}

// require gives every required variable (nil default) without a value a
// placeholder, and returns the names it added.
func (v *values) require(vars map[string]*string) []string {
	var added []string
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if vars[name] != nil {
			continue
		}
		if _, ok := v.set[name]; ok {
			continue
		}
		v.set[name] = PlaceholderFor(name)
		v.placeholder[name] = true
		added = append(added, name)
	}
	return added
}

// describe turns clusterctl's variable map into report entries with the
// value verify used.
func (v *values) describe(vars map[string]*string) []Variable {
	out := make([]Variable, 0, len(vars))
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		e := Variable{Name: name, Required: vars[name] == nil, Default: vars[name]}
		if val, ok := v.set[name]; ok {
			e.Value = val
			e.Placeholder = v.placeholder[name]
		} else if vars[name] != nil {
			e.Value = *vars[name]
		}
		out = append(out, e)
	}
	return out
}
