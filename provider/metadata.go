package provider

import (
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/yaml"
)

// MetadataFile is the file name clusterctl reads next to the components file.
const MetadataFile = "metadata.yaml"

// MetadataAPIVersion and MetadataKind are the only ones clusterctl accepts.
const (
	MetadataAPIVersion = "clusterctl.cluster.x-k8s.io/v1alpha3"
	MetadataKind       = "Metadata"
)

// Contracts are the Cluster API contract versions clusterctl v1.14 accepts
// (internal/contract.Version and its compatible versions).
var Contracts = []string{"v1beta2", "v1beta1"}

// Metadata is clusterctl's own metadata type, so what we parse is what it parses.
type Metadata = clusterctlv1.Metadata

// KnownContracts are every contract version Cluster API has had; only
// Contracts are accepted for a current release, older series may keep theirs.
var KnownContracts = []string{"v1alpha1", "v1alpha2", "v1alpha3", "v1alpha4", "v1beta1", "v1beta2"}

// MetadataProblem is one mistake CheckMetadata finds in a metadata.yaml.
type MetadataProblem struct {
	Kind MetadataProblemKind
	// Field is the path of the field (apiVersion, releaseSeries[1].minor);
	// "" for the whole document.
	Field   string
	Message string
}

// MetadataProblemKind says what a problem is, for the rule that reports it.
type MetadataProblemKind int

// What a metadata.yaml problem is. Problems of the first three kinds make
// ParseMetadata fail; the others are warnings.
const (
	// MetadataNotDecoded: not a Metadata document at all.
	MetadataNotDecoded MetadataProblemKind = iota
	// MetadataInvalid: apiVersion or kind clusterctl refuses, no release
	// series, a series without a contract or with a negative number.
	MetadataInvalid
	// MetadataDuplicate: a major.minor listed twice.
	MetadataDuplicate
	// MetadataNoKind: no kind, which clusterctl v1.11.0 refuses and v1.11.1
	// on accept: an error of the lint (CAPI102), not of ParseMetadata.
	MetadataNoKind
	// MetadataUnknownContract: a contract that is no Cluster API contract
	// version.
	MetadataUnknownContract
)

// Fatal says whether the problem makes the file unusable.
func (k MetadataProblemKind) Fatal() bool { return k <= MetadataDuplicate }

