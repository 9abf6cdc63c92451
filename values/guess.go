package values

import (
	"slices"
	"strings"
)

// Guess is a required variable's stand-in from its name alone, so that
// numbers, versions, booleans, images and base64 blobs land in typed fields
// (clusterctl converts a topology Cluster to its Go type, which fails on a
// string where an integer belongs). Anything else gets Placeholder. A
// Chooser prefers it where it fits the fields' schemas.
func Guess(name string) string {
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
		return standInBase64
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
