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

// ParseMetadata decodes a metadata.yaml and checks what clusterctl checks:
// apiVersion, kind and at least one complete release series. file names the
// file in errors. An empty kind is accepted, as clusterctl (v1.11.1 on)
// accepts it: several providers ship metadata.yaml without one.
func ParseMetadata(file string, data []byte) (*Metadata, error) {
	var m Metadata
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: not a Metadata document: %w", file, err)
	}
	if m.APIVersion != MetadataAPIVersion {
		return nil, fmt.Errorf("%s: Metadata field apiVersion is %q, want %q", file, m.APIVersion, MetadataAPIVersion)
	}
	if m.Kind != MetadataKind && m.Kind != "" {
		return nil, fmt.Errorf("%s: field kind is %q, want %q", file, m.Kind, MetadataKind)
	}
	if len(m.ReleaseSeries) == 0 {
		return nil, fmt.Errorf("%s: Metadata field releaseSeries is empty: add one entry per major.minor with its contract", file)
	}
	seen := map[[2]int32]int{}
	for i, rs := range m.ReleaseSeries {
		if rs.Contract == "" {
			return nil, fmt.Errorf("%s: Metadata field releaseSeries[%d].contract is empty (want one of %s)", file, i, strings.Join(Contracts, ", "))
		}
		// clusterctl's fields are int32, but no version number is negative.
		if rs.Major < 0 || rs.Minor < 0 {
			field, n := "major", rs.Major
			if rs.Major >= 0 {
				field, n = "minor", rs.Minor
			}
			return nil, fmt.Errorf("%s: Metadata field releaseSeries[%d].%s is %d: a version number cannot be negative; write the series' own number (for v1.14 releases: major: 1, minor: 14)", file, i, field, n)
		}
		if j, dup := seen[[2]int32{rs.Major, rs.Minor}]; dup {
			return nil, fmt.Errorf("%s: Metadata field releaseSeries[%d] repeats %d.%d of releaseSeries[%d]", file, i, rs.Major, rs.Minor, j)
		}
		seen[[2]int32{rs.Major, rs.Minor}] = i
	}
	return &m, nil
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
		file, v, v.Major(), v.Minor(), Contracts[0])
}
