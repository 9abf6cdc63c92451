package configmap

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish/operator"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/versions"
)

// Resource is an operator Provider resource that installs from ConfigMaps.
type Resource struct {
	ID        provider.ID
	Namespace string
	// Version is spec.version; "" means the one the operator installs: the
	// highest version found (versions.Highest).
	Version  string
	Selector *metav1.LabelSelector
}

// File is what a file of ConfigMaps and Provider resources holds.
type File struct {
	ConfigMaps []*ConfigMap
	Resources  []Resource
}

type resourceDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   Meta   `json:"metadata"`
	Spec       struct {
		Version     string `json:"version"`
		FetchConfig *struct {
			Selector *metav1.LabelSelector `json:"selector"`
		} `json:"fetchConfig"`
	} `json:"spec"`
}

// Parse reads ConfigMaps and the Provider resources that select them from
// multi-document YAML; other objects are skipped.
func Parse(file string, data []byte) (*File, error) {
	f := &File{}
	for i, d := range splitDocs(data) {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(d, &head); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, i+1, err)
		}
		switch {
		case head.APIVersion == "v1" && head.Kind == "ConfigMap":
			var cm ConfigMap
			if err := yaml.Unmarshal(d, &cm); err != nil {
				return nil, fmt.Errorf("%s: document %d (ConfigMap): %w", file, i+1, err)
			}
			f.ConfigMaps = append(f.ConfigMaps, &cm)
		case strings.HasPrefix(head.APIVersion, "operator.cluster.x-k8s.io/"):
			var r resourceDoc
			if err := yaml.Unmarshal(d, &r); err != nil {
				return nil, fmt.Errorf("%s: document %d (%s): %w", file, i+1, head.Kind, err)
			}
			typ := provider.Type(r.Kind)
			if !slices.Contains(provider.Types(), typ) {
				return nil, fmt.Errorf("%s: document %d: kind %s is no provider kind of the operator", file, i+1, r.Kind)
			}
			if r.Spec.FetchConfig == nil || r.Spec.FetchConfig.Selector == nil {
				continue // installs from elsewhere
			}
			f.Resources = append(f.Resources, Resource{ID: provider.ID{Name: r.Metadata.Name, Type: typ},
				Namespace: r.Metadata.Namespace, Version: r.Spec.Version, Selector: r.Spec.FetchConfig.Selector})
		}
	}
	if len(f.ConfigMaps) == 0 {
		return nil, fmt.Errorf("%s: %w", file, errNoDocs)
	}
	if len(f.Resources) == 0 {
		return nil, fmt.Errorf("%s: no operator Provider resource with spec.fetchConfig.selector: add the resources publish configmap prints", file)
	}
	return f, nil
}

// ReadFile reads a file of ConfigMaps and Provider resources (publish
// configmap --out) by the operator's rules: each resource's provider
// version (Load), at version instead of the resource's spec.version when
// set.
func ReadFile(file, version string) ([]*release.Provider, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	f, err := Parse(file, data)
	if err != nil {
		return nil, err
	}
	var provs []*release.Provider
	for _, r := range f.Resources {
		if version != "" {
			r.Version = version
		}
		p, err := Load(f, r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		provs = append(provs, p)
	}
	return provs, nil
}

// Load reads the provider version a resource installs, by the operator's
// rules (phase_load.go configmapRepository, then getLatestVersion): the
// ConfigMaps of the resource's namespace that match its selector, each one
// version (the version label, else the ConfigMap's name, which must be
// semver), each with data.metadata and components; any bad ConfigMap fails
// the whole load, as it does in the operator. The version is spec.version,
// else the highest (versions.Highest, pre-releases included), which the
// operator asks for as v<semver>.
func Load(f *File, r Resource) (*release.Provider, error) {
	byVersion, err := selected(f, r)
	if err != nil {
		return nil, err
	}
	vs := slices.Collect(maps.Keys(byVersion))
	if len(vs) == 0 {
		return nil, fmt.Errorf("%s %s/%s: no ConfigMaps found with selector %s in namespace %s (the operator reads ConfigMaps only from the Provider's namespace)",
			r.ID.Type, r.Namespace, r.ID.Name, metav1.FormatLabelSelector(r.Selector), r.Namespace)
	}
	version := r.Version
	if version == "" {
		// The operator's choice, asked for as v<semver> like clusterctl's:
		// a ConfigMap of version 0.3.0 is looked for as v0.3.0.
		version = versions.Highest(vs)
		if _, ok := byVersion[version]; !ok {
			return nil, fmt.Errorf("%s %s/%s: no spec.version: the operator installs the highest version of the selected ConfigMaps, which it asks for as %s, and no ConfigMap has that version (versions [%s]): give the ConfigMap the version %s, or set spec.version",
				r.ID.Type, r.Namespace, r.ID.Name, version, strings.Join(versions.Sorted(vs), ", "), version)
		}
	}
	e, ok := byVersion[version]
	if !ok {
		return nil, fmt.Errorf("%s %s/%s: spec.version %s: the selected ConfigMaps hold versions [%s]", r.ID.Type, r.Namespace, r.ID.Name, version, strings.Join(versions.Sorted(vs), ", "))
	}
	p := &release.Provider{ID: r.ID, Version: version, ComponentsFile: r.ID.DefaultComponentsFile()}
	if err := p.Add(operator.MetadataFile, e.metadata); err != nil {
		return nil, err
	}
	if err := p.Add(p.ComponentsFile, e.components); err != nil {
		return nil, err
	}
	return p, nil
}

// entry is one ConfigMap's metadata and components.
type entry struct {
	metadata, components []byte
}

// selected reads the ConfigMaps a resource selects, by version; any bad
// ConfigMap fails the whole load, as it does in the operator.
func selected(f *File, r Resource) (map[string]entry, error) {
	sel, err := metav1.LabelSelectorAsSelector(r.Selector)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: selector: %w", r.ID.Type, r.Namespace, r.ID.Name, err)
	}
	byVersion := map[string]entry{}
	for _, cm := range f.ConfigMaps {
		if cm.Metadata.Namespace != r.Namespace || !sel.Matches(labels.Set(cm.Metadata.Labels)) {
			continue
		}
		id := cm.Metadata.Namespace + "/" + cm.Metadata.Name
		version, from := cm.Metadata.Name, "from the Name"
		if v, ok := cm.Metadata.Labels[LabelVersion]; ok {
			version, from = v, "from the Label "+LabelVersion
		}
		if _, ok := versions.Parse(version); !ok {
			return nil, fmt.Errorf("ConfigMap %s has invalid version:%s (%s)", id, version, from)
		}
		md, ok := cm.Data[KeyMetadata]
		if !ok {
			return nil, fmt.Errorf("ConfigMap %s has no metadata", id)
		}
		comp, err := cm.Components()
		if err != nil {
			return nil, err
		}
		byVersion[version] = entry{[]byte(md), comp}
	}
	return byVersion, nil
}

// listVersions lists the versions of the ConfigMaps a resource selects,
// oldest first.
func listVersions(f *File, r Resource) ([]string, error) {
	byVersion, err := selected(f, r)
	if err != nil {
		return nil, err
	}
	return versions.Sorted(slices.Collect(maps.Keys(byVersion))), nil
}
