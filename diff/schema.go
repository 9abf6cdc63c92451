package diff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/crdify/pkg/config"
	"sigs.k8s.io/crdify/pkg/validations"
	"sigs.k8s.io/crdify/pkg/validations/property"

	"github.com/capirepo/capirepo/contract"
)

// schemas compares the schemas of every version both CRDs serve (CAPI707,
// CAPI708). Versions that are not served by both are left out: a version
// new stops serving is not a finding, and one old did not serve holds no
// objects users wrote in it. Pairs of versions inside one CRD are not
// compared: CAPI317 (the lint's) and CAPI709 check that they convert.
func (c *collector) schemas(o, n *side, id string, oc, nc *apiextensionsv1.CustomResourceDefinition) {
	for _, ov := range oc.Spec.Versions {
		nv := crdVersion(nc, ov.Name)
		if nv == nil || !ov.Served || !nv.Served {
			continue
		}
		for _, d := range compareVersion(ov, *nv) {
			c.addSev(d.rule, d.severity, n.components(), id, d.field, "%s", d.message)
		}
	}
}

// schemaDiff is one change of a property.
type schemaDiff struct {
	rule     string
	severity contract.Severity
	// field is the version and the property: v1beta2 spec.template.spec.foo,
	// [*] for array items and map values.
	field   string
	message string
}

// comparators are crdify's property checks at CAPI708's severity, in the
// order crdify's runner applies them; each clears the keyword it checked on
// both sides, and what remains is described by unhandled. Type, enum and
// required are this package's own (typeChange, enumChange,
// requiredWithoutDefault): crdify has one severity for each, where
// widening, narrowing and defaults differ.
func comparators() []validations.Comparator[apiextensionsv1.JSONSchemaProps] {
	warn := func(v interface {
		validations.Comparator[apiextensionsv1.JSONSchemaProps]
		SetEnforcement(config.EnforcementPolicy)
	}, p config.EnforcementPolicy) validations.Comparator[apiextensionsv1.JSONSchemaProps] {
		v.SetEnforcement(p)
		return v
	}
	return []validations.Comparator[apiextensionsv1.JSONSchemaProps]{
		warn(&property.Default{}, config.EnforcementPolicyWarn),
		warn(&property.Maximum{}, config.EnforcementPolicyWarn),
		warn(&property.MaxItems{}, config.EnforcementPolicyWarn),
		warn(&property.MaxLength{}, config.EnforcementPolicyWarn),
		warn(&property.MaxProperties{}, config.EnforcementPolicyWarn),
		warn(&property.Minimum{}, config.EnforcementPolicyWarn),
		warn(&property.MinItems{}, config.EnforcementPolicyWarn),
		warn(&property.MinLength{}, config.EnforcementPolicyWarn),
		warn(&property.MinProperties{}, config.EnforcementPolicyWarn),
		// Descriptions are no finding; the check still clears them.
		warn(&property.Description{}, config.EnforcementPolicyNone),
		// requiredWithoutDefault reads the children; this clears the keyword.
		warn(&property.Required{}, config.EnforcementPolicyNone),
	}
}

