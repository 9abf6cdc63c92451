package diff

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/version"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/provider"
)

// series checks that new's metadata.yaml covers new's version, old's
// version and every series old's lists up to old's version: clusterctl plans
// an upgrade from the newest release's metadata.yaml (upgrader_info.go).
func (c *collector) series(o, n *side) {
	file := n.path(provider.MetadataFile)
	if n.meta == nil {
		c.add(contract.RuleUpgradeSeries, file, "Metadata", "", "%s's metadata.yaml is not usable (%v): once %s is published, clusterctl cannot plan an upgrade of %s at all", n.version, n.metaErr, n.version, n.p.Label())
		return
	}
	if n.sv != nil && n.meta.GetReleaseSeriesForVersion(n.sv) == nil {
		c.add(contract.RuleUpgradeSeries, file, "Metadata", "releaseSeries", "no release series covers %s itself: once it is published, every clusterctl upgrade of %s fails ('does not match any release series'); add {major: %d, minor: %d, contract: %s}",
			n.version, n.p.Label(), n.sv.Major(), n.sv.Minor(), provider.SuggestContract(n.meta, n.labelled()...))
	}
	if o.sv == nil {
		return
	}
	var missing []string
	if o.meta != nil {
		for _, rs := range sortedSeries(o.meta) {
			if !atOrBelow(rs, o.sv) || hasSeries(n.meta, rs.Major, rs.Minor) {
				continue
			}
			missing = append(missing, fmt.Sprintf("%d.%d", rs.Major, rs.Minor))
		}
	}
	if !hasSeries(n.meta, int32(o.sv.Major()), int32(o.sv.Minor())) && !slices.Contains(missing, fmt.Sprintf("%d.%d", o.sv.Major(), o.sv.Minor())) {
		missing = append(missing, fmt.Sprintf("%d.%d", o.sv.Major(), o.sv.Minor()))
	}
	if len(missing) > 0 {
		c.add(contract.RuleUpgradeSeries, file, "Metadata", "releaseSeries", "%s's metadata.yaml has no release series %s, which %s's lists: management clusters running a %s release cannot upgrade once %s is published ('invalid provider metadata: version ... does not match any release series'); keep every series, metadata.yaml is cumulative",
			n.version, strings.Join(missing, ", "), o.version, strings.Join(missing, " or "), n.version)
	}
}