// CheckMetadata decodes a metadata.yaml and lists every problem in it, in
// the order of the file: the one reading of metadata.yaml that build, lint,
// mirror and dev share (ParseMetadata for those that stop at the first
// fatal one, contract for findings). m is nil only when the file does not
// decode.
func CheckMetadata(data []byte) (m *Metadata, problems []MetadataProblem) {
	var md Metadata
	if err := yaml.Unmarshal(data, &md); err != nil {
		return nil, []MetadataProblem{{Kind: MetadataNotDecoded, Message: "not a Metadata document: " + err.Error()}}
	}
	add := func(k MetadataProblemKind, field, format string, args ...any) {
		problems = append(problems, MetadataProblem{Kind: k, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if md.APIVersion != MetadataAPIVersion {
		add(MetadataInvalid, "apiVersion", "apiVersion is %q; clusterctl accepts only %q", md.APIVersion, MetadataAPIVersion)
	}
	switch md.Kind {
	case MetadataKind:
	case "":
		add(MetadataNoKind, "kind", "no kind: clusterctl v1.11.0 refuses it ('invalid provider metadata'; v1.11.1 and later accept it again), and users of a v1beta1 or v1beta2 contract may run v1.11.0; add kind: %s (capirepo build adds it)", MetadataKind)
	default:
		add(MetadataInvalid, "kind", "kind is %q; clusterctl refuses any kind but %q (or none)", md.Kind, MetadataKind)
	}
	if len(md.ReleaseSeries) == 0 {
		add(MetadataInvalid, "releaseSeries", "releaseSeries is empty: add one entry per major.minor with its contract")
		return &md, problems
	}
	seen := map[[2]int32]int{}
	for i, rs := range md.ReleaseSeries {
		field := fmt.Sprintf("releaseSeries[%d]", i)
		// clusterctl's fields are int32, but no version number is negative
		// (clusterctl turns one into a huge unsigned number that matches no
		// version).
		for _, n := range []struct {
			name string
			v    int32
		}{{"major", rs.Major}, {"minor", rs.Minor}} {
			if n.v < 0 {
				add(MetadataInvalid, field+"."+n.name, "%s is %d: a version number cannot be negative; write the series' own number (for v1.14 releases: major: 1, minor: 14)", n.name, n.v)
			}
		}
		if j, dup := seen[[2]int32{rs.Major, rs.Minor}]; dup {
			add(MetadataDuplicate, field, "release series %d.%d is listed again (first at releaseSeries[%d])", rs.Major, rs.Minor, j)
		} else {
			seen[[2]int32{rs.Major, rs.Minor}] = i
		}
		switch {
		case rs.Contract == "":
			add(MetadataInvalid, field+".contract", "release series %d.%d has no contract (want one of %s)", rs.Major, rs.Minor, strings.Join(Contracts, ", "))
		case !slices.Contains(KnownContracts, rs.Contract):
			add(MetadataUnknownContract, field+".contract", "release series %d.%d names contract %q, which is no Cluster API contract version (%s)", rs.Major, rs.Minor, rs.Contract, strings.Join(KnownContracts, ", "))
		}
	}
	return &md, problems
}

// ParseMetadata decodes a metadata.yaml and checks what clusterctl checks:
// apiVersion, kind and at least one complete release series, each a
// version (no negative number) listed once. file names the file in errors.
// An empty kind is accepted, as clusterctl (v1.11.1 on) accepts it: several
// providers ship metadata.yaml without one.
func ParseMetadata(file string, data []byte) (*Metadata, error) {
	m, problems := CheckMetadata(data)
	for _, p := range problems {
		if !p.Kind.Fatal() {
			continue
		}
		if p.Field == "" {
			return nil, fmt.Errorf("%s: %s", file, p.Message)
		}
		return nil, fmt.Errorf("%s: Metadata field %s: %s", file, p.Field, p.Message)
	}
	return m, nil
}

// CheckCovers returns an error unless a release series of m covers v with a
// contract clusterctl accepts. The error says which lines to add.
func CheckCovers(file string, m *Metadata, v *semver.Version) error {
	for _, rs := range m.ReleaseSeries {
		if uint64(rs.Major) == v.Major() && uint64(rs.Minor) == v.Minor() {
			if !slices.Contains(Contracts, rs.Contract) {
				return fmt.Errorf("%s: release series %d.%d has contract %q; clusterctl accepts only %s",
					file, rs.Major, rs.Minor, rs.Contract, strings.Join(Contracts, ", "))
			}
			return nil
		}
	}
	return fmt.Errorf("%s: no release series covers version v%s; add to releaseSeries:\n  - major: %d\n    minor: %d\n    contract: %s",
		file, v, v.Major(), v.Minor(), SuggestContract(m))
}

// NewestSeries returns the release series of m with the highest
// major.minor, nil when m lists none.
func NewestSeries(m *Metadata) *clusterctlv1.ReleaseSeries {
	var newest *clusterctlv1.ReleaseSeries
	for i, rs := range m.ReleaseSeries {
		if newest == nil || rs.Major > newest.Major || (rs.Major == newest.Major && rs.Minor > newest.Minor) {
			newest = &m.ReleaseSeries[i]
		}
	}
	return newest
}

// SuggestContract is the contract to name in the release series a tree
// lacks for its version, the one answer every "add a release series" fix
// gives: the contract the tree itself uses, so that the fix does not move a
// tree to another contract behind its maintainer's back. That is the
// contract of its newest release series, when clusterctl accepts it; else
// the newest accepted contract its CRDs are labelled for (labelled: the
// <contract> of their cluster.x-k8s.io/<contract> labels); else the newest
// contract clusterctl accepts (a tree with neither).
func SuggestContract(m *Metadata, labelled ...string) string {
	if m != nil {
		if rs := NewestSeries(m); rs != nil && slices.Contains(Contracts, rs.Contract) {
			return rs.Contract
		}
	}
	for _, c := range Contracts {
		if slices.Contains(labelled, c) {
			return c
		}
	}
	return Contracts[0]
}
