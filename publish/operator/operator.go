// Package operator holds what cluster-api-operator expects of the places it
// installs providers from: its names for provider types, the file names it
// looks for in an OCI artifact and the order it tries them in, the labels of
// the ConfigMaps it reads, and the Provider custom resources that point at
// either. The oci and configmap publishers write by these rules and read back
// by them.
//
// Everything here follows the operator's code (kubernetes-sigs/
// cluster-api-operator: internal/controller/oci_source.go, phase_load.go,
// manifests_downloader.go, api/v1alpha2/*_wrapper.go), not its docs. It is
// not for talking to a cluster or a registry.
package operator

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/provider"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/yaml"
)

// APIVersion is the operator API the Provider resources use.
const APIVersion = "operator.cluster.x-k8s.io/v1alpha2"

// Type is the provider type as the operator spells it (GenericProvider.GetType):
// core, bootstrap, controlplane, infrastructure, ipam, runtimeextension, addon.
// It goes into artifact file names and the ConfigMap type label. It differs
// from clusterctl's label prefixes for control planes and runtime extensions.
func Type(t provider.Type) string {
	switch t {
	case clusterctlv1.CoreProviderType:
		return "core"
	case clusterctlv1.BootstrapProviderType:
		return "bootstrap"
	case clusterctlv1.ControlPlaneProviderType:
		return "controlplane"
	case clusterctlv1.InfrastructureProviderType:
		return "infrastructure"
	case clusterctlv1.IPAMProviderType:
		return "ipam"
	case clusterctlv1.RuntimeExtensionProviderType:
		return "runtimeextension"
	case clusterctlv1.AddonProviderType:
		return "addon"
	}
	return strings.ToLower(strings.TrimSuffix(string(t), "Provider"))
}

// ProposalType is the provider type as the Cluster API OCI proposal spells it
// in the cluster-api.sigs.k8s.io/provider-type annotation (controlPlane in
// camel case, runtimeextension without a dash).
func ProposalType(t provider.Type) string {
	if t == clusterctlv1.ControlPlaneProviderType {
		return "controlPlane"
	}
	return Type(t)
}

// Kind is the kind of the operator's resource for a provider type
// (CoreProvider, InfrastructureProvider, ...): clusterctl's type names.
func Kind(t provider.Type) string { return string(t) }

// File names the operator looks for in an artifact (oci_source.go).
const (
	MetadataFile   = "metadata.yaml"
	ComponentsFile = "components.yaml"
)

// TypedComponentsFile is <type>-components.yaml, the components name the
// operator tries second.
func TypedComponentsFile(t provider.Type) string { return Type(t) + "-components.yaml" }

// FullMetadataFile is <type>-<name>-<version>-metadata.yaml, the metadata name
// the operator tries first; name is the Provider resource's metadata.name and
// version its spec.version.
func FullMetadataFile(id provider.ID, version string) string {
	return fmt.Sprintf("%s-%s-%s-metadata.yaml", Type(id.Type), id.Name, version)
}

// FullComponentsFile is <type>-<name>-<version>-components.yaml, the
// components name the operator tries first.
func FullComponentsFile(id provider.ID, version string) string {
	return fmt.Sprintf("%s-%s-%s-components.yaml", Type(id.Type), id.Name, version)
}

// Select picks a provider's metadata and components among an artifact's
// files (titles and their sizes) as the operator's mapStore does: metadata
// from the versioned name, else metadata.yaml; components from the versioned
// name, else <type>-components.yaml, else components.yaml. An empty file
// counts as missing, as it does for the operator. It returns the titles it chose.
func Select(files map[string]int64, id provider.ID, version string) (metadata, components string, err error) {
	pick := func(names ...string) string {
		for _, n := range names {
			if files[n] > 0 {
				return n
			}
		}
		return ""
	}
	fullMeta, fullComp := FullMetadataFile(id, version), FullComponentsFile(id, version)
	typed := TypedComponentsFile(id.Type)
	metadata = pick(fullMeta, MetadataFile)
	components = pick(fullComp, typed, ComponentsFile)
	var errs []string
	if metadata == "" {
		errs = append(errs, fmt.Sprintf("the artifact needs to provide metadata as %s or %s", fullMeta, MetadataFile))
	}
	if components == "" {
		errs = append(errs, fmt.Sprintf("the artifact needs to provide components as %s or %s or %s", fullComp, typed, ComponentsFile))
	}
	if len(errs) > 0 {
		have := make([]string, 0, len(files))
		for n := range files {
			have = append(have, n)
		}
		slices.Sort(have)
		return "", "", fmt.Errorf("%s %s: %s (the operator would fail the same way; the artifact holds [%s])",
			id.Label(), version, strings.Join(errs, "; "), strings.Join(have, ", "))
	}
	return metadata, components, nil
}

// Namespace is the namespace the provider's components create (the one
// Namespace object clusterctl also takes as the default target namespace);
// "" when there is none or several. Only the documents that hold a
// "kind: Namespace" line are parsed: most of a large components file is
// CRD schema.
func Namespace(components []byte) string {
	var found string
	for _, doc := range bytes.Split(components, []byte("\n---")) {
		if !bytes.HasPrefix(doc, []byte("kind: Namespace")) && !bytes.Contains(doc, []byte("\nkind: Namespace")) {
			continue
		}
		var o struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &o); err != nil || o.Kind != "Namespace" || o.APIVersion != "v1" {
			continue
		}
		if found != "" {
			return ""
		}
		found = o.Metadata.Name
	}
	return found
}
