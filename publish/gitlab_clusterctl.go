package publish

import (
	"fmt"
	"strings"
)

// ClusterctlProvidersYAML returns the providers: list for clusterctl's
// config file (~/.config/cluster-api/clusterctl.yaml), one entry per
// published provider, ready to paste.
func ClusterctlProvidersYAML(providers []ProviderURL) string {
	var b strings.Builder
	b.WriteString("providers:\n")
	for _, p := range providers {
		fmt.Fprintf(&b, "- name: %q\n  type: %q\n  url: %q\n", p.Name, p.Type, p.URL)
	}
	return b.String()
}
