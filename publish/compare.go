package publish

import (
	"bytes"
	"context"
	"fmt"
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
}

// Changes reports whether anything must be written.
func (d Diff) Changes() bool { return len(d.Missing)+len(d.Changed) > 0 }

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
		} else {
			d.Changed = append(d.Changed, f)
		}
	}
	return d, nil
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
