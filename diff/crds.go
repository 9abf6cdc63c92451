package diff

import (
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/provider"
)

// crds compares the CRDs of old's and new's components.
func (c *collector) crds(o, n *side) {
	file := n.components()
	// Documents folded each object held twice into what clusterctl leaves
	// in the cluster (the last copy's fields win), so both sides are judged
	// as installed; the lint's own rule says the file holds it twice.
	for _, d := range n.dups {
		c.add(contract.RuleDuplicateObject, file, d.ID(), "metadata.name", "%s", d.Duplicate.Message)
	}
	for _, name := range o.crdNames {
		oc := o.crds[name]
		nc, ok := n.crds[name]
		if !ok {
			c.crdGone(o, n, oc)
			continue
		}
		id := crdID(name)
		c.crdIdentity(o, n, id, oc, nc)
		c.versions(o, n, id, oc, nc)
		c.schemas(o, n, id, oc, nc)
	}
	for _, name := range n.crdNames {
		nc := n.crds[name]
		id := crdID(name)
		if s := storageVersions(nc); len(s) != 1 {
			// The lint's own rule: lint --against reports it once.
			what := text.Plural(len(s), "version is", "versions are")
			if len(s) > 1 {
				what = fmt.Sprintf("%s (%s)", what, strings.Join(s, ", "))
			}
			c.add(contract.RuleStorageVersion, file, id, "spec.versions[*].storage", "%s marked storage: true; the API server needs exactly one, so clusterctl upgrade fails on this CRD", what)
		}
		c.conversion(o, n, id, o.crds[name], nc)
		c.contractLabels(o, n, id, o.crds[name], nc)
		c.moveLabel(o, n, id, o.crds[name], nc)
	}
}

// crdGone reports a CRD of old that new does not ship under its name: one
// renamed (another group or plural, the same kind) is CAPI705, one dropped
// CAPI706 unless old served no version of it.
func (c *collector) crdGone(o, n *side, oc *apiextensionsv1.CustomResourceDefinition) {
	file := n.components()
	for _, name := range n.crdNames {
		nc := n.crds[name]
		if _, inOld := o.crds[name]; inOld || nc.Spec.Names.Kind != oc.Spec.Names.Kind {
			continue
		}
		what := "group " + oc.Spec.Group + " became " + nc.Spec.Group
		field := "spec.group"
		if nc.Spec.Group == oc.Spec.Group {
			what, field = "plural "+oc.Spec.Names.Plural+" became "+nc.Spec.Names.Plural, "spec.names.plural"
		}
		c.add(contract.RuleUpgradeIdentity, file, crdID(oc.Name), field, "%s's %s is %s in %s (%s): a new CRD for the API server, so every %s object of %s stays behind under the old one, with no controller",
			o.version, oc.Spec.Names.Kind, nc.Name, n.version, what, oc.Spec.Names.Kind, oc.Name)
		return
	}
	if served := servedVersions(oc); len(served) > 0 {
		c.add(contract.RuleUpgradeCRDRemoved, file, crdID(oc.Name), "", "%s serves %s (%s) and %s no longer ships it: clusterctl upgrade keeps the CRD and its objects, which are left with no controller and no conversion webhook; keep it, or stop serving its versions in a release first",
			o.version, oc.Name, strings.Join(served, ", "), n.version)
	}
}

// crdIdentity checks what the API server never lets change on a CRD.
func (c *collector) crdIdentity(o, n *side, id string, oc, nc *apiextensionsv1.CustomResourceDefinition) {
	file := n.components()
	for _, ch := range []struct{ field, old, new string }{
		{"spec.group", oc.Spec.Group, nc.Spec.Group},
		{"spec.scope", string(oc.Spec.Scope), string(nc.Spec.Scope)},
		{"spec.names.kind", oc.Spec.Names.Kind, nc.Spec.Names.Kind},
		{"spec.names.plural", oc.Spec.Names.Plural, nc.Spec.Names.Plural},
	} {
		if ch.old != ch.new {
			c.add(contract.RuleUpgradeIdentity, file, id, ch.field, "%s is %q in %s and %q in %s: the API server refuses to change it on an existing CRD, so clusterctl upgrade fails on this CRD",
				ch.field, ch.old, o.version, ch.new, n.version)
		}
	}
}

// versions checks old's storage version is kept and no served version is
// dropped without being unserved first.
func (c *collector) versions(o, n *side, id string, oc, nc *apiextensionsv1.CustomResourceDefinition) {
	file := n.components()
	storage := ""
	if s := storageVersions(oc); len(s) == 1 {
		storage = s[0]
		if crdVersion(nc, storage) == nil {
			c.add(contract.RuleUpgradeStorage, file, id, "spec.versions["+storage+"]", "%s is the storage version of %s in %s, and %s's spec.versions (%s) no longer lists it: clusterctl upgrade refuses ('the new CRD does not contain the storage version %q of the current CRD'); keep %s in spec.versions (served: false is enough)",
				storage, oc.Name, o.version, n.version, strings.Join(versionNames(nc), ", "), storage, storage)
		}
	}
	for _, v := range oc.Spec.Versions {
		if v.Served && v.Name != storage && crdVersion(nc, v.Name) == nil {
			c.add(contract.RuleUpgradeServed, file, id, "spec.versions["+v.Name+"]", "%s serves %s and %s drops it from spec.versions: clients and manifests still using %s fail at once; set served: false in %s and remove %s in a later release",
				o.version, v.Name, n.version, v.Name, n.version, v.Name)
		}
	}
}

