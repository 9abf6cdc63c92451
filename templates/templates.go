package templates

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

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

func isReleaseName(name string) bool { return release.IsTemplate(name) }

// checkName checks the flavor or class part of a template file name: a
// flavor as provider.CheckFlavorName does, a class as a ClusterClass name
// (clusterctl fetches clusterclass-<class>.yaml by a ClusterClass's name).
func checkName(file string) error {
	base := strings.TrimSuffix(file, ".yaml")
	switch {
	case base == TemplatePrefix:
		return nil
	case strings.HasPrefix(base, TemplatePrefix+"-"):
		return provider.CheckFlavorName(strings.TrimPrefix(base, TemplatePrefix+"-"))
	}
	part := strings.TrimPrefix(base, ClusterClassPrefix)
	if err := provider.CheckFileName("ClusterClass name", part); err != nil {
		return err
	}
	if err := provider.CheckName(part); err != nil {
		return fmt.Errorf("ClusterClass name %q: must be lower-case letters, digits and inner dashes", part)
	}
	return nil
}

// isYAMLName says whether a published name is a YAML file's.
func isYAMLName(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

// textExts are the names of files that hold text: a published file so named
// must be text, or the name misleads whoever downloads it.
var textExts = []string{".sh", ".bash", ".rc", ".env", ".txt", ".md", ".json", ".yaml", ".yml", ".cfg", ".conf", ".ini", ".toml", ".py", ".ps1", ".tpl"}

// checkAsset checks a file published as it is for what its name promises:
// text where the name says text (no NUL byte, valid UTF-8), JSON that parses
// for .json (YAML is the lint's, CAPI001). Its size is bounded by the
// provider tree's read limit. An empty file is published with a warning.
func checkAsset(name string, data []byte) (warning string, err error) {
	if len(data) == 0 {
		return "the file is empty: it is published as an empty asset", nil
	}
	ext := strings.ToLower(filepath.Ext(name))
	if !slices.Contains(textExts, ext) {
		return "", nil
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return "", fmt.Errorf("a %s file should be text, and this one is not (%s): publish the file the name promises, or name it for what it holds", ext, http.DetectContentType(data))
	}
	if ext == ".json" && !json.Valid(data) {
		return "", errors.New("a .json file that does not parse as JSON")
	}
	return "", nil
}

// Check refuses a file that is unsafe to read at all: YAML whose aliases
// expand past yamlsafe.MaxExpandedNodes. Everything clusterctl relies on
// (YAML that parses, no Namespace, a ClusterClass file for each class, the
// variables) is a lint rule in package contract, so that waivers apply and
// every finding of a build is reported at once; Check returns no warnings of
// its own for the same reason. dir names the source folder in messages.
func Check(dir string, files []release.File) ([]string, error) {
	for _, f := range files {
		if !isYAMLName(f.Name) {
			continue
		}
		if err := yamlsafe.CheckAliases(filepath.Join(dir, f.Name), f.Data); err != nil {
			return nil, err
		}
	}
	return nil, nil
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
