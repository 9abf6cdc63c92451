package image

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Built is the manager image a build made.
type Built struct {
	// Tag is REPO:TAG, Digest the multi-platform index's digest.
	Tag       string   `json:"tag"`
	Digest    string   `json:"digest"`
	Platforms []string `json:"platforms"`
	Pushed    bool     `json:"pushed"`
	Layout    string   `json:"layout,omitempty"`
	// Components is the image reference the components YAML names (set by
	// the caller once the components are rendered).
	Components string `json:"components"`
	// Base is the base image by the digest it resolved to
	// (NAME@sha256:...), "" for none.
	Base string `json:"base,omitempty"`
}

// Repository is the image's repository: Tag without its tag.
func (b *Built) Repository() string {
	if i := strings.LastIndex(b.Tag, ":"); i > strings.LastIndex(b.Tag, "/") {
		return b.Tag[:i]
	}
	return b.Tag
}

// ManagerOptions say which manager image to make and where it goes.
type ManagerOptions struct {
	// Repo is the image's repository, Tag its tag there and in the layout.
	Repo, Tag string
	// Binaries holds one binary per platform, in index order.
	Binaries []Binary
	// Base is the base image; "" means DefaultBase, NoBase the bare binary
	// (with a warning to Log).
	Base string
	// Source, Version and Revision become the OCI labels.
	Source, Version, Revision string
	// Created is the commit date (RFC 3339, as builder.CommitInfo gives
	// it); "" means the Unix epoch.
	Created string
	// Layout, when set, is the folder the OCI image layout is written to;
	// Push pushes the index to Repo:Tag.
	Layout string
	Push   bool
	// Remote holds the registry options (auth, transport) for the base and
	// the push.
	Remote []remote.Option
	// Log hears what was made; nil discards it.
	Log io.Writer
}

// Manager makes the manager image of a release from its compiled binaries
// (Build), then writes its layout and pushes it as asked.
func Manager(ctx context.Context, o ManagerOptions) (*Built, error) {
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	created := time.Unix(0, 0)
	if o.Created != "" {
		if t, err := time.Parse(time.RFC3339, o.Created); err == nil {
			created = t
		}
	}
	out := &Built{Tag: o.Repo + ":" + o.Tag}
	for _, b := range o.Binaries {
		out.Platforms = append(out.Platforms, b.platform())
	}
	base := o.Base
	if base == "" {
		base = DefaultBase
	}
	if base == NoBase {
		fmt.Fprintf(log, "warning: %s\n", NoBaseWarning)
	}
	idx, err := Build(ctx, Options{Binaries: o.Binaries, Base: base, Source: o.Source, Version: o.Version, Revision: o.Revision,
		Created: created, Remote: o.Remote})
	if err != nil {
		return nil, err
	}
	baseName, baseDigest, err := ResolvedBase(idx)
	if err != nil {
		return nil, err
	}
	if baseName != "" {
		out.Base = baseName + "@" + baseDigest
		base = out.Base
	}
	fmt.Fprintf(log, "image %s: base %s, %s\n", out.Tag, base, strings.Join(out.Platforms, ", "))
	d, err := idx.Digest()
	if err != nil {
		return nil, err
	}
	out.Digest = d.String()
	if o.Layout != "" {
		if err := WriteLayout(o.Layout, idx, o.Tag); err != nil {
			return nil, err
		}
		out.Layout = o.Layout
		fmt.Fprintf(log, "  OCI layout %s (%s)\n", o.Layout, out.Digest)
	}
	if o.Push {
		if _, err := Push(ctx, idx, o.Repo, o.Tag, o.Remote...); err != nil {
			return nil, err
		}
		out.Pushed = true
		fmt.Fprintf(log, "  pushed %s@%s\n", out.Tag, out.Digest)
	}
	return out, nil
}
