package image

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/capirepo/capirepo/release"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What every manager image gets.
const (
	// Entrypoint is where the binary sits and what the container runs.
	Entrypoint = "/manager"
	// User is the non-root uid distroless images call "nonroot".
	User = "65532"
)

// OCI annotation keys used as image labels.
const (
	LabelSource   = "org.opencontainers.image.source"
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
)

// Binary is one compiled manager and the platform it is for.
type Binary struct {
	OS, Arch, Variant string
	Path              string
}

func (b Binary) platform() string {
	s := b.OS + "/" + b.Arch
	if b.Variant != "" {
		s += "/" + b.Variant
	}
	return s
}

// Options say what to build.
type Options struct {
	// Binaries holds one binary per platform, in index order.
	Binaries []Binary
	// Base is the base image reference; "" means the empty image (a static
	// binary needs no OS). A multi-platform base gives each platform its own.
	Base string
	// Source, Version and Revision become the OCI labels (empty: left out).
	Source, Version, Revision string
	// Created is the image's creation time and the layer's mtime; the zero
	// value means the Unix epoch, so two builds give the same digest.
	Created time.Time
	// Remote holds options for pulling the base (auth, transport).
	Remote []remote.Option
}

// Build returns the multi-platform index of manager images.
func Build(ctx context.Context, o Options) (v1.ImageIndex, error) {
	if len(o.Binaries) == 0 {
		return nil, errors.New("image: no binaries to put in an image (build them with --binaries)")
	}
	created := o.Created
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	created = created.UTC()
	var base baseImages = emptyBase{}
	if o.Base != "" {
		b, err := pullBase(ctx, o.Base, o.Remote)
		if err != nil {
			return nil, err
		}
		base = b
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	seen := map[string]bool{}
	for _, b := range o.Binaries {
		p := b.platform()
		if seen[p] {
			return nil, fmt.Errorf("image: two binaries for %s", p)
		}
		seen[p] = true
		img, err := platformImage(base, b, o, created)
		if err != nil {
			return nil, fmt.Errorf("image for %s (%s): %w", p, b.Path, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{
				OS: b.OS, Architecture: b.Arch, Variant: b.Variant,
			}},
		})
	}
	if _, err := idx.Digest(); err != nil {
		return nil, fmt.Errorf("image index: %w", err)
	}
	return idx, nil
}

