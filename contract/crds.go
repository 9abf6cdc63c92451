package contract

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/version"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	capicontract "sigs.k8s.io/cluster-api/util/contract"

	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/provider"
)

// role is what core Cluster API does with a provider kind.
type role int

const (
	roleNone role = iota
	roleInfraCluster
	roleInfraMachine
	roleInfraMachinePool
	roleBootstrapConfig
	roleControlPlane
)

func (r role) String() string {
	return [...]string{"", "InfraCluster", "InfraMachine", "InfraMachinePool", "BootstrapConfig", "ControlPlane"}[r]
}

type crdObject struct {
	*object
	crd *apiextensionsv1.CustomResourceDefinition
}

// parseCRDs returns the CRDs parseObjects decoded. One that does not decode
// is skipped: CAPI001 reports it only if it does not parse at all, CAPI315
// the values that do not decode (lintCRDDecode).
func parseCRDs(objs []*object) []*crdObject {
	var out []*crdObject
	for _, o := range objs {
		if o.crd != nil {
			out = append(out, &crdObject{object: o, crd: o.crd})
		}
	}
	return out
}

var contractLabelKey = regexp.MustCompile(`^cluster\.x-k8s\.io/(v[0-9]+(?:(?:alpha|beta)[0-9]+)?)$`)

// contractLabels returns contract -> API versions from the CRD's labels.
func (c *crdObject) contractLabels() map[string][]string {
	out := map[string][]string{}
	for k, v := range c.crd.Labels {
		m := contractLabelKey.FindStringSubmatch(k)
		if m == nil || v == "" {
			continue
		}
		out[m[1]] = strings.Split(v, "_")
	}
	return out
}

func (c *crdObject) version(name string) (int, *apiextensionsv1.CustomResourceDefinitionVersion) {
	for i := range c.crd.Spec.Versions {
		if c.crd.Spec.Versions[i].Name == name {
			return i, &c.crd.Spec.Versions[i]
		}
	}
	return -1, nil
}

// latest is the version core Cluster API picks from a label value.
func latest(versions []string) string {
	return slices.MaxFunc(versions, version.CompareKubeAwareVersionStrings)
}

// resolved returns the contract label core Cluster API resolves, as
// internal/contract.GetLatestContractAndAPIVersionFromContract does: the
// newest contract it accepts (v1beta2, then v1beta1) whose label the CRD
// has, and the newest API version in that label's value. Older contract
// labels and the other versions in the value are never read by a core that
// can run this release.
func (c *crdObject) resolved(labels map[string][]string) (contract, version string) {
	for _, k := range provider.Contracts {
		if vs := labels[k]; len(vs) > 0 {
			return k, latest(vs)
		}
	}
	return "", ""
}

func (l *linter) lintCRDs(v *view, file string, crds []*crdObject, ptype provider.Type, kinds map[*crdObject]kindRole) {
	have := map[string]bool{}
	for _, c := range crds {
		have[c.crd.Spec.Group+"/"+c.crd.Spec.Names.Kind] = true
	}
	seriesContract := v.seriesContract()
	for _, c := range crds {
		spec := c.crd.Spec
		kind := spec.Names.Kind
		r, template := kinds[c].role, kinds[c].template
		id := c.ID()

		// Every CRD.
		storage := 0
		for _, ver := range spec.Versions {
			if ver.Storage {
				storage++
			}
		}
		if storage != 1 {
			l.add(RuleStorageVersion, file, id, "spec.versions[*].storage", "%s marked storage: true; the API server needs exactly one", text.Plural(storage, "version is", "versions are"))
		}
		l.lintConversion(file, c)
		if _, skip := c.crd.Annotations[clusterctlv1.SkipCRDNamePreflightCheckAnnotation]; !skip {
			if want := capicontract.CalculateCRDName(spec.Group, kind); c.name != want {
				l.add(RuleCRDName, file, id, "metadata.name", "name %q is not %q (CalculateCRDName of %s, %s); clusterctl init rejects it", c.name, want, spec.Group, kind)
			}
		}
		labels := c.contractLabels()
		for k := range labels {
			if !slices.Contains(v.labelled, k) {
				v.labelled = append(v.labelled, k)
			}
		}
		resolved, resolvedVersion := c.resolved(labels)
		switch {
		case ptype == clusterctlv1.CoreProviderType:
		case r != roleNone && resolved == "":
			l.add(RuleContractLabel, file, id, "metadata.labels", "no cluster.x-k8s.io/v1beta2 or cluster.x-k8s.io/v1beta1 label: core Cluster API fails to resolve %s %s ('contract version label(s) are either missing or empty'); add e.g. cluster.x-k8s.io/v1beta2: %s", r, kind, c.storageVersion())
		case len(labels) == 0:
			l.addSev(RuleContractLabel, Warning, file, id, "metadata.labels", "no cluster.x-k8s.io/<contract> label (e.g. cluster.x-k8s.io/v1beta2: %s)", c.storageVersion())
		}
		if r == roleNone {
			continue
		}
		if resolved != "" {
			if _, sv := c.version(resolvedVersion); sv == nil || !sv.Served {
				l.add(RuleContractServed, file, id, labelField("labels", "cluster.x-k8s.io/"+resolved), "core Cluster API resolves contract %s to version %q, which the CRD does not serve (served: %s): every reference to %s fails", resolved, resolvedVersion, strings.Join(c.served(), ", "), kind)
			}
		}

		// Contract kinds and their templates.
		what := r.String()
		if template {
			what += "Template"
		}
		if spec.Scope != apiextensionsv1.NamespaceScoped {
			l.add(RuleCRDScope, file, id, "spec.scope", "%s %s has scope %q; the contract requires Namespaced", what, kind, spec.Scope)
		}
		if spec.Names.ListKind != "" && spec.Names.ListKind != kind+"List" {
			l.add(RuleListKind, file, id, "spec.names.listKind", "listKind %q; the contract requires %sList", spec.Names.ListKind, kind)
		}
		if !slices.Contains(spec.Names.Categories, "cluster-api") {
			l.add(RuleCategory, file, id, "spec.names.categories", "%s %s is not in the cluster-api category", what, kind)
		}
		if slices.Contains(provider.Contracts, seriesContract) && len(labels) > 0 {
			if _, ok := labels[seriesContract]; !ok {
				l.add(RuleLabelMetadata, file, id, labelField("labels", "cluster.x-k8s.io/"+seriesContract), "metadata.yaml gives %s contract %s, but the CRD has no cluster.x-k8s.io/%s label", v.version, seriesContract, seriesContract)
			}
		}
		if template {
			continue
		}
		for i, ver := range spec.Versions {
			if ver.Served && (ver.Subresources == nil || ver.Subresources.Status == nil) {
				l.add(RuleCRDStatus, file, id, fmt.Sprintf("spec.versions[%d].subresources.status", i), "%s %s version %s has no status subresource", what, kind, ver.Name)
			}
		}
		if !have[spec.Group+"/"+kind+"Template"] {
			l.add(RuleTemplateCRD, file, id, "spec.names.kind", "no %sTemplate CRD in group %s (needed for ClusterClass%s)", kind, spec.Group, map[bool]string{true: " and MachineDeployments"}[r == roleInfraMachine])
		}
		l.lintSchema(file, c, r, resolved, resolvedVersion, seriesContract)
	}
}

