package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kjson "sigs.k8s.io/json"
)

// maxDecodeProblems bounds the CAPI315 findings of one CRD.
const maxDecodeProblems = 20

// lintCRDDecode reports the values of apiextensions.k8s.io/v1 CRDs that the
// API server refuses to decode. clusterctl sends the JSON that YAMLToJSON
// makes without the target type, so an unquoted 123 or true stays a number
// or boolean where the CRD type has a string. Only CRDs whose JSON did not
// decode in parseObjects (o.crdJSON) are looked at, so a good file costs
// nothing here.
func (l *linter) lintCRDDecode(file string, objs []*object) {
	for _, o := range objs {
		if o.crdJSON == nil || o.apiVersion != apiextensionsv1.SchemeGroupVersion.String() {
			continue
		}
		for _, p := range crdDecodeProblems(o.crdJSON) {
			l.add(RuleCRDDecode, file, o.ID(), p.field, "%s", p.msg)
		}
	}
}

type decodeProblem struct{ field, msg string }

// crdDecodeProblems decodes j into a CustomResourceDefinition as the API
// server does (case-sensitive field names, unknown fields ignored) and
// returns why it fails. A decode stops at its first type mismatch, so each
// mismatch found in the document is set to null and the JSON decoded again,
// until it decodes or a problem cannot be located.
func crdDecodeProblems(j []byte) []decodeProblem {
	var tree any
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	if err := d.Decode(&tree); err != nil {
		return []decodeProblem{{"", fmt.Sprintf("the JSON clusterctl sends does not decode: %v", err)}}
	}
	var out []decodeProblem
	for {
		err := kjson.UnmarshalCaseSensitivePreserveInts(j, new(apiextensionsv1.CustomResourceDefinition))
		if err == nil {
			return out
		}
		if len(out) == maxDecodeProblems {
			return append(out, decodeProblem{"", fmt.Sprintf("more than %d values do not decode; fix these and lint again", maxDecodeProblems)})
		}
		p, at := describeDecodeError(tree, err)
		out = append(out, p)
		if at == nil {
			return out
		}
		setNull(tree, at)
		if j, err = json.Marshal(tree); err != nil {
			return out
		}
	}
}

// step is one step of a path in the JSON tree: a key of an object (a
// struct field, or a map key when mapKey), or an index of an array.
type step struct {
	key    string
	index  int
	isElem bool
	mapKey bool
}

// describeDecodeError turns a decode error into a finding, and returns the
// path of the offending value in tree, or nil when it cannot be found.
func describeDecodeError(tree any, err error) (decodeProblem, []step) {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		kind, _, _ := strings.Cut(te.Value, " ") // "number", "number 1.5", "string", "bool", "array", "object"
		var field []string
		if te.Field != "" {
			field = strings.Split(te.Field, ".")
		}
		if at, ok := locate(tree, field, kind, nil); ok {
			v := valueAt(tree, at)
			return decodeProblem{render(at), mismatch(v, te.Type)}, at
		}
		return decodeProblem{te.Field, fmt.Sprintf("%s where the CustomResourceDefinition field is %s (%v): clusterctl init and the API server refuse the CRD; %s",
			jsonKindName(kind), goTypeName(te.Type), err, fixFor(kind, te.Type, ""))}, nil
	}
	// JSONSchemaPropsOrBool (additionalProperties, additionalItems) takes
	// only a boolean or a schema.
	if err.Error() == schemaOrBoolError {
		if at := findSchemaOrBool(tree, nil); at != nil {
			v := valueAt(tree, at)
			return decodeProblem{render(at), fmt.Sprintf("%s is %s where the field takes true, false or a schema: clusterctl init and the API server refuse the CRD; write a boolean or a schema", shortJSON(v), jsonKindName(jsonKind(v)))}, at
		}
	}
	return decodeProblem{"", fmt.Sprintf("the JSON clusterctl sends does not decode as a CustomResourceDefinition: %v; clusterctl init and the API server refuse the CRD", err)}, nil
}

func mismatch(v any, t reflect.Type) string {
	kind := jsonKind(v)
	return fmt.Sprintf("%s is %s where the CustomResourceDefinition field is %s: clusterctl init and the API server refuse the CRD; %s",
		shortJSON(v), jsonKindName(kind), goTypeName(t), fixFor(kind, t, shortJSON(v)))
}

