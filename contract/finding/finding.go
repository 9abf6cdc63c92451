// Package finding holds the lint's finding type, so that the builder can
// report what it finds while rendering (a provider label it rewrote, a
// metadata.yaml the config names but the tree lacks) as lint findings,
// under the same waivers, without importing the rules.
package finding

import (
	"cmp"
	"fmt"
	"strings"
)

// Severity says how much a finding matters: error where clusterctl, the API
// server or a core Cluster API controller fails for users of the release;
// warning for contract SHOULDs and latent defects; info for a MAY.
type Severity string

// Severities, most severe first.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Finding is one rule broken at one place.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// File is the file's path in the release: <label>/<version>/<name> for
	// a release, the name as given for loose files.
	File string `json:"file"`
	// Object is Kind/name, or Kind/namespace/name; empty for a whole file.
	Object string `json:"object,omitempty"`
	// Field is a dotted path in the object, e.g. spec.versions[1].storage.
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	// Source leads back to the tree: the file the release file was copied
	// from, with the line of the object ("templates/cluster-template.yaml",
	// Line 12), or the kustomization it was rendered from (Line 0).
	Source string `json:"source,omitempty"`
	Line   int    `json:"line,omitempty"`
}

// Source is where a release file comes from in the provider tree.
type Source struct {
	// Path is slash-separated and relative to the provider tree: the file
	// (Copied) or the folder of the kustomization that rendered it.
	Path string
	// Copied says the release file is the source file as it is, so lines
	// are the same.
	Copied bool
	// Locate, when set, finds an object of a rendered file in the tree: by
	// object ID (Kind/name or Kind/namespace/name), the file and line of the
	// document it was rendered from; given the finding's field, the file
	// that set that field's value where the render knows it (a container's
	// image: the patch, the images: entry or the config key that set it).
	// It is called only for objects with a finding, so a build without
	// findings does not pay for it.
	Locate func(object, field string) (Location, bool)
}

// Location is a line of a file of the provider tree.
type Location struct {
	Path string
	Line int
}

// String renders the finding on one line: file: object: field: message [rule].
func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(f.File)
	if f.Object != "" {
		b.WriteString(": " + f.Object)
	}
	if f.Field != "" {
		b.WriteString(": " + f.Field)
	}
	fmt.Fprintf(&b, ": %s [%s %s]", f.Message, f.Rule, f.Severity)
	return b.String()
}

// Compare orders findings by file, object, field, rule and message: the
// order of every report.
func Compare(a, b Finding) int {
	return cmp.Or(
		strings.Compare(a.File, b.File),
		strings.Compare(a.Object, b.Object),
		strings.Compare(a.Field, b.Field),
		strings.Compare(a.Rule, b.Rule),
		strings.Compare(a.Message, b.Message),
	)
}
