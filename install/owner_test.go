package install

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestOwner names the provider whose CRDs serve a kind: Cluster API's own
// by its API packages, another by clusterctl's provider list.
func TestOwner(t *testing.T) {
	for _, c := range []struct {
		group, kind, want string
	}{
		{"cluster.x-k8s.io", "Cluster", "cluster-api"},
		{"cluster.x-k8s.io", "MachineDeployment", "cluster-api"},
		{"addons.cluster.x-k8s.io", "ClusterResourceSet", "cluster-api"},
		{"ipam.cluster.x-k8s.io", "IPAddressClaim", "cluster-api"},
		{"bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate", "bootstrap-kubeadm"},
		{"controlplane.cluster.x-k8s.io", "KubeadmControlPlane", "control-plane-kubeadm"},
		{"infrastructure.cluster.x-k8s.io", "DockerCluster", "infrastructure-docker"},
		{"infrastructure.cluster.x-k8s.io", "DockerMachinePoolTemplate", "infrastructure-docker"},
		{"infrastructure.cluster.x-k8s.io", "AWSMachineTemplate", "infrastructure-aws"},
		{"infrastructure.cluster.x-k8s.io", "VSphereMachineTemplate", "infrastructure-vsphere"},
		{"infrastructure.cluster.x-k8s.io", "InMemoryCluster", ""}, // a test provider clusterctl does not list
		{"bootstrap.cluster.x-k8s.io", "TalosConfigTemplate", "bootstrap-talos"},
		{"infrastructure.cluster.x-k8s.io", "ExampleCluster", ""},
		{"ipam.cluster.x-k8s.io", "InClusterIPPool", "ipam-in-cluster"},
		{"apps", "Deployment", ""},
		{"infrastructure.example.com", "DockerCluster", ""},
	} {
		if got := owner(schema.GroupKind{Group: c.group, Kind: c.kind}); got != c.want {
			t.Errorf("owner(%s %s) = %q, want %q", c.group, c.kind, got, c.want)
		}
	}
}
