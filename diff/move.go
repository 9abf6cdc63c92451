package diff

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/capirepo/capirepo/contract"
)

// moveLabel warns when new drops the clusterctl move label old's CRD
// carried: clusterctl move stops taking that kind (an identity, and what
// hangs off it) with the clusters that use it, and nothing else says so.
// The lint's rule (CAPI316), which reports the label missing only where an
// InfraCluster field references the kind.
func (c *collector) moveLabel(o, n *side, id string, oc, nc *apiextensionsv1.CustomResourceDefinition) {
	if oc == nil || !contract.HasMoveLabel(oc) || contract.HasMoveLabel(nc) {
		return
	}
	had := ""
	for _, k := range contract.MoveLabels {
		if _, ok := oc.Labels[k]; ok {
			had = k
			break
		}
	}
	c.addSev(contract.RuleMoveLabel, contract.Warning, n.components(), id, "metadata.labels["+had+"]", "%s labels %s %s and %s drops it: clusterctl move no longer takes %s objects, and what hangs off them, with the clusters that use them; keep the label",
		o.version, nc.Spec.Names.Kind, had, n.version, nc.Spec.Names.Kind)
}
