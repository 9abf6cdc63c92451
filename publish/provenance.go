package publish

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	provenancev1 "github.com/in-toto/attestation/go/predicates/provenance/v1"
	intotov1 "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/capirepo/capirepo/release"
)

// ProvenanceFile is the asset that holds the release's provenance.
const ProvenanceFile = release.ProvenanceFile

// AddProvenance returns files with ProvenanceFile naming those of them that
// are not attached (the release files and checksums.txt), unless files hold
// one already: a signed release carries the provenance it was signed with.
func AddProvenance(files []release.File, src ProvenanceSource) ([]release.File, error) {
	if slices.ContainsFunc(files, func(f release.File) bool { return f.Name == ProvenanceFile }) {
		return files, nil
	}
	listed := slices.DeleteFunc(slices.Clone(files), func(f release.File) bool { return release.IsAttached(f.Name) })
	pf, err := Provenance(listed, src)
	if err != nil {
		return nil, err
	}
	return append(slices.Clone(files), pf), nil
}

// WithoutProvenance returns files without the provenance and its bundle.
func WithoutProvenance(files []release.File) []release.File {
	return slices.DeleteFunc(files, func(f release.File) bool {
		return f.Name == ProvenanceFile || f.Name == ProvenanceFile+release.BundleSuffix
	})
}

// Provenance identifiers. The build type names what capirepo does (render
// the provider's config with kustomize, write the clusterctl files); the
// builder is capirepo itself, not the CI platform that ran it: GitHub's
// artifact attestations (actions/attest) sign for the platform.
const (
	ProvenanceBuildType = "https://github.com/capirepo/capirepo/blob/main/docs/adoption.md#provenance"
	ProvenanceBuilderID = "https://github.com/capirepo/capirepo"
)

// ProvenanceSource says what a release was published from, for the
// provenance's external parameters.
type ProvenanceSource struct {
	// Repository is the URL of the provider's repository.
	Repository string
	// Version is the release's version (the tag).
	Version string
	// Providers are the labels of the providers the files are of, in the
	// external parameters when given (what verify --signatures checks a
	// folder's label against); the publishers' unsigned provenance names
	// none.
	Providers []string
}

// Provenance returns an in-toto statement (v1) with an SLSA provenance v1
// predicate whose subjects are every file with its sha256. The bytes depend
// only on the files and the source, so publishing the same release again
// gives the same asset.
func Provenance(files []release.File, src ProvenanceSource) (release.File, error) {
	st := &intotov1.Statement{Type: intotov1.StatementTypeUri, PredicateType: "https://slsa.dev/provenance/v1"}
	for _, f := range files {
		st.Subject = append(st.Subject, &intotov1.ResourceDescriptor{Name: f.Name, Digest: map[string]string{"sha256": f.SHA256()}})
	}
	ext := map[string]any{"repository": src.Repository, "version": src.Version}
	if len(src.Providers) > 0 {
		labels := make([]any, len(src.Providers))
		for i, l := range src.Providers {
			labels[i] = l
		}
		ext["providers"] = labels
	}
	params, err := structpb.NewStruct(ext)
	if err != nil {
		return release.File{}, err
	}
	pred := &provenancev1.Provenance{
		BuildDefinition: &provenancev1.BuildDefinition{BuildType: ProvenanceBuildType, ExternalParameters: params},
		RunDetails:      &provenancev1.RunDetails{Builder: &provenancev1.Builder{Id: ProvenanceBuilderID}},
	}
	if err := pred.Validate(); err != nil {
		return release.File{}, fmt.Errorf("provenance: %w", err)
	}
	pj, err := protojson.Marshal(pred)
	if err != nil {
		return release.File{}, err
	}
	st.Predicate = &structpb.Struct{}
	if err := protojson.Unmarshal(pj, st.Predicate); err != nil {
		return release.File{}, err
	}
	if err := st.Validate(); err != nil {
		return release.File{}, fmt.Errorf("provenance: %w", err)
	}
	raw, err := protojson.Marshal(st)
	if err != nil {
		return release.File{}, err
	}
	// protojson varies its whitespace on purpose; indent it the same way
	// every time so equal statements are equal bytes.
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return release.File{}, err
	}
	out.WriteByte('\n')
	return release.File{Name: ProvenanceFile, Data: out.Bytes()}, nil
}

// ProvenanceStatement is what capirepo reads back of a provenance: the
// subjects, and the version and providers of its external parameters
// (those Provenance writes).
type ProvenanceStatement struct {
	// Subjects are the files the statement names, in its order.
	Subjects []ProvenanceSubject
	// Version and Repository are nil when the statement names none.
	Version, Repository *string
	Providers           []string
}

// ProvenanceSubject is one file a provenance names ("" for what it lacks).
type ProvenanceSubject struct {
	Name, SHA256 string
}

// ReadProvenance reads an in-toto statement as Provenance writes it; an
// error only when data is not JSON of that shape.
func ReadProvenance(data []byte) (ProvenanceStatement, error) {
	var st struct {
		Subject []struct {
			Name   string            `json:"name"`
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
		Predicate struct {
			BuildDefinition struct {
				ExternalParameters struct {
					Version    *string  `json:"version"`
					Repository *string  `json:"repository"`
					Providers  []string `json:"providers"`
				} `json:"externalParameters"`
			} `json:"buildDefinition"`
		} `json:"predicate"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return ProvenanceStatement{}, err
	}
	ext := st.Predicate.BuildDefinition.ExternalParameters
	out := ProvenanceStatement{Version: ext.Version, Repository: ext.Repository, Providers: ext.Providers}
	for _, s := range st.Subject {
		out.Subjects = append(out.Subjects, ProvenanceSubject{Name: s.Name, SHA256: s.Digest["sha256"]})
	}
	return out, nil
}
