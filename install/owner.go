package install

import (
	"context"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
)

// Cluster API's own providers, by the kinds their API packages register.
var coreKinds = sync.OnceValue(func() map[schema.GroupKind]string {
	out := map[schema.GroupKind]string{}
	for label, adds := range map[string][]func(*runtime.Scheme) error{
		"cluster-api":           {clusterv1.AddToScheme, addonsv1.AddToScheme, ipamv1.AddToScheme, runtimev1.AddToScheme},
		"bootstrap-kubeadm":     {bootstrapv1.AddToScheme},
		"control-plane-kubeadm": {controlplanev1.AddToScheme},
	} {
		s := runtime.NewScheme()
		for _, add := range adds {
			if err := add(s); err != nil {
				panic(err) // the packages' own registration: cannot fail
			}
		}
		for gvk := range s.AllKnownTypes() {
			if !strings.HasSuffix(gvk.Kind, "List") {
				out[gvk.GroupKind()] = label
			}
		}
	}
	return out
})

// providerTypes are the provider types whose kinds live in a group, by the
// group's first part, as the contract names the groups.
var providerTypes = map[string]clusterctlv1.ProviderType{
	"infrastructure": clusterctlv1.InfrastructureProviderType,
	"bootstrap":      clusterctlv1.BootstrapProviderType,
	"controlplane":   clusterctlv1.ControlPlaneProviderType,
	"ipam":           clusterctlv1.IPAMProviderType,
	"addons":         clusterctlv1.AddonProviderType,
}

// knownProviders are the providers clusterctl knows by default, by type.
var knownProviders = sync.OnceValue(func() map[clusterctlv1.ProviderType][]config.Provider {
	cfg, err := config.New(context.Background(), "", config.InjectReader(config.NewMemoryReader()))
	if err != nil {
		return nil
	}
	list, err := cfg.Providers().List()
	if err != nil {
		return nil
	}
	out := map[clusterctlv1.ProviderType][]config.Provider{}
	for _, p := range list {
		out[p.Type()] = append(out[p.Type()], p)
	}
	return out
})

// owner names the provider whose CRDs serve a kind, as far as it can be
// told without them: Cluster API's own kinds by its API packages; another
// provider's by its group's type and the provider clusterctl knows whose
// name begins the kind's (DockerCluster: infrastructure-docker). "" when
// nothing tells.
func owner(gk schema.GroupKind) string {
	if label, ok := coreKinds()[gk]; ok {
		return label
	}
	first, rest, _ := strings.Cut(gk.Group, ".")
	t, ok := providerTypes[first]
	if !ok || rest != "cluster.x-k8s.io" {
		return ""
	}
	kind, best := strings.ToLower(gk.Kind), ""
	for _, p := range knownProviders()[t] {
		name := strings.ReplaceAll(p.Name(), "-", "")
		if strings.HasPrefix(kind, name) && len(p.Name()) > len(best) {
			best = p.Name()
		}
	}
	if best == "" {
		return ""
	}
	return clusterctlv1.ManifestLabel(best, t)
}
