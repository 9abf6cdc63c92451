package provider

import (
	"fmt"
	"slices"

	"github.com/capirepo/capirepo/internal/option"
)

// The manager a tree's providers run, as a build of binaries and an image
// makes it: one build section, one image tag, for every provider of the
// tree.

// ManagerMismatchError says the providers of a tree have different build
// sections, so the one manager a build compiles cannot serve them all. It
// is a mistake in the request, not a failed build.
type ManagerMismatchError struct {
	First, Other string // provider names
	File         string // the config that holds them
}

func (e *ManagerMismatchError) Error() string {
	return fmt.Sprintf("%s builds one manager, but providers %s and %s have different build sections in %s", option.Binaries, e.First, e.Other, e.File)
}

// ManagerBuild is the one build section a build of the manager compiles:
// providers of a tree that share a manager share it; different ones are
// refused (*ManagerMismatchError). platforms, when given, replace its
// platforms.
func (c *Config) ManagerBuild(platforms []string) (Build, error) {
	var spec Build
	for i, p := range c.Providers {
		if i == 0 {
			spec = p.Build
			continue
		}
		if p.Build.Main != spec.Main || p.Build.Ldflags != spec.Ldflags || !slices.Equal(p.Build.Platforms, spec.Platforms) {
			return spec, &ManagerMismatchError{First: c.Providers[0].Name, Other: p.Name, File: c.File}
		}
	}
	if len(platforms) > 0 {
		spec.Platforms = platforms
	}
	return spec, nil
}

// WithImageDigest is the config with every provider's image named by
// digest instead of a tag: what the components name when a built image is
// referenced by digest.
func (c *Config) WithImageDigest(digest string) *Config {
	out := *c
	out.Providers = slices.Clone(c.Providers)
	for i := range out.Providers {
		img := Image{}
		if out.Providers[i].Image != nil {
			img = *out.Providers[i].Image
		}
		img.NewTag, img.Digest = "", digest
		out.Providers[i].Image = &img
	}
	return &out
}

// ImageTag is the tag the components give a manager image built for
// version: what the first provider's image.tag template or newTag makes of
// it, else the version.
func (c *Config) ImageTag(version string) string {
	if len(c.Providers) > 0 && c.Providers[0].Image != nil {
		if tag, err := c.Providers[0].Image.TagFor(version); err == nil {
			return tag
		}
	}
	return version
}
