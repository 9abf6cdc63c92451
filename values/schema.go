package values

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// typeSchema is the OpenAPI schema of one kind at one version, with the
// component schemas its $refs point into (a built-in kind's schema from the
// server's OpenAPI v3 document; a CRD's schema has no refs).
type typeSchema struct {
	root *spec.Schema
	refs map[string]spec.Schema
}

// schemaSet finds schemas in CRDs first (the release's, then the
// cluster's), then in the server's OpenAPI v3 documents of built-in kinds.
type schemaSet struct {
	// crds are CustomResourceDefinitions by the group and kind they serve.
	crds map[schema.GroupKind]*unstructured.Unstructured
	// openAPI returns the OpenAPI v3 document of a group version; nil when
	// there is no server.
	openAPI func(gv schema.GroupVersion) (*spec3.OpenAPI, error)
	docs    map[schema.GroupVersion]*spec3.OpenAPI
	// classes are the release's ClusterClasses.
	classes Classes
}

// addCRD makes a CRD's schemas known; an earlier CRD for the same kind wins.
func (s *schemaSet) addCRD(crd *unstructured.Unstructured) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	gk := schema.GroupKind{Group: group, Kind: kind}
	if s.crds == nil {
		s.crds = map[schema.GroupKind]*unstructured.Unstructured{}
	}
	if _, ok := s.crds[gk]; !ok && kind != "" {
		s.crds[gk] = crd
	}
}

func (s *schemaSet) schemaFor(gvk schema.GroupVersionKind) *typeSchema {
	if crd, ok := s.crds[gvk.GroupKind()]; ok {
		return crdSchema(crd, gvk.Version)
	}
	if s.openAPI == nil {
		return nil
	}
	if s.docs == nil {
		s.docs = map[schema.GroupVersion]*spec3.OpenAPI{}
	}
	gv := gvk.GroupVersion()
	doc, ok := s.docs[gv]
	if !ok {
		doc, _ = s.openAPI(gv) // a kind the server does not document has no constraints we can use
		s.docs[gv] = doc
	}
	return openAPISchema(doc, gvk)
}

// crdSchema is the schema a CRD gives one of its versions.
func crdSchema(crd *unstructured.Unstructured, version string) *typeSchema {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, ok := v.(map[string]any)
		if !ok || m["name"] != version {
			continue
		}
		raw, ok, _ := unstructured.NestedMap(m, "schema", "openAPIV3Schema")
		if !ok {
			return nil
		}
		b, err := json.Marshal(raw)
		if err != nil {
			return nil
		}
		var root spec.Schema
		if err := json.Unmarshal(b, &root); err != nil {
			return nil
		}
		return &typeSchema{root: &root}
	}
	return nil
}

// openAPISchema finds the schema of a kind in an OpenAPI v3 document by
// its x-kubernetes-group-version-kind.
func openAPISchema(doc *spec3.OpenAPI, gvk schema.GroupVersionKind) *typeSchema {
	if doc == nil || doc.Components == nil {
		return nil
	}
	refs := map[string]spec.Schema{}
	var root *spec.Schema
	for name, s := range doc.Components.Schemas {
		if s == nil {
			continue
		}
		refs[name] = *s
		gvks, _ := s.Extensions["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			m, _ := g.(map[string]any)
			if m["group"] == gvk.Group && m["version"] == gvk.Version && m["kind"] == gvk.Kind {
				root = s
			}
		}
	}
	if root == nil {
		return nil
	}
	return &typeSchema{root: root, refs: refs}
}

// metadataSchemas are what the server enforces on the object metadata
// variables most often land in; CRD schemas leave metadata out.
var metadataSchemas = map[string]*spec.Schema{
	"name": {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}, MaxLength: ptr(int64(253)),
		Pattern: `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`}},
	"labels": {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}, MaxLength: ptr(int64(63)),
		Pattern: `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`}},
	// labels and annotations as a whole: maps of strings.
	"map": {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"},
		AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}}}}}},
}

func ptr[T any](v T) *T { return &v }

// at returns the schema of the field at path (map keys and list
// indexes); nil when the schema does not constrain it.
func (t *typeSchema) at(path []any) *spec.Schema {
	if len(path) >= 2 && path[0] == "metadata" {
		switch {
		case path[1] == "name" && len(path) == 2:
			return metadataSchemas["name"]
		case path[1] == "labels" && len(path) == 3:
			return metadataSchemas["labels"]
		case (path[1] == "labels" || path[1] == "annotations") && len(path) == 2:
			return metadataSchemas["map"]
		}
		return nil
	}
	if t == nil {
		return nil
	}
	s := t.resolve(t.root)
	for _, el := range path {
		if s == nil {
			return nil
		}
		switch k := el.(type) {
		case string:
			if p, ok := s.Properties[k]; ok {
				s = t.resolve(&p)
			} else if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
				s = t.resolve(s.AdditionalProperties.Schema)
			} else {
				return nil
			}
		case int:
			if s.Items == nil || s.Items.Schema == nil {
				return nil
			}
			s = t.resolve(s.Items.Schema)
		}
	}
	return s
}

// resolve follows $ref and the allOf wrapper OpenAPI v3 puts around a
// $ref with a description or default.
func (t *typeSchema) resolve(s *spec.Schema) *spec.Schema {
	for range 32 {
		if s == nil {
			return nil
		}
		if ref := s.Ref.String(); ref != "" {
			r, ok := t.refs[strings.TrimPrefix(ref, "#/components/schemas/")]
			if !ok {
				return nil
			}
			s = &r
			continue
		}
		if len(s.AllOf) == 1 && len(s.Type) == 0 && len(s.Properties) == 0 {
			s = &s.AllOf[0]
			continue
		}
		return s
	}
	return nil
}

func isIntOrString(s *spec.Schema) bool {
	b, _ := s.Extensions.GetBool("x-kubernetes-int-or-string")
	return b
}

// fits says whether the server's schema validation accepts v for s: the
// validator the API server runs for custom resources. Built-in kinds are
// decoded into Go types, which take an int-or-string or a quantity as
// either a number or a string.
func fits(s *spec.Schema, v any) bool {
	if s == nil {
		return true
	}
	if s.Format == "int-or-string" || s.Format == "quantity" || isIntOrString(s) {
		switch t := v.(type) {
		case int64, float64:
			return true
		case string:
			// A string still meets the field's own rules: a CRD's
			// quantity has a pattern, which the server checks.
			c := *s
			c.Format = ""
			res := validate.NewSchemaValidator(&c, nil, "", strfmt.Default).Validate(t)
			return res == nil || res.IsValid()
		}
		return false
	}
	res := validate.NewSchemaValidator(s, nil, "", strfmt.Default).Validate(v)
	return res == nil || res.IsValid()
}
