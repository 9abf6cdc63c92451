package publish

import (
	"fmt"
	"strings"

	"github.com/capirepo/capirepo/publish/operator"
)

// Site is what an air-gapped site installs from a mirror of upstream
// providers: every provider at the versions mirrored, cert-manager, and
// where the images were copied. It renders as the clusterctl config of the
// site (ClusterctlConfig), or, for a mirror clusterctl cannot read, as the
// cluster-api-operator Provider resources that install from it
// (OperatorResources).
type Site struct {
	// Mirror is the mirror's URL.
	Mirror string
	// Providers are the mirrored providers, in the order they were asked for.
	Providers []SiteProvider
	// CertManager is cert-manager's entry; nil when it was not mirrored.
	CertManager *CertManagerURL
	// Images is REGISTRY/PREFIX, below which the images were copied; ""
	// when none were. ImageOverrides are the images: entries that point
	// clusterctl there.
	Images         string
	ImageOverrides map[string]ImageOverride
}

// SiteProvider is one mirrored provider.
type SiteProvider struct {
	Label, Name, Type string
	// Versions are the versions mirrored, oldest first; Newest is the one
	// clusterctl's latest picks among them, and URL where clusterctl reads
	// it at the mirror.
	Versions    []string
	Newest, URL string
	// Resources are the operator's Provider resources that install Newest
	// from the mirror, for OperatorResources.
	Resources []operator.Resource
}

// ClusterctlConfig is the site's clusterctl config: each provider URL names
// the newest mirrored version (a GitLab package holds one version, so the
// URL names one; the others are installed as NAME:VERSION), with
// cert-manager and the image overrides, headed by comments that say so.
func (s Site) ClusterctlConfig() string {
	c := ClusterctlConfig{CertManager: s.CertManager, Images: s.ImageOverrides}
	var b strings.Builder
	b.WriteString("# clusterctl config for the mirror " + s.Mirror + ", written by capirepo mirror.\n")
	b.WriteString("# Each provider URL names the mirrored version clusterctl's latest would pick; install\n# another mirrored version as NAME:VERSION (clusterctl init --infrastructure aws:v2.5.1).\n")
	for _, p := range s.Providers {
		c.Providers = append(c.Providers, ProviderURL{Name: p.Name, Type: p.Type, URL: p.URL})
		fmt.Fprintf(&b, "#   %s: %s\n", p.Label, strings.Join(p.Versions, ", "))
	}
	if s.Images != "" {
		fmt.Fprintf(&b, "# Images were copied to %s/<key>/<image-name>; each images: key maps\n# its provider's images there (clusterctl replaces everything before the last '/').\n",
			strings.TrimSuffix(s.Images, "/"))
	}
	return b.String() + c.YAML()
}

// OperatorResources are the cluster-api-operator Provider resources that
// install every provider at its newest mirrored version from a mirror
// clusterctl cannot read (why says why not), as publish oci prints them,
// headed by what the site can and cannot do with the mirror.
func (s Site) OperatorResources(why string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# cluster-api-operator Provider resources for the mirror %s, written by capirepo mirror.\n", s.Mirror)
	fmt.Fprintf(&b, "# %s, so it cannot install from this mirror: apply these where\n# cluster-api-operator runs. Each installs the mirrored version clusterctl's\n# latest would pick (set spec.version to install another).\n", why)
	for _, p := range s.Providers {
		fmt.Fprintf(&b, "#   %s: %s\n", p.Label, strings.Join(p.Versions, ", "))
		y, err := operator.Manifest(p.Resources)
		if err != nil {
			return "", err
		}
		b.Write(y)
	}
	if s.Images != "" {
		fmt.Fprintf(&b, "# Images were copied to %s/<provider-label>/<image-name>: point the providers'\n# containers there (the Provider resources' spec.deployment.containers[].imageUrl).\n",
			strings.TrimSuffix(s.Images, "/"))
	}
	return b.String(), nil
}
