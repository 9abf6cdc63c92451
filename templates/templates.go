package templates

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/capirepo/capirepo/internal/yamlpos"
	"github.com/capirepo/capirepo/internal/yamlsafe"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// File name parts clusterctl uses (yamlprocessor.SimpleProcessor).
const (
	TemplatePrefix     = "cluster-template"
	ClusterClassPrefix = "clusterclass-"
	FlavorsDir         = "flavors"
	// BaseFlavor is a shared kustomize base under flavors/, not a flavor.
	BaseFlavor = "base"
	// DefaultFlavor renders to cluster-template.yaml.
	DefaultFlavor = "default"
)

// Renderer renders the kustomization in a folder to multi-document YAML. It
// is called from several goroutines at once.
type Renderer func(dir string) ([]byte, error)

// Set is what a templates folder contributes to a release.
type Set struct {
	Files    []release.File
	Warnings []string
	// Sources maps each file's name to the file or kustomization folder of
	// the tree it came from.
	Sources map[string]string
}

// TemplateName returns the file name of a flavor, as clusterctl computes it.
func TemplateName(flavor string) string {
	return yamlprocessor.NewSimpleProcessor().GetTemplateName("", flavor)
}

func isReleaseName(name string) bool {
	return strings.HasSuffix(name, ".yaml") &&
		(name == TemplatePrefix+".yaml" || strings.HasPrefix(name, TemplatePrefix+"-") || strings.HasPrefix(name, ClusterClassPrefix))
}

// checkName checks the flavor or class part of a template file name.
func checkName(file string) error {
	base := strings.TrimSuffix(file, ".yaml")
	var what, part string
	switch {
	case base == TemplatePrefix:
		return nil
	case strings.HasPrefix(base, TemplatePrefix+"-"):
		what, part = "flavor name", strings.TrimPrefix(base, TemplatePrefix+"-")
	default:
		what, part = "ClusterClass name", strings.TrimPrefix(base, ClusterClassPrefix)
	}
	if err := provider.CheckFileName(what, part); err != nil {
		return err
	}
	if err := provider.CheckName(part); err != nil {
		return fmt.Errorf("%s %q: must be lower-case letters, digits and inner dashes", what, part)
	}
	return nil
}

// Check parses every file and checks the rules clusterctl relies on. It
// returns warnings for what the contract only advises against. dir names the
// source folder in messages.
func Check(dir string, files []release.File) ([]string, error) {
	var warnings []string
	have := map[string]bool{}
	for _, f := range files {
		have[f.Name] = true
	}
	for _, f := range files {
		where := filepath.Join(dir, f.Name)
		objs, err := Parse(where, f.Data)
		if err != nil {
			return nil, err
		}
		vars, err := yamlprocessor.NewSimpleProcessor().GetVariables(f.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: variables do not parse as clusterctl reads them: %w", where, err)
		}
		if strings.HasPrefix(f.Name, ClusterClassPrefix) {
			warnings = append(warnings, checkClass(where, vars, objs)...)
			continue
		}
		for _, o := range objs {
			if o.GetKind() == "Namespace" {
				return nil, fmt.Errorf("%s: Namespace %s: a cluster template must not create namespaces; clusterctl puts every object in the target namespace", where, o.GetName())
			}
			class, field := topologyClass(o)
			if class == "" {
				continue
			}
			if strings.Contains(class, "${") {
				warnings = append(warnings, fmt.Sprintf("%s: Cluster %s: field %s is a variable (%s); clusterctl cannot ship a ClusterClass for it", where, o.GetName(), field, class))
				continue
			}
			want := ClusterClassPrefix + class + ".yaml"
			if !have[want] {
				return nil, fmt.Errorf("%s: Cluster %s: field %s names ClusterClass %q, but the release has no %s (clusterctl generate cluster fetches it)", where, o.GetName(), field, class, want)
			}
		}
	}
	return warnings, nil
}

// Parse decodes a multi-document YAML file; each document must be an object
// with apiVersion and kind. Empty documents are dropped, as clusterctl does.
func Parse(file string, data []byte) ([]*yaml.RNode, error) {
	if err := yamlsafe.CheckAliases(file, data); err != nil {
		return nil, err
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
	if err != nil {
		if e := yamlpos.Find(file, data); e != nil {
			return nil, e // the line in the file, not in the document
		}
		return nil, fmt.Errorf("%s: YAML does not parse: %w", file, err)
	}
	out := nodes[:0]
	for i, n := range nodes {
		if n.IsNilOrEmpty() {
			continue
		}
		if n.YNode().Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: document %d is not an object", file, i+1)
		}
		if n.GetApiVersion() == "" || n.GetKind() == "" {
			return nil, fmt.Errorf("%s: document %d (%s): fields apiVersion and kind are required", file, i+1, n.GetName())
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: holds no objects", file)
	}
	return out, nil
}

// topologyClass returns the ClusterClass a Cluster uses, and the field.
func topologyClass(o *yaml.RNode) (string, string) {
	if o.GetKind() != "Cluster" || !strings.HasPrefix(o.GetApiVersion(), "cluster.x-k8s.io/") {
		return "", ""
	}
	if n, err := o.Pipe(yaml.Lookup("spec", "topology", "classRef", "name")); err == nil && n != nil {
		return yaml.GetValue(n), "spec.topology.classRef.name"
	}
	if n, err := o.Pipe(yaml.Lookup("spec", "topology", "class")); err == nil && n != nil {
		return yaml.GetValue(n), "spec.topology.class"
	}
	return "", ""
}

// checkClass warns where a ClusterClass file does what the clusterctl
// contract says it SHOULD NOT: variables and namespaces.
func checkClass(where string, vars []string, objs []*yaml.RNode) []string {
	var warnings []string
	if len(vars) > 0 {
		warnings = append(warnings, fmt.Sprintf("%s: holds variables %s; ClusterClass files should not (clusterctl contract)", where, strings.Join(vars, ", ")))
	}
	for _, o := range objs {
		if ns := o.GetNamespace(); ns != "" {
			warnings = append(warnings, fmt.Sprintf("%s: %s %s: field metadata.namespace is %q; ClusterClass objects should not set a namespace", where, o.GetKind(), o.GetName(), ns))
		}
	}
	return warnings
}