func platformImage(base baseImages, b Binary, o Options, created time.Time) (v1.Image, error) {
	img, err := base.forPlatform(b)
	if err != nil {
		return nil, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return nil, err
	}
	layerType := types.OCILayer
	if mt == types.DockerManifestSchema2 {
		layerType = types.DockerLayer
	}
	data, err := os.ReadFile(b.Path)
	if err != nil {
		return nil, err
	}
	layerTar, err := managerTar(data, created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(layerType))
	if err != nil {
		return nil, err
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: layerType,
		History:   v1.History{Created: v1.Time{Time: created}, CreatedBy: "capirepo build: manager binary at " + Entrypoint},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = b.OS, b.Arch, b.Variant
	cf.Created = v1.Time{Time: created}
	cf.Config.Entrypoint = []string{Entrypoint}
	cf.Config.Cmd = nil
	cf.Config.User = User
	if cf.Config.Labels == nil {
		cf.Config.Labels = map[string]string{}
	}
	for k, v := range map[string]string{LabelSource: o.Source, LabelVersion: o.Version, LabelRevision: o.Revision} {
		if v != "" {
			cf.Config.Labels[k] = v
		}
	}
	return mutate.ConfigFile(img, cf)
}

// managerTar is a layer with one regular file, the binary at /manager,
// with fixed owner, mode and time so that equal binaries give equal layers.
func managerTar(data []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     Entrypoint[1:],
		Mode:     0o755,
		Size:     int64(len(data)),
		ModTime:  mtime,
		Format:   tar.FormatPAX,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// baseImages picks the base image of one platform.
type baseImages interface {
	forPlatform(Binary) (v1.Image, error)
}

type emptyBase struct{}

func (emptyBase) forPlatform(Binary) (v1.Image, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	return mutate.ConfigMediaType(img, types.OCIConfigJSON), nil
}

type remoteBase struct {
	ref   string
	index v1.ImageIndex // nil for a single-platform base
	image v1.Image
}

func pullBase(ctx context.Context, ref string, opts []remote.Option) (*remoteBase, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("--base-image %q: %w", ref, err)
	}
	desc, err := remote.Get(r, append([]remote.Option{remote.WithContext(ctx)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("pull base image %s: %w", ref, err)
	}
	b := &remoteBase{ref: ref}
	if desc.MediaType.IsIndex() {
		b.index, err = desc.ImageIndex()
	} else {
		b.image, err = desc.Image()
	}
	if err != nil {
		return nil, fmt.Errorf("pull base image %s: %w", ref, err)
	}
	return b, nil
}

func (b *remoteBase) forPlatform(bin Binary) (v1.Image, error) {
	want := v1.Platform{OS: bin.OS, Architecture: bin.Arch, Variant: bin.Variant}
	if b.index == nil {
		cf, err := b.image.ConfigFile()
		if err != nil {
			return nil, fmt.Errorf("base image %s: %w", b.ref, err)
		}
		if cf.OS != bin.OS || cf.Architecture != bin.Arch {
			return nil, fmt.Errorf("base image %s is for %s/%s only, not %s: use a multi-platform base image", b.ref, cf.OS, cf.Architecture, bin.platform())
		}
		return b.image, nil
	}
	im, err := b.index.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("base image %s: %w", b.ref, err)
	}
	var have []string
	for _, d := range im.Manifests {
		if d.Platform == nil {
			continue
		}
		have = append(have, d.Platform.String())
		p := *d.Platform
		if p.OS == want.OS && p.Architecture == want.Architecture && (p.Variant == want.Variant || want.Variant == "") {
			img, err := b.index.Image(d.Digest)
			if err != nil {
				return nil, fmt.Errorf("base image %s for %s: %w", b.ref, bin.platform(), err)
			}
			return img, nil
		}
	}
	return nil, fmt.Errorf("base image %s has no image for %s (it has %v)", b.ref, bin.platform(), have)
}

// Ref returns REPO:VERSION as a reference.
func Ref(repo, version string) (name.Tag, error) {
	t, err := name.NewTag(repo + ":" + version)
	if err != nil {
		return name.Tag{}, fmt.Errorf("--image %q with tag %q: %w", repo, version, err)
	}
	return t, nil
}

// Push writes the index and its images to repo:version and returns the
// reference by digest (repo@sha256:...).
func Push(ctx context.Context, idx v1.ImageIndex, repo, version string, opts ...remote.Option) (name.Digest, error) {
	tag, err := Ref(repo, version)
	if err != nil {
		return name.Digest{}, err
	}
	d, err := idx.Digest()
	if err != nil {
		return name.Digest{}, err
	}
	if err := remote.WriteIndex(tag, idx, append([]remote.Option{remote.WithContext(ctx)}, opts...)...); err != nil {
		return name.Digest{}, fmt.Errorf("push %s: %w", tag, err)
	}
	return tag.Context().Digest(d.String()), nil
}

// WriteLayout writes the index as an OCI image layout at dir, tagged with
// version (org.opencontainers.image.ref.name). It is written beside dir and
// renamed into place; an existing layout at dir is replaced, any other
// non-empty folder is refused.
func WriteLayout(dir string, idx v1.ImageIndex, version string) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
			return fmt.Errorf("--image-layout %s: folder is not empty and not an OCI layout; refusing to replace it", dir)
		}
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+"-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return fmt.Errorf("image layout %s: %w", dir, err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": version})); err != nil {
		return fmt.Errorf("image layout %s: %w", dir, err)
	}
	return release.ReplaceDir(tmp, dir)
}
