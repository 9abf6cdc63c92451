package contract

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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
	// crd is the decoded CustomResourceDefinition, for a CRD of a
	// components file that decodes.
	crd *apiextensionsv1.CustomResourceDefinition
	// crdJSON is the document's JSON, kept only for a CRD whose JSON does
	// not decode into the typed CRD (see decodeCRD): CAPI315 says why.
	crdJSON []byte
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
// through bad and skipped. With crds, a CustomResourceDefinition's crd is
// decoded too (see decodeCRD).
//
// Each document's YAML is parsed once. Splitting is sequential and cheap;
// the documents of a big file are then decoded on up to GOMAXPROCS
// goroutines, since the lint runs after the render with cores to spare.
// bad is called on the caller's goroutine, in document order, with the
// same numbering as a sequential parse: documents that are empty or null
// take no number.
func parseObjects(data []byte, crds bool, bad func(doc int, field, msg string)) []*object {
	raws, splitErr := splitDocuments(data)
	docs := make([]decoded, len(raws))
	forEach(len(raws), workers(len(data), len(raws)), func(k int) {
		docs[k] = decodeDocument(raws[k], crds)
	})
	var out []*object
	i := 0
	for _, d := range docs {
		switch {
		case d.err != nil:
			bad(i, "", fmt.Sprintf("document %d does not parse: %v", i+1, d.err))
		case d.v == nil:
			continue // takes no number
		case d.obj == nil:
			bad(i, "", fmt.Sprintf("document %d is a %T, not an object", i+1, d.v))
		case d.obj.apiVersion == "":
			bad(i, "apiVersion", fmt.Sprintf("document %d has no apiVersion", i+1))
		case d.obj.kind == "":
			bad(i, "kind", fmt.Sprintf("document %d (%s) has no kind", i+1, d.obj.apiVersion))
		case d.obj.name == "" && !strings.HasSuffix(d.obj.kind, "List"):
			bad(i, "metadata.name", fmt.Sprintf("document %d (%s) has no metadata.name", i+1, d.obj.kind))
		default:
			d.obj.doc = i
			out = append(out, d.obj)
		}
		i++
	}
	if splitErr != nil {
		bad(i, "", fmt.Sprintf("cannot split document %d: %v", i+1, splitErr))
	}
	return out
}

// splitDocuments splits a file as clusterctl does (util/yaml's YAMLReader),
// dropping documents of only blank lines and comments. err is the error
// that stopped the split, if any; the documents before it are returned.
func splitDocuments(data []byte) (raws [][]byte, err error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return raws, nil
		}
		if err != nil {
			return raws, err
		}
		if blank(raw) {
			continue
		}
		raws = append(raws, raw)
	}
}

// decoded is one document: err when it does not parse, else v, and obj
// when v is a mapping.
type decoded struct {
	v   any
	obj *object
	err error
}

// decodeDocument parses one document as sigs.k8s.io/yaml.Unmarshal into
// an any does (YAMLToJSON, then encoding/json), with the same errors.
func decodeDocument(raw []byte, crds bool) decoded {
	j, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return decoded{err: fmt.Errorf("error converting YAML to JSON: %w", err)}
	}
	var v any
	if err := json.NewDecoder(bytes.NewReader(j)).Decode(&v); err != nil {
		return decoded{err: fmt.Errorf("error unmarshaling JSON: while decoding JSON: %w", err)}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return decoded{v: v}
	}
	o := &object{raw: raw, m: m}
	o.apiVersion, _ = m["apiVersion"].(string)
	o.kind, _ = m["kind"].(string)
	o.name, _ = get(m, "metadata", "name").(string)
	o.namespace, _ = get(m, "metadata", "namespace").(string)
	if crds && o.kind == "CustomResourceDefinition" && o.group() == "apiextensions.k8s.io" {
		var fromJSON bool
		if o.crd, fromJSON = decodeCRD(raw, j); !fromJSON {
			o.crdJSON = j
		}
	}
	return decoded{v: v, obj: o}
}

// decodeCRD decodes a CRD from the document's JSON, or returns nil where
// it does not decode. fromJSON says the JSON decoded; where it did not,
// the CRD (if any) is the typed Unmarshal's.
//
// sigs.k8s.io/yaml.Unmarshal into a typed target, which the lint used to
// call on the YAML, converts a number or boolean to a string where the
// target field is a string (e.g. description: 123 in a schema); YAMLToJSON
// does not, so such a document fails to decode from json here. Those are
// the only places where the two JSON texts differ, so where json decodes,
// the CRD is the one Unmarshal gives; where it does not, Unmarshal on the
// YAML decides, as before, so the other CRD rules still run. (The API
// server rejects such a CRD: it decodes the JSON that kubectl and
// clusterctl send, which holds the number, strictly. CAPI315 reports it.)
func decodeCRD(raw, j []byte) (crd *apiextensionsv1.CustomResourceDefinition, fromJSON bool) {
	crd = new(apiextensionsv1.CustomResourceDefinition)
	if err := json.NewDecoder(bytes.NewReader(j)).Decode(crd); err == nil {
		return crd, true
	}
	crd = new(apiextensionsv1.CustomResourceDefinition)
	if err := yaml.Unmarshal(raw, crd); err != nil {
		return nil, false
	}
	return crd, false
}

// workers is how many goroutines decode a file's documents: one for a
// small file, else up to GOMAXPROCS with at least 32 KiB each.
func workers(size, docs int) int {
	return max(1, min(runtime.GOMAXPROCS(0), docs, size/(32<<10)))
}

// forEach calls fn(0) ... fn(n-1) on w goroutines.
func forEach(n, w int, fn func(i int)) {
	if w <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}

// blank says whether every line is empty or a comment.
func blank(b []byte) bool {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			return false
		}
	}
	return true
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
