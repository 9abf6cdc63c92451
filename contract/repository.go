package contract

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/internal/clusterctlvars"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// knownContracts are every contract version Cluster API has had; only
// provider.Contracts are accepted for a current release.
var knownContracts = []string{"v1alpha1", "v1alpha2", "v1alpha3", "v1alpha4", "v1beta1", "v1beta2"}

// getVariables finds ${VAR}s exactly as clusterctl does (its parser,
// without its whole-file regular expression).
func getVariables(data []byte) ([]string, error) {
	return clusterctlvars.Names(data)
}

func (l *linter) lintMetadata(v *view, f *release.File) {
	if v.components != "" && v.id != nil {
		if want := v.id.DefaultComponentsFile(); v.components != want {
			l.add(RuleComponentsName, v.path(v.components), "", "", "components file of %s is named %s; the clusterctl contract recommends %s", v.label, v.components, want)
		}
	}
	if f == nil {
		if v.complete {
			l.add(RuleMetadataMissing, v.path(provider.MetadataFile), "", "", "%s has no %s: clusterctl cannot map version %s to a contract", v.label, provider.MetadataFile, v.version)
		}
		return
	}
	file := v.path(f.Name)
	var m provider.Metadata
	if err := yaml.Unmarshal(f.Data, &m); err != nil {
		l.add(RuleYAML, file, "", "", "not a Metadata document: %v", err)
		return
	}
	obj := "Metadata"
	if m.APIVersion != provider.MetadataAPIVersion {
		l.add(RuleMetadataInvalid, file, obj, "apiVersion", "apiVersion is %q; clusterctl accepts only %q", m.APIVersion, provider.MetadataAPIVersion)
	}
	switch m.Kind {
	case provider.MetadataKind:
	case "":
		// clusterctl v1.11.0 refused it; v1.11.1 on accept it on purpose.
		l.addSev(RuleMetadataInvalid, Warning, file, obj, "kind", "no kind: clusterctl v1.11.1 and later accept it, v1.11.0 refuses it; add kind: %s", provider.MetadataKind)
	default:
		l.add(RuleMetadataInvalid, file, obj, "kind", "kind is %q; clusterctl refuses any kind but %q (or none)", m.Kind, provider.MetadataKind)
	}
	if len(m.ReleaseSeries) == 0 {
		l.add(RuleMetadataInvalid, file, obj, "releaseSeries", "releaseSeries is empty: add one entry per major.minor with its contract")
		return
	}
	seen := map[[2]int32]int{}
	for i, rs := range m.ReleaseSeries {
		field := idx("releaseSeries", i)
		if j, dup := seen[[2]int32{rs.Major, rs.Minor}]; dup {
			l.add(RuleSeriesDuplicate, file, obj, field, "release series %d.%d is listed again (first at releaseSeries[%d])", rs.Major, rs.Minor, j)
		} else {
			seen[[2]int32{rs.Major, rs.Minor}] = i
		}
		switch {
		case rs.Contract == "":
			l.add(RuleMetadataInvalid, file, obj, field+".contract", "release series %d.%d has no contract", rs.Major, rs.Minor)
		case !slices.Contains(knownContracts, rs.Contract):
			l.add(RuleContractOld, file, obj, field+".contract", "release series %d.%d names contract %q, which is no Cluster API contract version (%s)", rs.Major, rs.Minor, rs.Contract, strings.Join(knownContracts, ", "))
		}
	}
	v.meta = &m
	if v.version == "" {
		return
	}
	sv, err := provider.ParseVersion(v.version)
	if err != nil {
		return
	}
	for i, rs := range m.ReleaseSeries {
		if uint64(rs.Major) == sv.Major() && uint64(rs.Minor) == sv.Minor() {
			if !slices.Contains(provider.Contracts, rs.Contract) {
				l.add(RuleContractUnknown, file, obj, idx("releaseSeries", i)+".contract", "release series %d.%d covering %s has contract %q; clusterctl accepts only %s", rs.Major, rs.Minor, v.version, rs.Contract, strings.Join(provider.Contracts, ", "))
			}
			return
		}
	}
	l.add(RuleVersionCovered, file, obj, "releaseSeries", "no release series covers %s: add {major: %d, minor: %d, contract: %s}", v.version, sv.Major(), sv.Minor(), provider.Contracts[0])
}

// seriesContract returns the contract metadata.yaml gives the release version.
func (v *view) seriesContract() string {
	if v.meta == nil || v.version == "" {
		return ""
	}
	sv, err := provider.ParseVersion(v.version)
	if err != nil {
		return ""
	}
	for _, rs := range v.meta.ReleaseSeries {
		if uint64(rs.Major) == sv.Major() && uint64(rs.Minor) == sv.Minor() {
			return rs.Contract
		}
	}
	return ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
