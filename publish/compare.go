package publish

import (
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
// same size without a digest is hashed with hash (usually a download); a
// different size needs no download to be known different.
func Compare(ctx context.Context, want []release.File, have map[string]Remote,
	hash func(ctx context.Context, name string) (string, error)) (Diff, error) {
	var d Diff
	for _, f := range want {
		r, ok := have[f.Name]
		switch {
		case !ok:
			d.Missing = append(d.Missing, f)
			continue
		case r.Size != int64(len(f.Data)):
			d.Changed = append(d.Changed, f)
			continue
		}
		sum := r.SHA256
		if sum == "" {
			if hash == nil {
				return Diff{}, fmt.Errorf("%s: the target reports no sha256 and cannot be downloaded to compare", f.Name)
			}
			var err error
			if sum, err = hash(ctx, f.Name); err != nil {
				return Diff{}, fmt.Errorf("download %s to compare it: %w", f.Name, err)
			}
		}
		if sum == f.SHA256() {
			d.Same = append(d.Same, f)
		} else {
			d.Changed = append(d.Changed, f)
		}
	}
	return d, nil
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
