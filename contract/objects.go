package contract

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// object is one YAML document of a file, decoded as clusterctl does
// (util/yaml.ToUnstructured: multi-document, empty documents dropped).
type object struct {
	// doc is the 0-based index of the document in its file.
	doc  int
	raw  []byte
	m    map[string]any
	kind string
	// apiVersion, name and namespace as written.
	apiVersion, name, namespace string
}

// ID returns Kind/name, or Kind/namespace/name for an object with a namespace.
func (o *object) ID() string {
	if o.namespace != "" {
		return o.kind + "/" + o.namespace + "/" + o.name
	}
	return o.kind + "/" + o.name
}

func (o *object) group() string {
	g, _, ok := strings.Cut(o.apiVersion, "/")
	if !ok {
		return ""
	}
	return g
}

func (o *object) is(group, kind string) bool { return o.kind == kind && o.group() == group }

func (o *object) labels() map[string]string { return stringMap(get(o.m, "metadata", "labels")) }
func (o *object) annotations() map[string]string {
	return stringMap(get(o.m, "metadata", "annotations"))
}

// parseObjects splits a file into objects. A document that does not parse,
// is not a mapping, or lacks apiVersion, kind or metadata.name is reported
// through bad and skipped.
func parseObjects(data []byte, bad func(doc int, field, msg string)) []*object {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*object
	for i := 0; ; i++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			bad(i, "", fmt.Sprintf("cannot split document %d: %v", i+1, err))
			break
		}
		if len(bytes.TrimSpace(stripComments(raw))) == 0 {
			i--
			continue
		}
		var v any
		if err := yaml.Unmarshal(raw, &v); err != nil {
			bad(i, "", fmt.Sprintf("document %d does not parse: %v", i+1, err))
			continue
		}
		if v == nil {
			i--
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			bad(i, "", fmt.Sprintf("document %d is a %T, not an object", i+1, v))
			continue
		}
		o := &object{doc: i, raw: raw, m: m}
		o.apiVersion, _ = m["apiVersion"].(string)
		o.kind, _ = m["kind"].(string)
		o.name, _ = get(m, "metadata", "name").(string)
		o.namespace, _ = get(m, "metadata", "namespace").(string)
		switch {
		case o.apiVersion == "":
			bad(i, "apiVersion", fmt.Sprintf("document %d has no apiVersion", i+1))
			continue
		case o.kind == "":
			bad(i, "kind", fmt.Sprintf("document %d (%s) has no kind", i+1, o.apiVersion))
			continue
		case o.name == "" && !strings.HasSuffix(o.kind, "List"):
			bad(i, "metadata.name", fmt.Sprintf("document %d (%s) has no metadata.name", i+1, o.kind))
			continue
		}
		out = append(out, o)
	}
	return out
}

func stripComments(b []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		out = append(out, line...)
		out = append(out, '\n')
	}
	return out
}

// get walks nested maps; it returns nil where a key is missing.
func get(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func getString(v any, path ...string) string {
	s, _ := get(v, path...).(string)
	return s
}

func getSlice(v any, path ...string) []any {
	s, _ := get(v, path...).([]any)
	return s
}

func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case string:
			out[k] = v
		case nil:
			out[k] = ""
		default:
			out[k] = fmt.Sprint(v)
		}
	}
	return out
}

func stringList(v any) []string {
	var out []string
	for _, e := range asSlice(v) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func idx(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }

// labelField is a field path for one label or annotation key.
func labelField(what, key string) string { return "metadata." + what + "[" + key + "]" }
