package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/capirepo/capirepo/image"
	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// MirroredImage is one image copied (or found already there) at the mirror.
type MirroredImage struct {
	// Provider is the image override key: the provider label, or cert-manager.
	Provider string `json:"provider"`
	Source   string `json:"source"`
	Copy     string `json:"target"` // the copy at the mirror
	Digest   string `json:"digest"`
	Copied   bool   `json:"copied"`
	// Referrers counts the referrers (signatures, SBOMs) copied with it.
	Referrers int `json:"referrers,omitempty"`
	// Clusterctl says `clusterctl init list-images` lists the image and
	// the site config's images: override points it at the copy
	// (release.ClusterctlReads: a Deployment's or DaemonSet's container);
	// when false, UsedBy names the containers that still pull Source.
	Clusterctl bool     `json:"clusterctl"`
	UsedBy     []string `json:"usedBy,omitempty"`
}

// imagePlan maps every source image to its place under Images:
// REGISTRY/PREFIX/<provider-label>/<image-name>, the tag or digest kept. One
// repository per provider is what clusterctl's images: override per
// provider can express (it replaces everything before the last '/'), so two
// images of one provider with the same last path element would land in the
// same repository: that is refused, naming both.
func (m *mirror) imagePlan(ctx context.Context) ([]*MirroredImage, error) {
	type planned struct {
		image      string
		clusterctl bool
		usedBy     []string // containers clusterctl does not read
	}
	byKey := map[string][]*planned{}
	var keys, unset []string
	add := func(key, file string, components []byte) error {
		uses, err := release.ComponentImages(key, file, components)
		if err != nil {
			return fmt.Errorf("list images: %w", err)
		}
		if _, ok := byKey[key]; !ok {
			keys = append(keys, key)
		}
		for _, u := range uses {
			img := u.Pulls
			if img == "" {
				if w := fmt.Sprintf("%s (%s %s: %s container %s)", u.Image, key, file, u.Object, u.Container); !slices.Contains(unset, w) {
					unset = append(unset, w)
				}
				continue
			}
			i := slices.IndexFunc(byKey[key], func(p *planned) bool { return p.image == img })
			if i < 0 {
				byKey[key] = append(byKey[key], &planned{image: img})
				i = len(byKey[key]) - 1
			}
			p := byKey[key][i]
			if u.Clusterctl {
				p.clusterctl = true
			} else if w := u.Object + " container " + u.Container; !slices.Contains(p.usedBy, w) {
				p.usedBy = append(p.usedBy, w)
			}
		}
		return nil
	}
	for _, p := range m.sum.Providers {
		for _, v := range p.Versions {
			rp := p.read[v.Version]
			if rp == nil {
				// Skipped as already mirrored: the mirror holds the same bytes.
				var err error
				if rp, err = publish.Read(ctx, m.o.Target, p.ref(v.Version)); err != nil {
					return nil, fmt.Errorf("%s %s: read the mirrored components for their images: %w", p.Label, v.Version, err)
				}
			}
			c := rp.Components()
			if err := add(p.Label, c.Name, c.Data); err != nil {
				return nil, err
			}
		}
	}
	if m.certManagerComponents != nil {
		if err := add(provider.CertManager.Name, "cert-manager.yaml", m.certManagerComponents); err != nil {
			return nil, err
		}
	}
	if len(unset) > 0 {
		m.sum.Warnings = append(m.sum.Warnings, fmt.Sprintf("%s not copied: a variable without a default names it, which the site sets when it installs; copy that image yourself:\n  %s",
			text.Plural(len(unset), "image was", "images were"), strings.Join(unset, "\n  ")))
	}
	base := strings.TrimSuffix(m.o.Images, "/")
	var out []*MirroredImage
	var clashes []string
	for _, key := range keys {
		repoOf := map[string]string{} // last path element -> source repository
		for _, p := range byKey[key] {
			src := p.image
			ref, err := name.ParseReference(src)
			if err != nil {
				return nil, fmt.Errorf("%s: image %q: %w", key, src, err)
			}
			repo := ref.Context()
			last := repo.RepositoryStr()[strings.LastIndex(repo.RepositoryStr(), "/")+1:]
			if prev, ok := repoOf[last]; ok && prev != repo.Name() {
				clashes = append(clashes, fmt.Sprintf("%s: %s and %s would both be %s/%s/%s", key, prev, repo.Name(), base, key, last))
				continue
			}
			repoOf[last] = repo.Name()
			dst := base + "/" + key + "/" + last
			if d, ok := ref.(name.Digest); ok {
				dst += "@" + d.DigestStr()
			} else {
				dst += ":" + ref.Identifier()
			}
			mi := &MirroredImage{Provider: key, Source: src, Copy: dst, Clusterctl: p.clusterctl}
			if !p.clusterctl {
				mi.UsedBy = p.usedBy
			}
			out = append(out, mi)
		}
	}
	if len(clashes) > 0 {
		return nil, fmt.Errorf("images whose last path element is the same cannot share one clusterctl image override (it replaces everything before the last '/'): %s", strings.Join(clashes, "; "))
	}
	return out, nil
}

// images copies every image the mirrored components run (release.Images:
// every pod-bearing kind), Concurrency at a time, and says which of them
// clusterctl neither lists nor points at the mirror.
func (m *mirror) images(ctx context.Context) error {
	plan, err := m.imagePlan(ctx)
	if err != nil {
		return err
	}
	m.sum.Images = make([]MirroredImage, len(plan))
	err = boundedEach(ctx, len(plan), m.o.Concurrency, func(i int) error {
		img := plan[i]
		c, err := image.Copy(ctx, img.Source, img.Copy, publish.RegistryOptions(m.o.Registry)...)
		img.Digest, img.Copied, img.Referrers = c.Digest, c.Copied, c.Referrers
		if err != nil {
			return fmt.Errorf("image %s of %s to %s: %w", img.Source, img.Provider, img.Copy, err)
		}
		m.sum.Images[i] = *img
		if img.Copied {
			m.logf("image %s copied to %s (%s)", img.Source, img.Copy, img.Digest)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if w := unlisted(m.sum.Images); w != "" {
		m.sum.Warnings = append(m.sum.Warnings, w)
	}
	return nil
}

// unlisted says which copied images `clusterctl init list-images` does not
// list: clusterctl reads the images of Deployments and DaemonSets only, so
// its images: override leaves these pulling from upstream.
func unlisted(imgs []MirroredImage) string {
	var lines []string
	for _, i := range imgs {
		if !i.Clusterctl {
			lines = append(lines, fmt.Sprintf("%s (%s: %s) copied to %s", i.Source, i.Provider, strings.Join(i.UsedBy, ", "), i.Copy))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return fmt.Sprintf("%s that `clusterctl init list-images` does not list: clusterctl reads and rewrites the images of Deployments and DaemonSets only, so the site config's images: override leaves these containers pulling from upstream; point the nodes' container runtime at the mirror for them (a registry mirror), or patch the objects after install:\n  %s",
		text.Plural(len(lines), "image was copied", "images were copied"), strings.Join(lines, "\n  "))
}
