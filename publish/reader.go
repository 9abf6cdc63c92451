package publish

import (
	"context"
	"errors"

	"github.com/capirepo/capirepo/release"
)

// Reader reads back what a target holds: the other half of Publisher (the
// shape of oras-go's ReadOnlyTarget and clusterctl's Repository). mirror reads
// from one target and publishes to another; verify reads any target the same
// way. Every target capirepo publishes to (local, github, gitlab, oci) has one.
type Reader interface {
	// Versions lists the versions of a provider (by label) that the target
	// holds as published releases (drafts and bare tags left out), in no
	// particular order, each with its leading v.
	Versions(ctx context.Context, label string) ([]string, error)
	// Read returns one provider version as published: metadata.yaml, the
	// components file (Provider.ComponentsFile names it), every
	// cluster-template*.yaml and clusterclass-*.yaml the target lists;
	// checksums.txt and other assets left out. A version the target does not
	// hold is an error for which errors.Is(err, ErrNotFound) is true.
	Read(ctx context.Context, label, version string) (*release.Provider, error)
}

// ErrNotFound is the error a Reader wraps when a provider or version is not there.
var ErrNotFound = errors.New("not found")

// Lister is a Reader that can also tell which files Read would return, with
// their size and sha256 (SHA256 "" when the target does not report it),
// without downloading them: mirror compares two listings to skip a version
// both hold already.
type Lister interface {
	Reader
	List(ctx context.Context, label, version string) (map[string]Remote, error)
}
