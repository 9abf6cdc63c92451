package contract

import (
	"slices"
	"strings"

	"github.com/capirepo/capirepo/internal/clusterctlvars"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

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
	m, problems := provider.CheckMetadata(f.Data)
	obj := "Metadata"
	for _, p := range problems {
		switch p.Kind {
		case provider.MetadataNotDecoded:
			l.add(RuleYAML, file, "", "", "%s", p.Message)
		case provider.MetadataInvalid:
			l.add(RuleMetadataInvalid, file, obj, p.Field, "%s", p.Message)
		case provider.MetadataNoKind:
			// clusterctl v1.11.0 refuses it, and users of every contract
			// capirepo releases for may run v1.11.0 (see the severity policy).
			l.add(RuleMetadataInvalid, file, obj, p.Field, "%s", p.Message)
		case provider.MetadataDuplicate:
			l.add(RuleSeriesDuplicate, file, obj, p.Field, "%s", p.Message)
		case provider.MetadataUnknownContract:
			l.add(RuleContractOld, file, obj, p.Field, "%s", p.Message)
		}
	}
	if m == nil || len(m.ReleaseSeries) == 0 {
		return
	}
	v.meta = m
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
	// Reported once the components are read: the fix names the contract
	// the tree uses, which its CRDs' labels may tell (lintUncovered).
	v.uncovered = file
}

// lintUncovered reports a release version no series covers (lintMetadata
// found it), suggesting the contract the tree itself uses.
func (l *linter) lintUncovered(v *view) {
	if v.uncovered == "" {
		return
	}
	sv, _ := provider.ParseVersion(v.version)
	l.add(RuleVersionCovered, v.uncovered, "Metadata", "releaseSeries", "no release series covers %s: add {major: %d, minor: %d, contract: %s}", v.version, sv.Major(), sv.Minor(), provider.SuggestContract(v.meta, v.labelled...))
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