// compareVersion compares one version of a CRD in two releases. The result
// is sorted by field.
func compareVersion(ov, nv apiextensionsv1.CustomResourceDefinitionVersion) []schemaDiff {
	at := at(ov.Name)
	if ov.Schema == nil || ov.Schema.OpenAPIV3Schema == nil || nv.Schema == nil || nv.Schema.OpenAPIV3Schema == nil {
		return nil
	}
	oldFlat, newFlat := flatten(ov.Schema.OpenAPIV3Schema), flatten(nv.Schema.OpenAPIV3Schema)
	var out []schemaDiff
	removed := sets.New[string]()
	for p := range oldFlat {
		if _, ok := newFlat[p]; !ok {
			removed.Insert(p)
		}
	}
	for _, p := range sets.List(removed) {
		if hasAncestor(p, removed) {
			continue // its removed ancestor says it
		}
		if kept, by := keptUnknown(p, newFlat); kept {
			out = append(out, schemaDiff{contract.RuleUpgradeTightened, contract.Warning, at(p),
				fmt.Sprintf("%s is no longer in the schema; %s preserves unknown fields, so stored values are kept but no longer validated", at(p), display(by))})
			continue
		}
		out = append(out, schemaDiff{contract.RuleUpgradeSchema, contract.Error, at(p),
			fmt.Sprintf("%s was removed: the API server prunes it from stored objects on their next write (its data is lost), and clients that still set it have it dropped or refused", at(p))})
	}
	cmps := comparators()
	paths := make([]string, 0, len(oldFlat))
	for p := range oldFlat {
		if !removed.Has(p) {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		a, b := dropChildren(oldFlat[p]), dropChildren(newFlat[p])
		out = append(out, requiredWithoutDefault(p, oldFlat[p], newFlat[p], at)...)
		if equality.Semantic.DeepEqual(a, b) {
			continue
		}
		if d, ok := typeChange(at(p), a, b); ok {
			out = append(out, d)
		}
		if d, ok := enumChange(at(p), a, b); ok {
			out = append(out, d)
		}
		for _, cmp := range cmps {
			res := cmp.Compare(a, b)
			for _, m := range slices.Concat(res.Errors, res.Warnings) {
				out = append(out, schemaDiff{contract.RuleUpgradeTightened, contract.Warning, at(p), at(p) + ": " + m})
			}
		}
		out = append(out, unhandled(at(p), a, b)...)
	}
	slices.SortStableFunc(out, func(x, y schemaDiff) int { return strings.Compare(x.field, y.field) })
	return out
}

// at names a property of a version for findings: "v1beta2 spec.foo".
func at(version string) func(loc string) string {
	return func(loc string) string { return version + " " + display(loc) }
}

// flatten maps each property of a schema to its node, by crdify's "simple
// location" (^.spec.foo, [*] for array items and map values), with crdify's
// walk. Unlike validations.FlattenCRDVersion, a location keeps the first
// node walked there: crdify's keeps the last, so a property with anyOf (an
// int-or-string) or allOf is replaced by its last subschema. The nodes are
// shallow copies: their children are the schema's own, never changed here.
func flatten(s *apiextensionsv1.JSONSchemaProps) map[string]*apiextensionsv1.JSONSchemaProps {
	out := map[string]*apiextensionsv1.JSONSchemaProps{}
	validations.SchemaHas(s, field.NewPath("^"), field.NewPath("^"), nil,
		func(s *apiextensionsv1.JSONSchemaProps, _, loc *field.Path, _ []*apiextensionsv1.JSONSchemaProps) bool {
			if _, seen := out[loc.String()]; !seen {
				c := *s
				out[loc.String()] = &c
			}
			return false
		})
	return out
}

// dropChildren copies a node without the schemas of its children, which
// are compared at their own locations.
func dropChildren(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	c := *s
	c.Properties, c.Items = nil, nil
	if c.AdditionalProperties != nil {
		c.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{Allows: c.AdditionalProperties.Allows}
	}
	return &c
}

// display turns crdify's location (^.spec.foo) into a field path (spec.foo).
func display(loc string) string {
	return strings.TrimPrefix(strings.TrimPrefix(loc, "^"), ".")
}

// ancestors lists the locations above loc, nearest first.
func ancestors(loc string) []string {
	var out []string
	for i := len(loc) - 1; i > 0; i-- {
		if loc[i] == '.' || loc[i] == '[' {
			out = append(out, loc[:i])
		}
	}
	return out
}

func hasAncestor(loc string, set sets.Set[string]) bool {
	return slices.ContainsFunc(ancestors(loc), set.Has)
}

// keptUnknown says whether the nearest ancestor new still has keeps unknown
// fields (x-kubernetes-preserve-unknown-fields), so a property dropped from
// the schema is not pruned.
func keptUnknown(loc string, newFlat map[string]*apiextensionsv1.JSONSchemaProps) (bool, string) {
	for _, a := range ancestors(loc) {
		if s, ok := newFlat[a]; ok {
			return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields, a
		}
	}
	return false, ""
}

// effectiveType is a node's type, with int-or-string as a type of its own.
func effectiveType(s *apiextensionsv1.JSONSchemaProps) string {
	if s.XIntOrString {
		return "int-or-string"
	}
	return s.Type
}

// typeChange reports a changed type, unless the new one takes every value
// the old one did (integer to number, integer or string to int-or-string,
// or no type where unknown fields are kept). It clears what it checked.
func typeChange(field string, a, b *apiextensionsv1.JSONSchemaProps) (schemaDiff, bool) {
	ot, nt := effectiveType(a), effectiveType(b)
	a.Type, b.Type, a.XIntOrString, b.XIntOrString = "", "", false, false
	widened := (ot == "integer" && nt == "number") ||
		((ot == "integer" || ot == "string") && nt == "int-or-string") ||
		(nt == "" && b.XPreserveUnknownFields != nil && *b.XPreserveUnknownFields)
	if ot == nt || widened {
		return schemaDiff{}, false
	}
	return schemaDiff{contract.RuleUpgradeSchema, contract.Error, field,
		fmt.Sprintf("the type of %s changed from %s to %s: stored objects with a value of type %s no longer validate, and every update of them is refused", field, orAny(ot), orAny(nt), orAny(ot))}, true
}

func orAny(t string) string {
	if t == "" {
		return "any type"
	}
	return t
}

// enumChange splits what crdify's enum check reports at one severity:
// values removed from an enum break stored objects (error); an enum on a
// field that had none only constrains new writes (warning, with
// ratcheting); added values, or an enum dropped, widen (nothing). It clears
// what it checked.
func enumChange(field string, a, b *apiextensionsv1.JSONSchemaProps) (schemaDiff, bool) {
	oldVals, newVals := enumValues(a), enumValues(b)
	a.Enum, b.Enum = nil, nil
	switch {
	case oldVals.Len() == 0 && newVals.Len() > 0:
		return schemaDiff{contract.RuleUpgradeTightened, contract.Warning, field,
			fmt.Sprintf("%s: %v : %s", field, property.ErrNetNewEnumConstraint, strings.Join(sets.List(newVals), ", "))}, true
	case newVals.Len() > 0 && oldVals.Difference(newVals).Len() > 0:
		return schemaDiff{contract.RuleUpgradeSchema, contract.Error, field,
			fmt.Sprintf("%s no longer allows %s: stored objects with those values no longer validate, and every update of them is refused", field, strings.Join(sets.List(oldVals.Difference(newVals)), ", "))}, true
	}
	return schemaDiff{}, false
}

func enumValues(s *apiextensionsv1.JSONSchemaProps) sets.Set[string] {
	out := sets.New[string]()
	for _, j := range s.Enum {
		out.Insert(string(j.Raw))
	}
	return out
}

// requiredWithoutDefault reports properties new requires and old did not,
// unless new gives them a default, which the API server fills in. crdify's
// required check sees a node without its children, so it cannot see the
// defaults.
func requiredWithoutDefault(p string, a, b *apiextensionsv1.JSONSchemaProps, at func(string) string) []schemaDiff {
	added := sets.New(b.Required...).Difference(sets.New(a.Required...))
	var out []schemaDiff
	for _, name := range sets.List(added) {
		child, ok := b.Properties[name]
		if ok && child.Default != nil {
			continue
		}
		field := at(p + "." + name)
		out = append(out, schemaDiff{contract.RuleUpgradeSchema, contract.Error, field,
			fmt.Sprintf("%s became required without a default: every update of a stored object that lacks it is refused; give it a default or keep it optional", field)})
	}
	return out
}

// documentation are schema keywords that validate nothing.
var documentation = sets.New("description", "title", "example", "externalDocs")

// allowing are keywords that let more values through when set: adding one
// loosens a schema and removing it tightens it.
var allowing = sets.New("nullable", "x-kubernetes-preserve-unknown-fields")

// unhandled describes what changed beyond the checks above, keyword by
// keyword (patterns, formats, CEL rules, list types, ...): a keyword added
// or changed tightens validation (CAPI708), one removed loosens it (no
// finding); nullable and x-kubernetes-preserve-unknown-fields the other way
// round.
// crdify's own unhandled check prints a Go struct diff instead.
func unhandled(field string, a, b *apiextensionsv1.JSONSchemaProps) []schemaDiff {
	am, bm := asMap(a), asMap(b)
	keys := sets.KeySet(am).Union(sets.KeySet(bm))
	var changed []string
	for _, k := range sets.List(keys) {
		if documentation.Has(k) {
			continue
		}
		av, inA := am[k]
		bv, inB := bm[k]
		switch {
		case inA && inB && string(av) == string(bv):
		case !inA && allowing.Has(k), inA && !inB && !allowing.Has(k):
			// loosened
		case !inB:
			changed = append(changed, k+" removed")
		case !inA:
			changed = append(changed, k+" "+short(bv)+" added")
		default:
			changed = append(changed, k+" changed from "+short(av)+" to "+short(bv))
		}
	}
	if len(changed) == 0 {
		return nil
	}
	return []schemaDiff{{contract.RuleUpgradeTightened, contract.Warning, field, field + ": " + strings.Join(changed, "; ")}}
}

func asMap(s *apiextensionsv1.JSONSchemaProps) map[string]json.RawMessage {
	data, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(data, &m)
	return m
}

// short quotes a JSON value, cut to a readable length.
func short(v json.RawMessage) string {
	s := string(v)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
