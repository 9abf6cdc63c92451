package publish

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/capirepo/capirepo/release"
)

// Publisher publishes one built release to one target. Publishing the same
// release again is a no-op that uploads nothing; a re-run after a failure
// finishes the job.
type Publisher interface {
	Publish(ctx context.Context, rel *release.Release) (*Summary, error)
}

// Summary says what a Publish did and where clusterctl finds the result.
type Summary struct {
	// Kind is the kind of target: "github", "gitlab", "local", "oci",
	// "configmap" (or "overrides" and "dev" for the local folders clusterctl
	// reads apart from provider URLs).
	Kind string `json:"target"`
	// URL is the release page, package or folder that was written.
	URL     string `json:"url"`
	Version string `json:"version"`
	// Draft is true when the release was left unpublished on purpose.
	Draft bool `json:"draft,omitempty"`
	// Uploaded, Skipped and Replaced list asset names: new, already there
	// with the same bytes, and overwritten with --replace.
	Uploaded      []string `json:"uploaded"`
	Skipped       []string `json:"skipped"`
	Replaced      []string `json:"replaced"`
	BytesUploaded int64    `json:"bytesUploaded"`
	// Providers holds the URL to give clusterctl for each provider (for oci:
	// the reference cluster-api-operator's fetchConfig.oci takes).
	Providers []ProviderURL `json:"providers"`
	// Digests maps a provider URL to the OCI manifest digest behind it (oci
	// only), for pinning with tools other than the operator, which takes tags only.
	Digests map[string]string `json:"digests,omitempty"`
	// Warnings are findings that did not stop the publish.
	Warnings []string `json:"warnings,omitempty"`
	// ConfigFile is the file the clusterctl config of Providers was written
	// to (--config-out; NextSteps), which is then not printed.
	ConfigFile string `json:"configFile,omitempty"`
	// Next says what a maintainer does next (NextSteps), for a publish
	// command; a release gathers these in its own summary.
	Next []string `json:"next,omitempty"`
	// Logged says the publisher wrote each upload to its Progress as it
	// made it, so a caller need not list them again.
	Logged bool `json:"-"`
}

// ProviderURL is the clusterctl provider URL of one published provider,
// as it goes into clusterctl.yaml's providers list.
type ProviderURL struct {
	Name string `json:"name"`
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Verb says what publishing did with a new file: "added" to a version
// that already held files (a signature, provenance or SBOM made after
// publishing: no --replace needed), else "written" into a folder (local,
// overrides, dev) or "uploaded" to a server.
func (s *Summary) Verb() string {
	if len(s.Uploaded) > 0 && len(s.Skipped)+len(s.Replaced) > 0 {
		return "added"
	}
	switch s.Kind {
	case "local", "overrides", "dev":
		return "written"
	}
	return "uploaded"
}

// WriteText writes the summary for people; files added to a version
// that already held files, and files replaced, are named.
func (s *Summary) WriteText(w io.Writer) error {
	state := "published"
	if s.Draft {
		state = "draft (not visible to clusterctl until published)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s: %s\n", s.Kind, s.Version, state, s.URL)
	if len(s.Uploaded)+len(s.Replaced) == 0 && len(s.Skipped) > 0 {
		fmt.Fprintf(&b, "assets: nothing to do: all %d already there with identical bytes\n", len(s.Skipped))
	} else {
		fmt.Fprintf(&b, "assets: %d %s (%d bytes), %d skipped (unchanged), %d replaced\n",
			len(s.Uploaded), s.Verb(), s.BytesUploaded, len(s.Skipped), len(s.Replaced))
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return err
	}
	return s.WriteDetails(w)
}

// WriteDetails prints what the summary's first two lines (WriteText) do
// not: the files added and replaced by name, where clusterctl or the
// operator reads each provider, and the warnings. A release run prints
// these under its step table, which already says the counts and the URL.
func (s *Summary) WriteDetails(w io.Writer) error {
	var b strings.Builder
	if s.Verb() == "added" {
		fmt.Fprintf(&b, "added: %s\n", strings.Join(s.Uploaded, ", "))
	}
	if len(s.Replaced) > 0 {
		fmt.Fprintf(&b, "replaced: %s\n", strings.Join(s.Replaced, ", "))
	}
	for _, p := range s.Providers {
		if d := s.Digests[p.URL]; d != "" {
			fmt.Fprintf(&b, "operator fetchConfig.oci for %s (%s): %s  (digest %s)\n", p.Name, p.Type, p.URL, d)
			continue
		}
		fmt.Fprintf(&b, "clusterctl provider %s (%s): %s\n", p.Name, p.Type, p.URL)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
