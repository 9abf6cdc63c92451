package contract

import (
	"slices"
	"strings"
)

const aggregateLabel = "cluster.x-k8s.io/aggregate-to-manager"

// managerVerbs are what core Cluster API needs on a contract kind: read,
// set owner references and labels, and create from templates.
var managerVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// coreGranted says whether core Cluster API's own manager role covers the group.
func coreGranted(group string) bool {
	return group == "cluster.x-k8s.io" || strings.HasSuffix(group, ".cluster.x-k8s.io")
}

func (l *linter) lintAggregation(file string, objs []*object, crds []*crdObject, kinds map[*crdObject]kindRole) {
	type rule struct{ groups, resources, verbs []string }
	var rules []rule
	for _, o := range objs {
		if !o.is("rbac.authorization.k8s.io", "ClusterRole") || o.labels()[aggregateLabel] != "true" {
			continue
		}
		for _, r := range getSlice(o.m, "rules") {
			rules = append(rules, rule{stringList(get(r, "apiGroups")), stringList(get(r, "resources")), stringList(get(r, "verbs"))})
		}
	}
	for _, c := range crds {
		group := c.crd.Spec.Group
		if kinds[c].role == roleNone || coreGranted(group) {
			continue
		}
		res := c.crd.Spec.Names.Plural
		granted := map[string]bool{}
		for _, r := range rules {
			if (slices.Contains(r.groups, group) || slices.Contains(r.groups, "*")) &&
				(slices.Contains(r.resources, res) || slices.Contains(r.resources, "*")) {
				for _, v := range r.verbs {
					granted[v] = true
				}
			}
		}
		if granted["*"] {
			continue
		}
		var missing []string
		for _, v := range managerVerbs {
			if !granted[v] {
				missing = append(missing, v)
			}
		}
		if len(missing) > 0 {
			l.add(RuleAggregatedRole, file, c.ID(), "spec.group", "group %s is outside *.cluster.x-k8s.io and no ClusterRole labelled %s: \"true\" grants %s on %s",
				group, aggregateLabel, strings.Join(missing, ", "), res)
		}
	}
}
