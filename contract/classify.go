package contract

import (
	"path"
	"strings"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

type fileKind int

const (
	kindOther fileKind = iota
	kindMetadata
	kindComponents
	kindTemplate
	kindClusterClass
	// kindYAML is a YAML file of a release that clusterctl does not read
	// (cluster-class.yaml, image-template-node.yaml): checked as YAML only.
	kindYAML
)

// classifyAsClusterctl says what a file of a whole provider release is by
// its name alone, as clusterctl reads a release: metadata.yaml, the
// components, cluster-template*.yaml flavors and clusterclass-*.yaml
// classes. Any other YAML file is published as it is and only checked to
// parse; what it holds does not matter (a Cluster in cluster-class.yaml is
// no flavor). Files of another sort are not linted.
func classifyAsClusterctl(f release.File, components string) fileKind {
	isYAML := strings.HasSuffix(f.Name, ".yaml") || strings.HasSuffix(f.Name, ".yml")
	stem := strings.TrimSuffix(components, path.Ext(components))
	switch {
	case f.Name == provider.MetadataFile:
		return kindMetadata
	case f.Name == components, components != "" && strings.HasPrefix(f.Name, stem+"-") && strings.Contains(f.Name, "components") && isYAML:
		return kindComponents // the components, or another components file of the provider
	case release.IsFlavor(f.Name):
		return kindTemplate
	case release.IsClusterClass(f.Name):
		return kindClusterClass
	case isYAML:
		return kindYAML
	}
	return kindOther
}

func classify(f release.File) fileKind {
	switch {
	case f.Name == provider.MetadataFile:
		return kindMetadata
	case strings.HasPrefix(f.Name, "cluster-template") && strings.HasSuffix(f.Name, ".yaml"):
		return kindTemplate
	case strings.HasPrefix(f.Name, "clusterclass-") && strings.HasSuffix(f.Name, ".yaml"):
		return kindClusterClass
	case strings.Contains(f.Name, "components") && (strings.HasSuffix(f.Name, ".yaml") || strings.HasSuffix(f.Name, ".yml")):
		return kindComponents
	case !strings.HasSuffix(f.Name, ".yaml") && !strings.HasSuffix(f.Name, ".yml"):
		return kindOther
	}
	// Decide by content: what a file of each sort must hold.
	s := string(f.Data)
	switch {
	case strings.Contains(s, "kind: Metadata") && strings.Contains(s, "releaseSeries"):
		return kindMetadata
	case strings.Contains(s, "kind: CustomResourceDefinition") || strings.Contains(s, "kind: Deployment"):
		return kindComponents
	case strings.Contains(s, "kind: Cluster\n"):
		return kindTemplate
	case strings.Contains(s, "kind: ClusterClass"):
		return kindClusterClass
	}
	return kindOther
}
