package operator

import (
	"fmt"

	"github.com/capirepo/capirepo/provider"
	"sigs.k8s.io/yaml"
)

// Resource is one Provider resource of the operator (CoreProvider,
// InfrastructureProvider, ...) that installs a provider version from an OCI
// artifact or from ConfigMaps. Exactly one of OCI and Selector is set.
type Resource struct {
	ID        provider.ID
	Namespace string
	Version   string
	// OCI is fetchConfig.oci: REGISTRY/PATH[:TAG], with http:// in front
	// for a plain-HTTP registry.
	OCI string
	// Selector is fetchConfig.selector.matchLabels.
	Selector map[string]string
}

type meta struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

type fetchConfig struct {
	OCI      string         `json:"oci,omitempty"`
	Selector *labelSelector `json:"selector,omitempty"`
}

type labelSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

type resourceDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   meta   `json:"metadata"`
	Spec       struct {
		Version     string      `json:"version"`
		FetchConfig fetchConfig `json:"fetchConfig"`
	} `json:"spec"`
}

// YAML renders the resource as one YAML document (without "---"). The
// resource's metadata.name is the provider name and spec.version the
// version: the operator builds the versioned file names it looks for from
// both.
func (r Resource) YAML() ([]byte, error) {
	if (r.OCI == "") == (r.Selector == nil) {
		return nil, fmt.Errorf("%s: a Provider resource needs exactly one of fetchConfig.oci and fetchConfig.selector", r.ID.Label())
	}
	d := resourceDoc{APIVersion: APIVersion, Kind: Kind(r.ID.Type), Metadata: meta{Name: r.ID.Name, Namespace: r.Namespace}}
	d.Spec.Version = r.Version
	d.Spec.FetchConfig.OCI = r.OCI
	if r.Selector != nil {
		d.Spec.FetchConfig.Selector = &labelSelector{MatchLabels: r.Selector}
	}
	return yaml.Marshal(d)
}

// NamespaceYAML renders a Namespace object, for output applied before the
// resources that live in it.
func NamespaceYAML(name string) ([]byte, error) {
	return yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": meta{Name: name}})
}

// DefaultNamespace is the namespace a provider's resource goes in when none
// is given: the one its components create, else <label>-system.
func DefaultNamespace(id provider.ID, components []byte) string {
	if ns := Namespace(components); ns != "" {
		return ns
	}
	return id.Label() + "-system"
}

// Manifest renders resources as one multi-document YAML file, each
// document after a "---" line, as kubectl apply -f takes it.
func Manifest(res []Resource) ([]byte, error) {
	var b []byte
	for _, r := range res {
		y, err := r.YAML()
		if err != nil {
			return nil, err
		}
		b = append(append(b, "---\n"...), y...)
	}
	return b, nil
}
