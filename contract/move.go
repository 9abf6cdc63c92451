package contract

import (
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
)

// MoveLabels are the CRD labels that make clusterctl move take a kind that
// hangs off no Cluster (an identity an InfraCluster references), with what
// hangs off it (move-hierarchy) or alone (move).
var MoveLabels = []string{clusterctlv1.ClusterctlMoveHierarchyLabel, clusterctlv1.ClusterctlMoveLabel}

// HasMoveLabel says whether a CRD carries one of MoveLabels.
func HasMoveLabel(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return slices.ContainsFunc(MoveLabels, func(k string) bool { _, ok := crd.Labels[k]; return ok })
}

// lintMove checks what clusterctl move needs (the clusterctl contract's Move
// section): move takes the namespaced objects linked to a Cluster by owner
// references, and a cluster-scoped kind only when its CRD carries a move
// label. An InfraCluster field that references a cluster-scoped kind of the
// components (spec.identityRef: AWSClusterRoleIdentity, VSphereClusterIdentity
// ...) without one leaves the identity behind: the moved cluster's
// controllers look for it in vain. A warning: the contract leaves room for
// a documented manual step.
func (l *linter) lintMove(file string, crds []*crdObject, kinds map[*crdObject]kindRole) {
	scoped := map[string]*crdObject{} // kind -> cluster-scoped CRD
	for _, c := range crds {
		if c.crd.Spec.Scope == apiextensionsv1.ClusterScoped {
			scoped[c.crd.Spec.Names.Kind] = c
		}
	}
	if len(scoped) == 0 {
		return
	}
	fields := map[*crdObject][]string{} // referenced CRD -> InfraCluster fields
	for _, c := range crds {
		if kr := kinds[c]; kr.role != roleInfraCluster || kr.template {
			continue
		}
		for _, v := range c.crd.Spec.Versions {
			if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			walkReferenceFields(*v.Schema.OpenAPIV3Schema, "", 0, func(field string, enum []string) {
				for _, t := range referencedScoped(scoped, c.crd.Spec.Group, field, enum) {
					ref := c.crd.Spec.Names.Kind + " " + field
					if !slices.Contains(fields[t], ref) {
						fields[t] = append(fields[t], ref)
					}
				}
			})
		}
	}
	targets := make([]*crdObject, 0, len(fields))
	for t := range fields {
		targets = append(targets, t)
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].name < targets[j].name })
	for _, t := range targets {
		if HasMoveLabel(t.crd) {
			continue
		}
		l.add(RuleMoveLabel, file, t.ID(), "metadata.labels", "%s is cluster-scoped and referenced from %s, but its CRD has no %s label: clusterctl move leaves every %s behind, and the moved cluster's controllers look for it in vain; label the CRD (kustomize patch, as CAPA's label_in_*identities.yaml) or document the manual step",
			t.crd.Spec.Names.Kind, strings.Join(fields[t], ", "), strings.Join(MoveLabels, " or "), t.crd.Spec.Names.Kind)
	}
}

// walkReferenceFields calls fn for every object property of s that looks
// like a reference (properties kind and name), with the kinds its kind enum
// allows (nil when it has none), down to a few levels.
func walkReferenceFields(s apiextensionsv1.JSONSchemaProps, path string, depth int, fn func(field string, enum []string)) {
	if depth > 6 {
		return
	}
	if path != "" {
		if k, ok := s.Properties["kind"]; ok {
			if _, named := s.Properties["name"]; named {
				var enum []string
				for _, e := range k.Enum {
					enum = append(enum, strings.Trim(string(e.Raw), `"`))
				}
				fn(path, enum)
				return
			}
		}
	}
	for _, name := range sortedKeys(s.Properties) {
		p := name
		if path != "" {
			p = path + "." + name
		}
		walkReferenceFields(s.Properties[name], p, depth+1, fn)
	}
}

// referencedScoped returns the cluster-scoped CRDs a reference field may
// name: the kinds of its enum, or, for an identityRef with no enum, the
// cluster-scoped identity kinds of the InfraCluster's group.
func referencedScoped(scoped map[string]*crdObject, group, field string, enum []string) []*crdObject {
	var out []*crdObject
	if len(enum) > 0 {
		for _, k := range enum {
			if c, ok := scoped[k]; ok {
				out = append(out, c)
			}
		}
		return out
	}
	if !strings.HasSuffix(strings.ToLower(field), "identityref") {
		return nil
	}
	for _, k := range sortedKeys(scoped) {
		if c := scoped[k]; c.crd.Spec.Group == group && strings.Contains(k, "Identity") {
			out = append(out, c)
		}
	}
	return out
}