func (c *crdObject) served() []string {
	var out []string
	for _, v := range c.crd.Spec.Versions {
		if v.Served {
			out = append(out, v.Name)
		}
	}
	return out
}

func (c *crdObject) storageVersion() string {
	for _, v := range c.crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	if len(c.crd.Spec.Versions) > 0 {
		return c.crd.Spec.Versions[0].Name
	}
	return "v1beta1"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// schemaNeed is one field core Cluster API reads.
type schemaNeed struct {
	rule  string
	sev   Severity
	path  string // dotted, below the object root
	types []string
}

// lintSchema checks the schema of the API version core Cluster API resolves
// (resolved, resolvedVersion) against that contract's needs. Without such a
// label it checks the storage version against the release series' contract.
func (l *linter) lintSchema(file string, c *crdObject, r role, resolved, resolvedVersion, seriesContract string) {
	type target struct{ contract, version string }
	var targets []target
	if resolved != "" {
		targets = append(targets, target{resolved, resolvedVersion})
	}
	if len(targets) == 0 {
		targets = append(targets, target{cmpOr(seriesContract, provider.Contracts[0]), c.storageVersion()})
	}
	for _, t := range targets {
		i, ver := c.version(t.version)
		if ver == nil || ver.Schema == nil || ver.Schema.OpenAPIV3Schema == nil {
			continue // CAPI304 reports a label naming no version
		}
		for _, n := range needs(r, t.contract) {
			prop, found := schemaField(ver.Schema.OpenAPIV3Schema, strings.Split(n.path, "."))
			field := fmt.Sprintf("spec.versions[%d].schema.openAPIV3Schema.properties.%s", i, strings.ReplaceAll(n.path, ".", ".properties."))
			switch {
			case !found:
				l.addSev(n.rule, n.sev, file, c.ID(), field, "%s version %s (contract %s) has no %s", r, t.version, t.contract, n.path)
			case prop != nil && prop.Type != "" && !slices.Contains(n.types, prop.Type):
				l.addSev(n.rule, n.sev, file, c.ID(), field, "%s version %s: %s is %s, want %s", r, t.version, n.path, prop.Type, strings.Join(n.types, " or "))
			}
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func needs(r role, contract string) []schemaNeed {
	readiness := schemaNeed{RuleReady, Error, "status.initialization.provisioned", []string{"boolean"}}
	if contract == "v1beta1" {
		readiness = schemaNeed{RuleReady, Error, "status.ready", []string{"boolean"}}
	}
	switch r {
	case roleInfraCluster:
		sev := Warning
		if contract == "v1beta1" {
			sev = Error
		}
		return []schemaNeed{
			{RuleEndpoint, sev, "spec.controlPlaneEndpoint.host", []string{"string"}},
			{RuleEndpoint, sev, "spec.controlPlaneEndpoint.port", []string{"integer"}},
			readiness,
		}
	case roleInfraMachine:
		return []schemaNeed{
			{RuleProviderID, Error, "spec.providerID", []string{"string"}},
			readiness,
		}
	case roleInfraMachinePool:
		out := []schemaNeed{
			{RuleMachinePool, Error, "spec.providerIDList", []string{"array"}},
			{RuleMachinePool, Error, "status.replicas", []string{"integer"}},
			{RuleReady, Error, "status.ready", []string{"boolean"}},
		}
		if contract != "v1beta1" {
			out = append(out, schemaNeed{RuleReady, Warning, "status.initialization.provisioned", []string{"boolean"}})
		}
		return out
	}
	return nil
}

// schemaField finds a property. Below an object that preserves unknown
// fields any path is found, with a nil schema.
func schemaField(s *apiextensionsv1.JSONSchemaProps, path []string) (*apiextensionsv1.JSONSchemaProps, bool) {
	for _, p := range path {
		prop, ok := s.Properties[p]
		if !ok {
			if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
				return nil, true
			}
			return nil, false
		}
		s = &prop
	}
	return s, true
}