// fixFor says what to write instead.
func fixFor(kind string, t reflect.Type, text string) string {
	if t != nil && t.Kind() == reflect.String && (kind == "number" || kind == "bool") {
		if text != "" {
			return fmt.Sprintf("quote the value (%q)", text)
		}
		return "quote the value"
	}
	return "write " + goTypeName(t)
}

// locate finds the value a type error is about. field is the error's path
// of JSON field names, which leaves out array indices and map keys, so at
// an object either field[0] is the next key or the object is a map and any
// key is; kind is the JSON kind of the value. The error's path ends at a
// slice or map field when one of its elements does not decode.
func locate(v any, field []string, kind string, at []step) ([]step, bool) {
	if len(field) == 0 {
		if v != nil && jsonKind(v) == kind {
			return at, true
		}
		switch v := v.(type) {
		case []any:
			for i, e := range v {
				if e != nil && jsonKind(e) == kind {
					return append(slices.Clip(at), step{index: i, isElem: true}), true
				}
			}
		case map[string]any:
			for _, k := range sortedKeys(v) {
				if e := v[k]; e != nil && jsonKind(e) == kind {
					return append(slices.Clip(at), step{key: k, mapKey: true}), true
				}
			}
		}
		return nil, false
	}
	switch v := v.(type) {
	case []any:
		for i, e := range v {
			if p, ok := locate(e, field, kind, append(slices.Clip(at), step{index: i, isElem: true})); ok {
				return p, true
			}
		}
	case map[string]any:
		if e, ok := v[field[0]]; ok {
			if p, ok := locate(e, field[1:], kind, append(slices.Clip(at), step{key: field[0]})); ok {
				return p, true
			}
		}
		for _, k := range sortedKeys(v) {
			if _, ok := v[k].(map[string]any); !ok {
				continue // a map of scalars ends the path
			}
			if p, ok := locate(v[k], field, kind, append(slices.Clip(at), step{key: k, mapKey: true})); ok {
				return p, true
			}
		}
	}
	return nil, false
}

// schemaOrBoolError is JSONSchemaPropsOrBool.UnmarshalJSON's error.
const schemaOrBoolError = "boolean or JSON schema expected"

// findSchemaOrBool finds an additionalProperties or additionalItems that is
// neither a boolean nor an object, outside properties' names.
func findSchemaOrBool(v any, at []step) []step {
	switch v := v.(type) {
	case []any:
		for i, e := range v {
			if p := findSchemaOrBool(e, append(slices.Clip(at), step{index: i, isElem: true})); p != nil {
				return p
			}
		}
	case map[string]any:
		named := len(at) > 0 && !at[len(at)-1].isElem && slices.Contains([]string{"properties", "patternProperties", "definitions", "dependencies"}, at[len(at)-1].key)
		for _, k := range sortedKeys(v) {
			e := v[k]
			if !named && (k == "additionalProperties" || k == "additionalItems") {
				switch e.(type) {
				case nil, bool, map[string]any:
				default:
					return append(slices.Clip(at), step{key: k})
				}
			}
			if p := findSchemaOrBool(e, append(slices.Clip(at), step{key: k, mapKey: named})); p != nil {
				return p
			}
		}
	}
	return nil
}

func valueAt(v any, at []step) any {
	for _, s := range at {
		if s.isElem {
			v = v.([]any)[s.index]
		} else {
			v = v.(map[string]any)[s.key]
		}
	}
	return v
}

func setNull(v any, at []step) {
	parent, last := valueAt(v, at[:len(at)-1]), at[len(at)-1]
	if last.isElem {
		parent.([]any)[last.index] = nil
	} else {
		parent.(map[string]any)[last.key] = nil
	}
}

// render writes a path as the other rules do: spec.versions[1].schema...,
// metadata.labels[key].
func render(at []step) string {
	var b strings.Builder
	for _, s := range at {
		switch {
		case s.isElem:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case s.mapKey && (b.String() == "metadata.labels" || b.String() == "metadata.annotations"):
			b.WriteString("[" + s.key + "]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		}
	}
	return b.String()
}

func jsonKind(v any) string {
	switch v.(type) {
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

func jsonKindName(kind string) string {
	switch kind {
	case "number":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	return kind
}

func goTypeName(t reflect.Type) string {
	if t == nil {
		return "of another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// shortJSON renders a value as JSON, cut to 40 bytes.
func shortJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 40 {
		return string(b[:37]) + "..."
	}
	return string(b)
}
