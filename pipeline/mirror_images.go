package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/drone/envsubst/v2"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/sign"
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
}

// ComponentImages lists the images a components file runs, as `clusterctl
// init list-images` does (util.InspectImages): the containers and init
// containers of every Deployment and DaemonSet. An image written with
// ${VAR:=default} takes its default, as clusterctl would without the variable set.
func ComponentImages(data []byte) ([]string, error) {
	type container struct {
		Image string `json:"image"`
	}
	var doc struct {
		Kind string `json:"kind"`
		Spec struct {
			Template struct {
				Spec struct {
					Containers     []container `json:"containers"`
					InitContainers []container `json:"initContainers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	var out []string
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		doc.Kind, doc.Spec.Template.Spec.Containers, doc.Spec.Template.Spec.InitContainers = "", nil, nil
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if doc.Kind != "Deployment" && doc.Kind != "DaemonSet" {
			continue
		}
		for _, c := range slices.Concat(doc.Spec.Template.Spec.Containers, doc.Spec.Template.Spec.InitContainers) {
			img := c.Image
			if strings.Contains(img, "${") {
				var err error
				if img, err = envsubst.Eval(img, func(string) string { return "" }); err != nil {
					return nil, fmt.Errorf("image %q: %w", c.Image, err)
				}
			}
			if img != "" && !slices.Contains(out, img) {
				out = append(out, img)
			}
		}
	}
	return out, nil
}

// imagePlan maps every source image to its place under Images:
// REGISTRY/PREFIX/<provider-label>/<image-name>, the tag or digest kept. One
// repository per provider is what clusterctl's images: override per
// provider can express (it replaces everything before the last '/'), so two
// images of one provider with the same last path element would land in the
// same repository: that is refused, naming both.
func (m *mirror) imagePlan(ctx context.Context) ([]*MirroredImage, error) {
	byKey := map[string][]string{}
	var keys []string
	add := func(key string, components []byte) error {
		imgs, err := ComponentImages(components)
		if err != nil {
			return fmt.Errorf("%s: list images: %w", key, err)
		}
		if _, ok := byKey[key]; !ok {
			keys = append(keys, key)
		}
		for _, i := range imgs {
			if !slices.Contains(byKey[key], i) {
				byKey[key] = append(byKey[key], i)
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
			if err := add(p.Label, rp.Components().Data); err != nil {
				return nil, err
			}
		}
	}
	if m.certManagerComponents != nil {
		if err := add(provider.CertManager.Name, m.certManagerComponents); err != nil {
			return nil, err
		}
	}
	base := strings.TrimSuffix(m.o.Images, "/")
	var out []*MirroredImage
	var clashes []string
	for _, key := range keys {
		repoOf := map[string]string{} // last path element -> source repository
		for _, src := range byKey[key] {
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
			out = append(out, &MirroredImage{Provider: key, Source: src, Copy: dst})
		}
	}
	if len(clashes) > 0 {
		return nil, fmt.Errorf("images whose last path element is the same cannot share one clusterctl image override (it replaces everything before the last '/'): %s", strings.Join(clashes, "; "))
	}
	return out, nil
}

// images copies every image of the mirrored components, Concurrency at a time.
func (m *mirror) images(ctx context.Context) error {
	plan, err := m.imagePlan(ctx)
	if err != nil {
		return err
	}
	m.sum.Images = make([]MirroredImage, len(plan))
	return boundedEach(ctx, len(plan), m.o.Concurrency, func(i int) error {
		img := plan[i]
		if err := copyImage(ctx, img, m.o.ImageOptions); err != nil {
			return fmt.Errorf("image %s of %s to %s: %w", img.Source, img.Provider, img.Copy, err)
		}
		m.sum.Images[i] = *img
		if img.Copied {
			m.logf("image %s copied to %s (%s)", img.Source, img.Copy, img.Digest)
		}
		return nil
	})
}

// copyImage copies one image or multi-platform index (every platform), by
// digest: the manifest bytes are kept, so the copy has the source's digest.
// Nothing is written when the target already holds that digest.
func copyImage(ctx context.Context, img *MirroredImage, opts []remote.Option) error {
	src, err := name.ParseReference(img.Source)
	if err != nil {
		return err
	}
	dst, err := name.ParseReference(img.Copy)
	if err != nil {
		return err
	}
	opts = append(slices.Clone(opts), remote.WithContext(ctx))
	desc, err := remote.Get(src, opts...)
	if err != nil {
		return fmt.Errorf("read source: %w", err)
	}
	img.Digest = desc.Digest.String()
	if have, err := remote.Head(dst, opts...); err == nil && have.Digest == desc.Digest {
		return copyReferrers(ctx, src, dst, desc.Digest.String(), img, opts)
	}
	switch {
	case desc.MediaType.IsIndex():
		idx, err := desc.ImageIndex()
		if err != nil {
			return err
		}
		err = remote.WriteIndex(dst, idx, opts...)
		if err != nil {
			return err
		}
	case desc.MediaType.IsImage():
		i, err := desc.Image()
		if err != nil {
			return err
		}
		if err := remote.Write(dst, i, opts...); err != nil {
			return err
		}
	default:
		return fmt.Errorf("media type %s is neither an image nor an index", desc.MediaType)
	}
	img.Copied = true
	return copyReferrers(ctx, src, dst, desc.Digest.String(), img, opts)
}

// copyReferrers copies the image's signatures, SBOMs and other referrers
// with it.
func copyReferrers(ctx context.Context, src, dst name.Reference, digest string, img *MirroredImage, opts []remote.Option) error {
	n, err := sign.CopyReferrers(ctx, src.Context().Digest(digest), dst.Context(), opts...)
	img.Referrers += n
	if err != nil {
		return fmt.Errorf("copy its referrers: %w", err)
	}
	return nil
}
