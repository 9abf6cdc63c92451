package publish

import (
	"errors"
	"fmt"
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
