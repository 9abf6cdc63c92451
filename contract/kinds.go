package contract

import (
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"

	"github.com/capirepo/capirepo/provider"
)

// kindRole is what core Cluster API does with a kind, and whether the kind
// is the <Kind>Template of that role.
type kindRole struct {
	role     role
	template bool
}

// refs are the kinds the release's templates and ClusterClasses refer to,
// by group/kind, with the role the referring field gives them.
type refs map[string]role

// collectRefs finds the references in the objects of templates and
// ClusterClass files: Cluster spec.infrastructureRef and controlPlaneRef,
// Machine, MachineSet, MachineDeployment and control-plane machine
// templates' infrastructureRef, MachinePool's, bootstrap configRefs, and a
// ClusterClass's infrastructure, controlPlane, machineInfrastructure,
// machineDeployments and machinePools references (v1beta1 ref and v1beta2
// templateRef alike).
func (rs refs) collect(objs []*object) {
	for _, o := range objs {
		owner := o.kind
		if o.group() != clusterGroup {
			owner = "" // e.g. a control plane's machineTemplate
		}
		walkRefs(o, func(path, group, kind string) {
			if r := refRole(owner, path); r != roleNone && group != "" {
				rs[group+"/"+kind] = r
			}
		})
	}
}

// walkRefs calls fn for every object reference below an object's spec (a
// mapping with kind and name, and apiGroup or apiVersion), with its field
// path and the group and kind it names.
func walkRefs(o *object, fn func(path, group, kind string)) {
	walkMaps(get(o.m, "spec"), "spec", func(path string, m map[string]any) {
		kind, _ := m["kind"].(string)
		if kind == "" || m["name"] == nil {
			return
		}
		group, _ := m["apiGroup"].(string)
		if av, ok := m["apiVersion"].(string); ok && group == "" && strings.Contains(av, "/") {
			group, _, _ = strings.Cut(av, "/")
		}
		fn(path, group, kind)
	})
}

// refRole is the role the field at path of an object of kind owner (a
// cluster.x-k8s.io kind, or "" for another group's) gives the kind it names.
func refRole(owner, path string) role {
	last := path[strings.LastIndex(path, ".")+1:]
	isRef := strings.HasSuffix(last, "Ref") || last == "ref" || last == "templateRef"
	switch {
	case !isRef:
		return roleNone
	case remediationField(path):
		// A remediation template (machineDeployments[].healthCheck.remediation.templateRef,
		// a MachineHealthCheck's spec.remediation.templateRef) is no machine
		// nor control plane, whichever class entry it sits in.
		return roleNone
	case strings.Contains(path, "bootstrap"):
		return roleBootstrapConfig
	case owner == "ClusterClass":
		switch {
		case strings.Contains(path, "machinePools"):
			return roleInfraMachinePool
		case strings.Contains(path, "machineInfrastructure"), strings.Contains(path, "machineDeployments"):
			return roleInfraMachine
		case strings.HasPrefix(path, "spec.infrastructure."):
			return roleInfraCluster
		case strings.HasPrefix(path, "spec.controlPlane."):
			return roleControlPlane
		}
		return roleNone
	case owner == "Cluster":
		switch path {
		case "spec.infrastructureRef":
			return roleInfraCluster
		case "spec.controlPlaneRef":
			return roleControlPlane
		}
		return roleNone
	case owner == "MachinePool" && last == "infrastructureRef":
		return roleInfraMachinePool
	case last == "infrastructureRef":
		// Machine, MachineSet, MachineDeployment, a control plane's
		// machineTemplate.
		return roleInfraMachine
	}
	return roleNone
}

// remediationField says whether a reference at path names a remediation
// template: v1beta2 healthCheck.remediation.templateRef and a
// MachineHealthCheck's spec.remediation.templateRef; v1beta1 names it
// machineHealthCheck.remediationTemplate and spec.remediationTemplate.
func remediationField(path string) bool {
	for _, part := range strings.Split(path, ".") {
		if part == "remediation" || strings.HasPrefix(part, "remediationTemplate") {
			return true
		}
	}
	return false
}

// groupType is the provider type a group belongs to by its name
// (infrastructure.*, bootstrap.*, controlplane.*); other groups take the
// provider's type.
func groupType(group string, t provider.Type) provider.Type {
	for _, seg := range strings.Split(group, ".") {
		switch seg {
		case "infrastructure":
			return clusterctlv1.InfrastructureProviderType
		case "bootstrap":
			return clusterctlv1.BootstrapProviderType
		case "controlplane", "control-plane":
			return clusterctlv1.ControlPlaneProviderType
		}
	}
	return t
}

// classifyKinds gives each CRD its contract role from evidence: the
// references of the release's templates and ClusterClasses, and <Kind> /
// <Kind>Template pairs of CRDs in a group of a provider type. The kind's
// name is read only to tell the three infrastructure roles of a pair apart
// (the contract names them ...Cluster, ...Machine, ...MachinePool) and to
// pair a kind with its Template, as the contract names templates. A CRD with
// neither evidence is no contract kind, whatever its name or labels.
func classifyKinds(crds []*crdObject, rs refs, t provider.Type) map[*crdObject]kindRole {
	byKind := map[string]*crdObject{}
	for _, c := range crds {
		byKind[c.crd.Spec.Group+"/"+c.crd.Spec.Names.Kind] = c
	}
	out := map[*crdObject]kindRole{}
	mark := func(gk string, r role) {
		c := byKind[gk]
		if c == nil {
			return
		}
		if base, ok := strings.CutSuffix(gk, "Template"); ok && (byKind[base] != nil || hasTemplateSpec(c)) {
			out[c] = kindRole{r, true}
			if b := byKind[base]; b != nil {
				out[b] = kindRole{r, false}
			}
			return
		}
		out[c] = kindRole{r, false}
		if tc := byKind[gk+"Template"]; tc != nil {
			out[tc] = kindRole{r, true}
		}
	}
	for _, gk := range sortedKeys(rs) {
		mark(gk, rs[gk])
	}
	for _, c := range crds {
		gk := c.crd.Spec.Group + "/" + c.crd.Spec.Names.Kind
		if _, done := out[c]; done || strings.HasSuffix(gk, "Template") || byKind[gk+"Template"] == nil {
			continue
		}
		if r := pairRole(c.crd.Spec.Group, c.crd.Spec.Names.Kind, t); r != roleNone {
			mark(gk, r)
		}
	}
	return out
}

// pairRole is the role of a kind that has a <Kind>Template CRD.
func pairRole(group, kind string, t provider.Type) role {
	switch groupType(group, t) {
	case clusterctlv1.BootstrapProviderType:
		return roleBootstrapConfig
	case clusterctlv1.ControlPlaneProviderType:
		return roleControlPlane
	case clusterctlv1.InfrastructureProviderType:
		for _, s := range []struct {
			suffix string
			r      role
		}{{"MachinePool", roleInfraMachinePool}, {"Machine", roleInfraMachine}, {"Cluster", roleInfraCluster}} {
			if strings.HasSuffix(kind, s.suffix) {
				return s.r
			}
		}
	}
	return roleNone
}

// hasTemplateSpec says whether a CRD's served schema has spec.template, as
// a <Kind>Template's does.
func hasTemplateSpec(c *crdObject) bool {
	return slices.ContainsFunc(c.crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return false
		}
		_, ok := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["template"]
		return ok
	})
}