func storageVersions(crd *apiextensionsv1.CustomResourceDefinition) []string {
	return versionsWhere(crd, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Storage })
}

func servedVersions(crd *apiextensionsv1.CustomResourceDefinition) []string {
	return versionsWhere(crd, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Served })
}

func versionNames(crd *apiextensionsv1.CustomResourceDefinition) []string {
	return versionsWhere(crd, func(apiextensionsv1.CustomResourceDefinitionVersion) bool { return true })
}

// versionsWhere names a CRD's versions for which keep is true, in order.
func versionsWhere(crd *apiextensionsv1.CustomResourceDefinition, keep func(apiextensionsv1.CustomResourceDefinitionVersion) bool) []string {
	var out []string
	for _, v := range crd.Spec.Versions {
		if keep(v) {
			out = append(out, v.Name)
		}
	}
	return out
}

func crdVersion(crd *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	if crd == nil {
		return nil
	}
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

// conversion checks that objects old stored in a version new no longer
// serves are converted when the schemas differ: with strategy None the API
// server only relabels them. Versions new serves or stores with different
// schemas are new's own finding (the lint's CAPI317): not said here again.
func (c *collector) conversion(o, n *side, id string, oc, nc *apiextensionsv1.CustomResourceDefinition) {
	if oc == nil {
		return // nothing is stored yet: the release's own findings only
	}
	own := contract.ConvertedVersions(nc)
	names := slices.Clone(own)
	for _, s := range storageVersions(oc) {
		if crdVersion(nc, s) != nil && !slices.Contains(names, s) {
			names = append(names, s)
		}
	}
	for _, p := range contract.UnconvertedPairs(nc, names) {
		if slices.Contains(own, p[0]) && slices.Contains(own, p[1]) {
			continue
		}
		stored, other := p[0], p[1]
		if slices.Contains(own, stored) {
			stored, other = other, stored
		}
		sev := contract.Error
		what := ""
		if len(contract.UnconvertedPairs(oc, p[:])) > 0 {
			sev, what = contract.Warning, fmt.Sprintf(" (as in %s already)", o.version)
		}
		c.addSev(contract.RuleUpgradeConversion, sev, n.components(), id, "spec.conversion.strategy", "%s stores objects as %s, which %s lists but no longer serves, and converts them to %s with strategy None though the schemas differ%s: after the upgrade those objects are served as %s with %s's fields, and pruned on write; add a conversion webhook",
			o.version, stored, n.version, other, what, other, stored)
	}
}

// contractLabels checks that core Cluster API still resolves new's CRD from
// its contract labels, to a served version, as it did old's, and that a
// release that moves to another contract labels its CRDs for it.
//
// Only what the upgrade breaks is an upgrade error: a label that led core to
// a version old served and leads to none new serves. A label that led
// nowhere in old already (kustomize commonLabels stamp one on every CRD,
// identities and pools too, often with a version the CRD never served), or
// a CRD new in new, is the release's own finding: the lint's CAPI303 and
// CAPI304 report it at their own severity (lint --against, release), and
// nothing changes for it on upgrade.
func (c *collector) contractLabels(o, n *side, id string, oc, nc *apiextensionsv1.CustomResourceDefinition) {
	file := n.components()
	newC, newV := contract.ResolvedContract(nc)
	if oc != nil {
		oldC, oldV := contract.ResolvedContract(oc)
		oldServed := oldC != "" && crdVersion(oc, oldV) != nil && crdVersion(oc, oldV).Served
		switch v := crdVersion(nc, newV); {
		case !oldServed:
		case newC == "":
			c.add(contract.RuleUpgradeContractLabel, file, id, "metadata.labels", "%s labels it cluster.x-k8s.io/%s (core Cluster API resolves %s), and %s has no cluster.x-k8s.io/%s label: every reference to %s fails after the upgrade ('contract version label(s) are either missing or empty')",
				o.version, oldC, oldV, n.version, strings.Join(provider.Contracts, " or cluster.x-k8s.io/"), nc.Spec.Names.Kind)
		case v == nil || !v.Served:
			c.add(contract.RuleUpgradeContractLabel, file, id, "metadata.labels[cluster.x-k8s.io/"+newC+"]", "core Cluster API resolves %s's label cluster.x-k8s.io/%s to %s, which %s does not serve (served: %s), while %s's label led it to %s, which %s served: every reference to %s fails after the upgrade",
				n.version, newC, newV, n.version, strings.Join(servedVersions(nc), ", "), o.version, oldV, o.version, nc.Spec.Names.Kind)
		}
	}
	nmc, omc := seriesContract(n.meta, n.sv), seriesContract(o.meta, o.sv)
	labels := contract.ContractLabels(nc)
	if nmc != "" && omc != "" && nmc != omc && slices.Contains(provider.Contracts, nmc) && len(labels) > 0 {
		if _, ok := labels[nmc]; !ok {
			c.addSev(contract.RuleUpgradeContractLabel, contract.Warning, file, id, "metadata.labels[cluster.x-k8s.io/"+nmc+"]", "%s moves to contract %s (metadata.yaml), but the CRD has no cluster.x-k8s.io/%s label: core Cluster API still reads the contract of %s from it",
				n.version, nmc, nmc, o.version)
		}
	}
}
