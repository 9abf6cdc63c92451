package contract

import (
	"encoding/json"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// ConvertedVersions are the versions of a CRD between which the API server
// converts objects: those it serves and the one it stores, in the CRD's
// order.
func ConvertedVersions(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	for _, v := range crd.Spec.Versions {
		if v.Served || v.Storage {
			out = append(out, v.Name)
		}
	}
	return out
}

// UnconvertedPairs returns the pairs of versions (of those named that the
// CRD lists) whose schemas differ, descriptions aside, while the CRD
// converts them with strategy None, which only rewrites apiVersion; nil
// when a webhook converts them. Each pair is sorted, and the pairs are in
// order: the one schema comparison of the lint's CAPI317 and the upgrade's
// CAPI709.
func UnconvertedPairs(crd *apiextensionsv1.CustomResourceDefinition, versions []string) [][2]string {
	if c := crd.Spec.Conversion; c != nil && c.Strategy != "" && c.Strategy != apiextensionsv1.NoneConverter {
		return nil
	}
	schemas := map[string]string{}
	var names []string
	for _, v := range crd.Spec.Versions {
		if slices.Contains(versions, v.Name) {
			if _, dup := schemas[v.Name]; !dup {
				names = append(names, v.Name)
			}
			schemas[v.Name] = schemaJSON(v.Schema)
		}
	}
	slices.Sort(names)
	var out [][2]string
	for i, a := range names {
		for _, b := range names[i+1:] {
			if schemas[a] != schemas[b] {
				out = append(out, [2]string{a, b})
			}
		}
	}
	return out
}

// schemaJSON is a version's schema without descriptions, as JSON with
// sorted keys: two versions whose schemas say the same have the same.
func schemaJSON(v *apiextensionsv1.CustomResourceValidation) string {
	if v == nil || v.OpenAPIV3Schema == nil {
		return ""
	}
	data, err := json.Marshal(v.OpenAPIV3Schema)
	if err != nil {
		return ""
	}
	var m any
	if err := json.Unmarshal(data, &m); err != nil {
		return ""
	}
	stripDescriptions(m)
	out, _ := json.Marshal(m) // maps marshal with sorted keys
	return string(out)
}

// stripDescriptions drops the description of every schema in s, and leaves
// properties that are named description alone.
func stripDescriptions(s any) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	delete(m, "description")
	for k, v := range m {
		switch k {
		case "properties", "patternProperties", "definitions", "dependencies":
			if named, ok := v.(map[string]any); ok {
				for _, sub := range named {
					stripDescriptions(sub)
				}
			}
		case "allOf", "anyOf", "oneOf":
			if list, ok := v.([]any); ok {
				for _, sub := range list {
					stripDescriptions(sub)
				}
			}
		case "items", "additionalProperties", "additionalItems", "not":
			if list, ok := v.([]any); ok {
				for _, sub := range list {
					stripDescriptions(sub)
				}
			} else {
				stripDescriptions(v)
			}
		}
	}
}

// lintConversion reports the versions a CRD serves (or stores) whose
// schemas differ while strategy None converts them (CAPI317).
func (l *linter) lintConversion(file string, c *crdObject) {
	for _, p := range UnconvertedPairs(c.crd, ConvertedVersions(c.crd)) {
		l.add(RuleConversion, file, c.ID(), "spec.conversion.strategy", "versions %s and %s have different schemas, and strategy None converts between them by rewriting apiVersion only: an object stored as one is served as the other with the first one's fields, and pruned to the other's schema on write; add a conversion webhook (strategy: Webhook), or give the versions the same schema",
			p[0], p[1])
	}
}
