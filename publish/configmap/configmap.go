// Package configmap writes a built release as the ConfigMaps
// cluster-api-operator installs providers from (spec.fetchConfig.selector),
// with the Provider resources that select them, as multi-document YAML for
// kubectl apply --server-side or a GitOps repository; and reads such a file
// back by the operator's rules (internal/controller/phase_load.go).
//
// It is not for talking to a cluster: the output is a file.
package configmap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish/operator"
	"github.com/capirepo/capirepo/release"
)

// The operator's ConfigMap contract.
const (
	LabelName    = "provider.cluster.x-k8s.io/name"
	LabelType    = "provider.cluster.x-k8s.io/type"
	LabelVersion = "provider.cluster.x-k8s.io/version"
	// AnnotationCompressed marks binaryData.components as gzip.
	AnnotationCompressed = "provider.cluster.x-k8s.io/compressed"
	KeyMetadata          = "metadata"
	KeyComponents        = "components"
	// MaxSize is both the operator's threshold (metadata + components above
	// it are compressed, needToCompress) and the API server's limit on the
	// bytes of a ConfigMap's data and binaryData values together.
	MaxSize = 1 << 20
	// ClientSideApplyLimit is the size of the last-applied annotation that
	// client-side kubectl apply writes: larger ConfigMaps need --server-side.
	ClientSideApplyLimit = 256 << 10
)

// ConfigMap is a ConfigMap as the operator reads it.
type ConfigMap struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   Meta              `json:"metadata"`
	Data       map[string]string `json:"data,omitempty"`
	BinaryData map[string][]byte `json:"binaryData,omitempty"`
}

// Meta is the part of an object's metadata that matters here.
type Meta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Size is what the API server counts against MaxSize.
func (c *ConfigMap) Size() int {
	n := 0
	for _, v := range c.Data {
		n += len(v)
	}
	for _, v := range c.BinaryData {
		n += len(v)
	}
	return n
}

// Options tune Render.
type Options struct {
	// Namespace holds every ConfigMap and Provider resource; "" means each
	// provider's own (the namespace its components create). The operator
	// reads ConfigMaps only from the Provider resource's namespace.
	Namespace string
}

// Item is one provider's ConfigMap as rendered.
type Item struct {
	ID         provider.ID
	Version    string
	Namespace  string
	Name       string
	Compressed bool
	// Size is the ConfigMap's data bytes, RawSize metadata + components.
	Size, RawSize int
}

// Selector is the label selector of a provider's resource: name and type,
// not version, so the ConfigMaps of later versions are found beside it and
// an upgrade is a new ConfigMap and a new spec.version.
func Selector(id provider.ID) map[string]string {
	return map[string]string{LabelName: id.Name, LabelType: operator.Type(id.Type)}
}

