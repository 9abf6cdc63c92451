package install

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Cluster API's labels its MachineDeployment webhook sets.
const (
	clusterNameLabel           = "cluster.x-k8s.io/cluster-name"
	machineDeploymentNameLabel = "cluster.x-k8s.io/deployment-name"
)

// coreDefaults applies what Cluster API's own defaulting webhook does on
// create to a v1beta2 MachineDeployment, so that a scratch cluster holding
// cluster-api's CRDs alone (which runs none of its webhooks) judges what a
// real management cluster would store. The webhook
// (sigs.k8s.io/cluster-api core/webhooks/admission/machinedeployment.go,
// MachineDeployment.Default, v1.14) is importable, but with the
// controller-runtime webhook machinery and many new modules behind it; its
// few defaults that the CRD's schema requires are applied here instead:
// the cluster-name label on the object, and when spec.selector has neither
// matchLabels nor matchExpressions, the deployment-name label in the
// selector and the template's labels, then the cluster-name label in both.
// Defaults the schema does not require (replicas, the rollout strategy)
// are left to the webhook. It reports whether it changed obj.
func coreDefaults(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	if gvk.Group != capiGroup || gvk.Version != "v1beta2" || gvk.Kind != "MachineDeployment" {
		return false
	}
	clusterName, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterName")
	before := obj.DeepCopy()
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[clusterNameLabel] = clusterName
	obj.SetLabels(labels)
	match, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "selector", "matchLabels")
	exprs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "selector", "matchExpressions")
	tmpl, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "template", "metadata", "labels")
	if match == nil {
		match = map[string]string{}
	}
	if tmpl == nil {
		tmpl = map[string]string{}
	}
	if len(match) == 0 && len(exprs) == 0 {
		match[machineDeploymentNameLabel] = obj.GetName()
		tmpl[machineDeploymentNameLabel] = obj.GetName()
	}
	match[clusterNameLabel] = clusterName
	tmpl[clusterNameLabel] = clusterName
	_ = unstructured.SetNestedStringMap(obj.Object, match, "spec", "selector", "matchLabels")
	_ = unstructured.SetNestedStringMap(obj.Object, tmpl, "spec", "template", "metadata", "labels")
	return !equality.Semantic.DeepEqual(before.Object, obj.Object)
}

// capiGroup is Cluster API's group.
const capiGroup = "cluster.x-k8s.io"