// labelled returns the contracts the side's CRDs are labelled for
// (cluster.x-k8s.io/<contract>), for provider.SuggestContract.
func (s *side) labelled() []string {
	var out []string
	for _, name := range s.crdNames {
		for c := range contract.ContractLabels(s.crds[name]) {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

func sortedSeries(m *provider.Metadata) []clusterctlv1.ReleaseSeries {
	out := slices.Clone(m.ReleaseSeries)
	slices.SortFunc(out, func(a, b clusterctlv1.ReleaseSeries) int {
		if a.Major != b.Major {
			return int(a.Major - b.Major)
		}
		return int(a.Minor - b.Minor)
	})
	return out
}

// atOrBelow says whether a release series is v's or an older one.
func atOrBelow(rs clusterctlv1.ReleaseSeries, v *version.Version) bool {
	return uint(rs.Major) < v.Major() || (uint(rs.Major) == v.Major() && uint(rs.Minor) <= v.Minor())
}

func hasSeries(m *provider.Metadata, major, minor int32) bool {
	return slices.ContainsFunc(m.ReleaseSeries, func(rs clusterctlv1.ReleaseSeries) bool { return rs.Major == major && rs.Minor == minor })
}

// seriesContract is the contract m gives v's series, "" when none does.
func seriesContract(m *provider.Metadata, v *version.Version) string {
	if m == nil || v == nil {
		return ""
	}
	if rs := m.GetReleaseSeriesForVersion(v); rs != nil {
		return rs.Contract
	}
	return ""
}

// compatibleContracts is cluster-api's internal/contract.GetCompatibleVersions
// (v1.14), which its internal package keeps out of reach: a contract and
// those a management cluster of it still accepts.
func compatibleContracts(c string) sets.Set[string] {
	out := sets.New(c)
	if c == "v1beta2" {
		out.Insert("v1beta1")
	}
	return out
}

// contract checks new's contract: one clusterctl upgrades to, and a change
// from old's named.
func (c *collector) contract(o, n *side) {
	if n.meta == nil || n.sv == nil {
		return
	}
	file := n.path(provider.MetadataFile)
	nc := seriesContract(n.meta, n.sv)
	if nc == "" {
		return // series reports it
	}
	if !slices.Contains(provider.Contracts, nc) {
		c.add(contract.RuleUpgradeContract, file, "Metadata", "releaseSeries", "the release series of %s names contract %q: clusterctl v1.14 upgrades management clusters only to the %s contract (and accepts %s providers with it), so no management cluster can upgrade to %s",
			n.version, nc, provider.Contracts[0], strings.Join(provider.Contracts[1:], ", "), n.version)
		return
	}
	oc := seriesContract(o.meta, o.sv)
	if oc == "" {
		oc = seriesContract(n.meta, o.sv) // what clusterctl reads for the installed version
	}
	if oc != "" && !compatibleContracts(oc).Has(nc) {
		c.addSev(contract.RuleUpgradeContract, contract.Warning, file, "Metadata", "releaseSeries", "%s moves %s from contract %s to %s: a management cluster changes contract for all its providers at once, and clusterctl upgrade plan offers it only when every provider has a release for %s (upgrader.go drops a partial plan); name in the release notes the releases of the other providers that go with %s",
			n.version, n.p.Label(), oc, nc, nc, n.version)
	}
	if o.meta == nil || o.sv == nil {
		return
	}
	var changed []string
	for _, rs := range sortedSeries(o.meta) {
		if !atOrBelow(rs, o.sv) {
			continue
		}
		i := slices.IndexFunc(n.meta.ReleaseSeries, func(x clusterctlv1.ReleaseSeries) bool { return x.Major == rs.Major && x.Minor == rs.Minor })
		if i >= 0 && n.meta.ReleaseSeries[i].Contract != rs.Contract {
			changed = append(changed, fmt.Sprintf("%d.%d from %s to %s", rs.Major, rs.Minor, rs.Contract, n.meta.ReleaseSeries[i].Contract))
		}
	}
	if len(changed) > 0 {
		c.addSev(contract.RuleUpgradeContract, contract.Warning, file, "Metadata", "releaseSeries", "%s's metadata.yaml changes the contract of series %s: clusterctl takes the installed providers' contract from the newest metadata.yaml, so it misjudges what management clusters running those releases implement",
			n.version, strings.Join(changed, ", "))
	}
}

// skipLimited are the providers clusterctl upgrades by at most three minor
// versions at a time (upgrader.go doUpgrade).
func skipLimited(id provider.ID) bool {
	switch {
	case id.Type == clusterctlv1.CoreProviderType:
		return true
	case id.Type == clusterctlv1.BootstrapProviderType && id.Name == "kubeadm":
		return true
	case id.Type == clusterctlv1.ControlPlaneProviderType && id.Name == "kubeadm":
		return true
	}
	return false
}

// minVersionSkew is the version from which clusterctl limits skips.
var minVersionSkew = version.MustParseSemantic("v1.10.0")

// skip checks clusterctl's limit of three minor versions per upgrade of
// core Cluster API and the kubeadm providers.
func (c *collector) skip(o, n *side) {
	if !skipLimited(n.p.ID) || o.sv == nil || n.sv == nil || o.sv.LessThan(minVersionSkew) {
		return
	}
	if n.sv.Minor() > o.sv.Minor()+3 {
		c.add(contract.RuleUpgradeSkip, n.path(provider.MetadataFile), "", "", "%s to %s moves %d minor versions: clusterctl upgrades %s by at most 3 at a time ('upgrade for %s provider can't skip more than 3 versions'); upgrade to a v%d.%d release first",
			o.version, n.version, n.sv.Minor()-o.sv.Minor(), n.p.Label(), n.p.Label(), o.sv.Major(), o.sv.Minor()+3)
	}
}