// Build returns a provider version's ConfigMap: data.metadata and
// data.components, or components gzipped into binaryData with the
// compressed annotation when metadata and components exceed MaxSize.
func Build(p *release.Provider, namespace string) (*ConfigMap, error) {
	md, ok := p.File(operator.MetadataFile)
	if !ok {
		return nil, fmt.Errorf("%s %s: no %s", p.Label(), p.Version, operator.MetadataFile)
	}
	comp := p.Components()
	if strings.Contains(p.Version, "+") || len(p.Version) > 63 {
		return nil, fmt.Errorf("%s %s: the version cannot be a label value (%s: at most 63 letters, digits, '-', '_' and '.'), and the operator reads the version from that label", p.Label(), p.Version, LabelVersion)
	}
	labels := Selector(p.ID)
	labels[LabelVersion] = p.Version
	// The name the operator gives its own ConfigMaps, lower-cased to be a
	// valid object name (v1.0.0-RC.1): the version label keeps the version.
	name := strings.ToLower(fmt.Sprintf("%s-%s-%s", operator.Type(p.ID.Type), p.ID.Name, p.Version))
	cm := &ConfigMap{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: Meta{Name: name, Namespace: namespace, Labels: labels},
		Data:     map[string]string{KeyMetadata: string(md.Data)},
	}
	raw := len(md.Data) + len(comp.Data)
	if raw <= MaxSize {
		cm.Data[KeyComponents] = string(comp.Data)
		return cm, nil
	}
	var z bytes.Buffer
	zw, err := gzip.NewWriterLevel(&z, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(comp.Data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	cm.BinaryData = map[string][]byte{KeyComponents: z.Bytes()}
	cm.Metadata.Annotations = map[string]string{AnnotationCompressed: "true"}
	if cm.Size() > MaxSize {
		return nil, fmt.Errorf("%s %s: ConfigMap %s is too large even compressed: %s of metadata.yaml + %s of %s gzipped to %s = %d bytes, over the API server's limit of %d bytes; install it from an OCI artifact instead (capirepo publish oci)",
			p.Label(), p.Version, cm.Metadata.Name, human(len(md.Data)), human(len(comp.Data)), comp.Name, human(z.Len()), cm.Size(), MaxSize)
	}
	return cm, nil
}

func human(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}

// Render returns every provider's ConfigMap and Provider resource as one
// multi-document YAML file, each namespace's Namespace object first.
func Render(rel *release.Release, o Options) ([]byte, []Item, error) {
	var b bytes.Buffer
	var items []Item
	var namespaces []string
	var docs [][]byte
	for _, p := range rel.Providers {
		ns := o.Namespace
		if ns == "" {
			ns = operator.DefaultNamespace(p.ID, p.Components().Data)
		}
		cm, err := Build(p, ns)
		if err != nil {
			return nil, nil, err
		}
		y, err := yaml.Marshal(cm)
		if err != nil {
			return nil, nil, err
		}
		r, err := operator.Resource{ID: p.ID, Namespace: ns, Version: p.Version, Selector: Selector(p.ID)}.YAML()
		if err != nil {
			return nil, nil, err
		}
		docs = append(docs, y, r)
		if !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
		items = append(items, Item{ID: p.ID, Version: p.Version, Namespace: ns, Name: cm.Metadata.Name,
			Compressed: cm.BinaryData != nil, Size: cm.Size(), RawSize: len(cm.Data[KeyMetadata]) + len(p.Components().Data)})
	}
	for _, ns := range namespaces {
		y, err := operator.NamespaceYAML(ns)
		if err != nil {
			return nil, nil, err
		}
		docs = append([][]byte{y}, docs...)
	}
	for _, d := range docs {
		b.WriteString("---\n")
		b.Write(d)
	}
	return b.Bytes(), items, nil
}

// Components returns a ConfigMap's components as the operator reads them:
// data.components, or gunzipped binaryData.components when the compressed
// annotation is "true".
func (c *ConfigMap) Components() ([]byte, error) {
	id := c.Metadata.Namespace + "/" + c.Metadata.Name
	if c.Metadata.Annotations[AnnotationCompressed] != "true" {
		v, ok := c.Data[KeyComponents]
		if !ok {
			return nil, fmt.Errorf("ConfigMap %s Data has no components", id)
		}
		return []byte(v), nil
	}
	z, ok := c.BinaryData[KeyComponents]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s BinaryData has no components", id)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, fmt.Errorf("cannot decompress data from ConfigMap %s: %w", id, err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("cannot decompress data from ConfigMap %s: %w", id, err)
	}
	return out, nil
}

// errNoDocs is returned for a file without a ConfigMap.
var errNoDocs = errors.New("no ConfigMap in the file")

// splitDocs splits multi-document YAML at "---" lines.
func splitDocs(data []byte) [][]byte {
	var out [][]byte
	var cur []string
	flush := func() {
		d := strings.Join(cur, "\n")
		if strings.TrimSpace(d) != "" {
			out = append(out, []byte(d))
		}
		cur = nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimRight(line, " \t\r") == "---" {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return out
}
