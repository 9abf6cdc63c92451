package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/capirepo/capirepo/publish/operator"
	"github.com/capirepo/capirepo/release"
)

// Target is one place releases are published to and read from: a GitHub
// repository's releases, a GitLab project's generic packages, a local
// folder tree, an OCI registry, a file of ConfigMaps. Each backend under
// publish/ is one Target type; publish/targets makes them from URLs.
type Target interface {
	Publisher
	Source
	// Clusterctl says whether and how clusterctl reads the target.
	Clusterctl() Reach
}

// Reach says who reads a target: clusterctl through a provider URL, or
// another reader by the rules the target's Source follows.
type Reach struct {
	// ProviderURL is the URL a clusterctl config takes for one provider
	// version at the target (a provider's providers: entry); nil when
	// clusterctl cannot read the target.
	ProviderURL func(ref Ref) string
	// Why says why clusterctl cannot read the target, when ProviderURL is nil.
	Why string
	// Reader names who reads the target instead of clusterctl, by the rules
	// its Source follows (cluster-api-operator for OCI artifacts and
	// ConfigMaps), so reading it back through the Source checks what that
	// reader gets; "" when nobody does.
	Reader string
	// Overrides says the target is clusterctl's overrides folder: clusterctl
	// reads its files in place of each provider version's own, finding the
	// provider by its usual URL, so no providers: entry names the target.
	Overrides bool
}

// The optional abilities of a target are the one-method interfaces below:
// a caller asks a Target for one with a type check, never for a backend's
// concrete type nor by the scheme of its URL. Each backend asserts the ones
// it has (var _ publish.Signable = (*Target)(nil)).

// Signable is a target whose published artifacts are signed where they are
// (an OCI registry: a signature referrer of each artifact's digest, as
// cosign sign writes it) instead of by bundles published beside the files.
type Signable interface {
	// Published returns the artifacts a summary of this target's Publish
	// names, by digest, and the registry options (credentials, transport)
	// that reach them.
	Published(ctx context.Context, sum *Summary) ([]name.Digest, []remote.Option, error)
}

// Operator is a target cluster-api-operator installs from (an OCI registry
// in the operator's layout): it makes the operator's Provider resources
// that install a release from it.
type Operator interface {
	// Resources are the Provider resources that install rel from the
	// target, in namespace (each provider's own when ""); a
	// *NotInstallable error when the operator cannot read what the target
	// holds.
	Resources(rel *release.Release, namespace string) ([]operator.Resource, error)
}

// NotInstallable is what an Operator's Resources returns when its reader
// cannot install from what the target holds (OCI artifacts in the
// proposal's layout, which cluster-api-operator never unpacks): Why says
// so, in place of resources.
type NotInstallable struct{ Why string }

func (e *NotInstallable) Error() string { return e.Why }

// Drafting is a target that may leave what it publishes a draft, which no
// reader sees until a person publishes it (a GitHub release).
type Drafting interface {
	// Draft says whether Publish leaves the release a draft.
	Draft() bool
}

// Planner is a target that says, before anything is written, which files
// its Publish writes for a release, as its Summary names them (a dry run's
// count); the files it adds itself (an unsigned provenance) included.
type Planner interface {
	Planned(rel *release.Release) ([]string, error)
}

// Checker is a target that says, without writing anything, whether its
// Publish would refuse a release: a version it holds with other files
// (without Replace), an immutable release that differs. A run that
// publishes to several targets asks each before it writes to the first, so
// one that would refuse stops the run before any target is written.
type Checker interface {
	Check(ctx context.Context, rel *release.Release) error
}

// Refusal is the error of a target that will not take a release as it is:
// a version it holds with other files (without Replace), an immutable
// release that differs. Check returns it, and Publish before it writes
// anything; any other error of theirs is a failure to find out.
type Refusal struct{ Err error }

func (e *Refusal) Error() string { return e.Err.Error() }
func (e *Refusal) Unwrap() error { return e.Err }

// Noted is a target whose release carries notes people read before they
// upgrade (a GitHub release, a GitLab Release).
type Noted interface {
	// AddNotes appends a Markdown section to the notes its next Publish
	// writes, after the maintainer's and generated ones, and says whether
	// the target writes notes at all (a GitLab target without a Release
	// does not).
	AddNotes(section string) bool
}

// AppendNotes is release notes with section after them, a blank line
// between (Noted targets join what they are given so).
func AppendNotes(notes, section string) string {
	if notes == "" {
		return section
	}
	return strings.TrimRight(notes, "\n") + "\n\n" + section
}

// Flat is implemented by a target that holds one flat set of files per
// version for all the providers of a release (a GitHub release per tag):
// upstream providers cannot stand side by side in it, so mirror refuses it.
// Flat says so in a sentence.
type Flat interface {
	Flat() string
}

// UsageError is an error in how a target was named, configured or given
// its credentials: the caller's to fix, not a failure of the target
// (capirepo exits 2).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef makes a UsageError.
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// IsUsage says whether err is, or wraps, a UsageError.
func IsUsage(err error) bool {
	var ue UsageError
	return errors.As(err, &ue)
}
