package diff

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/contract"
)

// identity warns about what clusterctl and users find a provider by: its
// label, components file, Namespace and manager Deployment (CAPI711).
func (c *collector) identity(o, n *side) {
	file := n.components()
	if o.p.Label() != n.p.Label() {
		c.add(contract.RuleUpgradeProvider, file, "", "", "the provider is %s in %s and %s in %s: clusterctl finds installed providers by label, so management clusters running %s do not see %s as its upgrade, and its objects are left behind",
			o.p.Label(), o.version, n.p.Label(), n.version, o.p.Label(), n.p.Label())
	}
	if o.p.ComponentsFile != n.p.ComponentsFile {
		c.add(contract.RuleUpgradeProvider, file, "", "", "the components file is %s in %s and %s in %s: provider URLs and clusterctl overrides that name %s no longer find it",
			o.p.ComponentsFile, o.version, n.p.ComponentsFile, n.version, o.p.ComponentsFile)
	}
	nsMoved := len(o.namespaces) == 1 && len(n.namespaces) == 1 && o.namespaces[0] != n.namespaces[0]
	if nsMoved {
		c.add(contract.RuleUpgradeProvider, file, "Namespace/"+n.namespaces[0], "metadata.name", "the provider's Namespace is %s in %s and %s in %s: management clusters installed with the default namespace keep %s's objects there, and clusterctl upgrade installs into the namespace the provider is installed in, not %s",
			o.namespaces[0], o.version, n.namespaces[0], n.version, o.version, n.namespaces[0])
	}
	if len(o.managers) > 0 && len(n.managers) > 0 {
		for _, m := range o.managers {
			if slices.Contains(n.managers, m) {
				continue
			}
			ns, name, _ := strings.Cut(m, "/")
			if nsMoved && ns == o.namespaces[0] && slices.Contains(n.managers, n.namespaces[0]+"/"+name) {
				continue // the Namespace's warning says it: one change, said once
			}
			now := strings.Join(n.managers, ", ")
			c.add(contract.RuleUpgradeProvider, file, "Deployment/"+ns+"/"+name, "metadata.name", "the manager Deployment %s of %s is %s in %s: monitoring, alerts and kubectl commands that name it no longer find it",
				m, o.version, now, n.version)
		}
	}
}

// variables warns about variables new's components need that old's did not
// (CAPI712): clusterctl upgrade fails until users set them.
func (c *collector) variables(o, n *side) {
	if n.vars == nil || o.vars == nil {
		return // CAPI002 reports variables that do not parse
	}
	var need []string
	for _, name := range slices.Sorted(maps.Keys(n.vars)) {
		if n.vars[name] != nil {
			continue
		}
		if def, had := o.vars[name]; !had || def != nil {
			need = append(need, "${"+name+"}")
			c.ch.Variables = append(c.ch.Variables, name)
		}
	}
	if len(need) > 0 {
		c.add(contract.RuleUpgradeVariable, n.components(), "", "", "%s's components need %s, which %s's did not: clusterctl upgrade fails with 'value for variables [...] is not set' until users set %s; give a default, or say so in the release notes",
			n.version, strings.Join(need, ", "), o.version, map[bool]string{true: "it", false: "them"}[len(need) == 1])
	}
}

// clusterClasses warns about ClusterClasses of the templates that drop a
// variable or change the kind of a template reference (CAPI713).
func (c *collector) clusterClasses(o, n *side) {
	for _, name := range slices.Sorted(maps.Keys(n.classes)) {
		nc := n.classes[name]
		oc, ok := o.classes[name]
		if !ok {
			continue
		}
		file, id := n.path(nc.file), nc.obj.ID()
		dropped := missing(classVariables(oc.obj.Object), classVariables(nc.obj.Object))
		if len(dropped) > 0 {
			c.add(contract.RuleUpgradeClusterClass, file, id, "spec.variables", "%s's ClusterClass %s has variable %s, which %s's drops: Clusters that set %s no longer validate against the new class",
				o.version, name, strings.Join(dropped, ", "), n.version, map[bool]string{true: "it", false: "them"}[len(dropped) == 1])
		}
		oldRefs, newRefs := templateRefs(oc.obj.Object), templateRefs(nc.obj.Object)
		for _, k := range slices.Sorted(maps.Keys(newRefs)) {
			was, ok := oldRefs[k]
			if !ok || was.group == newRefs[k].group && was.kind == newRefs[k].kind {
				continue
			}
			c.add(contract.RuleUpgradeClusterClass, file, id, newRefs[k].field, "the %s template of ClusterClass %s is a %s in %s and a %s in %s: core Cluster API refuses to update a ClusterClass whose template kinds change (ClusterClassesAreCompatible), so the class cannot be applied over %s's",
				k, name, was, o.version, newRefs[k], n.version, o.version)
		}
	}
}

// classVariables lists a ClusterClass's variable names.
func classVariables(obj map[string]any) []string {
	spec, _ := obj["spec"].(map[string]any)
	vs, _ := spec["variables"].([]any)
	var out []string
	for _, v := range vs {
		if m, ok := v.(map[string]any); ok {
			if name, ok := m["name"].(string); ok {
				out = append(out, name)
			}
		}
	}
	return out
}

type templateRef struct{ group, kind, field string }

func (r templateRef) String() string { return r.kind + " (" + r.group + ")" }

// templateRefs finds a ClusterClass's template references (a map with
// kind and apiVersion under ref: in v1beta1, templateRef: in v1beta2), keyed
// by where they are with the API versions' differences taken out:
// infrastructure, controlPlane, controlPlane.machineInfrastructure,
// workers.machineDeployments[<class>].bootstrap, and so on.
func templateRefs(obj map[string]any) map[string]templateRef {
	out := map[string]templateRef{}
	var walk func(v any, key, field string)
	walk = func(v any, key, field string) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				sub := x[k]
				if (k == "ref" || k == "templateRef") && isRef(sub) {
					m := sub.(map[string]any)
					group, _, _ := strings.Cut(fmt.Sprint(m["apiVersion"]), "/")
					if !strings.Contains(fmt.Sprint(m["apiVersion"]), "/") {
						group = ""
					}
					if g, ok := m["apiGroup"].(string); ok {
						group = g
					}
					out[key] = templateRef{group: group, kind: fmt.Sprint(m["kind"]), field: field + "." + k}
					continue
				}
				nk := key
				if k != "template" && k != "spec" {
					nk = strings.TrimPrefix(key+"."+k, ".")
				}
				walk(sub, nk, strings.TrimPrefix(field+"."+k, "."))
			}
		case []any:
			for i, item := range x {
				name := fmt.Sprint(i)
				if m, ok := item.(map[string]any); ok {
					if cl, ok := m["class"].(string); ok {
						name = cl
					}
				}
				walk(item, fmt.Sprintf("%s[%s]", key, name), fmt.Sprintf("%s[%d]", field, i))
			}
		}
	}
	walk(obj["spec"], "", "spec")
	return out
}

func isRef(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, kind := m["kind"].(string)
	_, av := m["apiVersion"].(string)
	_, ag := m["apiGroup"].(string)
	return kind && (av || ag)
}
