package publish

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/release"
)

// Remote is a file a target already holds under a name.
type Remote struct {
	Name string
	Size int64
	// SHA256 is the hex digest, "" when the target does not report one.
	SHA256 string
}

// Diff sorts a release's files by what the target holds.
type Diff struct {
	// Missing files are not there; Same are there with the same size and
	// sha256; Changed are there with other bytes.
	Missing, Same, Changed []release.File
	// Superseded names the Changed files that replace the target's without
	// --replace: an unsigned provenance superseded by a signed one naming
	// the same files (see supersedes).
	Superseded []string
}

// Changes reports whether anything must be written.
func (d Diff) Changes() bool { return len(d.Missing)+len(d.Changed) > 0 }

// NeedReplace are the Changed files that only --replace may write.
func (d Diff) NeedReplace() []release.File {
	return slices.DeleteFunc(slices.Clone(d.Changed), func(f release.File) bool { return slices.Contains(d.Superseded, f.Name) })
}

// Describe lists what differs, for error messages.
func (d Diff) Describe() string {
	var parts []string
	if len(d.Missing) > 0 {
		parts = append(parts, "missing "+FileNames(d.Missing))
	}
	if len(d.Changed) > 0 {
		parts = append(parts, "different "+FileNames(d.Changed))
	}
	return strings.Join(parts, "; ")
}

// FileNames lists the names of files, for messages.
func FileNames(files []release.File) string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Name
	}
	return strings.Join(out, ", ")
}

// Compare compares want with what the target holds. A remote file of the
// same size without a digest is downloaded with fetch and hashed; a
// different size needs no download to be known different. A Sigstore
// bundle that differs is downloaded too, and counts as the same when it
// signs the same content for the same signer (SameSignature): signing
// again makes new bytes for unchanged files.
func Compare(ctx context.Context, want []release.File, have map[string]Remote,
	fetch func(ctx context.Context, name string) ([]byte, error)) (Diff, error) {
	var d Diff
	for _, f := range want {
		r, ok := have[f.Name]
		if !ok {
			d.Missing = append(d.Missing, f)
			continue
		}
		same, err := sameFile(ctx, f, r, fetch)
		if err != nil {
			return Diff{}, err
		}
		if same {
			d.Same = append(d.Same, f)
			continue
		}
		d.Changed = append(d.Changed, f)
		if ok, err := supersedes(ctx, f, want, have, fetch); err != nil {
			return Diff{}, err
		} else if ok {
			d.Superseded = append(d.Superseded, f.Name)
		}
	}
	return d, nil
}

// supersedes says whether the release's provenance f may replace the
// target's without --replace: the target holds no bundle for its own (the
// unsigned provenance a publisher writes for an unsigned release), the
// release brings a bundle for f, and both name the same files with the
// same sha256. Signing a release after publishing it makes such a
// provenance (it also names the providers and the repository signing
// them): what a user checked against the old one does not change, and
// the bundles that come with it are added as any missing file is.
func supersedes(ctx context.Context, f release.File, want []release.File, have map[string]Remote,
	fetch func(ctx context.Context, name string) ([]byte, error)) (bool, error) {
	bundle := f.Name + release.BundleSuffix
	if f.Name != release.ProvenanceFile || fetch == nil {
		return false, nil
	}
	if _, signed := have[bundle]; signed || !slices.ContainsFunc(want, func(w release.File) bool { return w.Name == bundle }) {
		return false, nil
	}
	old, err := fetch(ctx, f.Name)
	if err != nil {
		return false, fmt.Errorf("download %s to compare it: %w", f.Name, err)
	}
	a, b := subjects(old), subjects(f.Data)
	return a != "" && a == b, nil
}

// subjects lists an in-toto statement's subjects as sorted "name sha256"
// lines; "" when data is not a statement with subjects.
func subjects(data []byte) string {
	st, err := ReadProvenance(data)
	if err != nil {
		return ""
	}
	var lines []string
	for _, s := range st.Subjects {
		if s.Name == "" || s.SHA256 == "" {
			return ""
		}
		lines = append(lines, s.Name+" "+s.SHA256)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func sameFile(ctx context.Context, f release.File, r Remote, fetch func(ctx context.Context, name string) ([]byte, error)) (bool, error) {
	sizeOK := r.Size == int64(len(f.Data))
	switch {
	case sizeOK && r.SHA256 == f.SHA256():
		return true, nil
	case !isBundle(f.Name) && (!sizeOK || r.SHA256 != ""):
		return false, nil // known different without a download
	case fetch == nil && r.SHA256 != "":
		return false, nil // a bundle that differs, and no way to read it
	case fetch == nil:
		return false, fmt.Errorf("%s: the target reports no sha256 and cannot be downloaded to compare", f.Name)
	}
	data, err := fetch(ctx, f.Name)
	if err != nil {
		return false, fmt.Errorf("download %s to compare it: %w", f.Name, err)
	}
	return bytes.Equal(data, f.Data) || isBundle(f.Name) && SameSignature(data, f.Data), nil
}

// ShortSum shortens a hex digest for messages.
func ShortSum(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	if sum == "" {
		return "(none)"
	}
	return sum
}
