package image

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/capirepo/capirepo/internal/option"
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

// OCI annotations that record the base an image was built on.
const (
	AnnotationBaseName   = "org.opencontainers.image.base.name"
	AnnotationBaseDigest = "org.opencontainers.image.base.digest"
)

// Base images.
const (
	// DefaultBase is the base kubebuilder scaffolds and providers ship:
	// CA certificates, /etc/passwd with nonroot (65532), tzdata, no shell.
	DefaultBase = "gcr.io/distroless/static:nonroot"
	// NoBase builds the bare binary on the empty image.
	NoBase = "none"
)

// NoBaseWarning says what an image without a base lacks.
var NoBaseWarning = option.BaseImage.String() + " none: the image holds only /manager: no CA certificates " +
	"(a manager calling a cloud API over HTTPS fails with x509 errors), no time zone data, no /etc/passwd; " +
	"use it only for a manager that needs none of them"

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
	// Base is the base image reference; "" or NoBase means the empty image.
	// A multi-platform base gives each platform its own. The reference is
	// resolved to a digest once, and recorded in the annotations
	// AnnotationBaseName and AnnotationBaseDigest of the index (the digest
	// the reference resolved to) and of each image (its platform's base
	// manifest).
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
		return nil, fmt.Errorf("image: no binaries to put in an image (build them with %s)", option.Flag(ctx, option.Binaries))
	}
	created := o.Created
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	created = created.UTC()
	var base baseImages = emptyBase{}
	if o.Base != "" && o.Base != NoBase {
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
		img, plat, err := platformImage(base, b, o, created)
		if err != nil {
			return nil, fmt.Errorf("image for %s (%s): %w", p, b.Path, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: plat},
		})
	}
	if name, digest := base.recorded(); name != "" {
		idx = mutate.Annotations(idx, map[string]string{AnnotationBaseName: name, AnnotationBaseDigest: digest}).(v1.ImageIndex)
	}
	if _, err := idx.Digest(); err != nil {
		return nil, fmt.Errorf("image index: %w", err)
	}
	return idx, nil
}

// platformImage puts the binary on its platform's base and returns the
// image and its index platform: the base's, which may say more (variant,
// os.version) than the binary's.
func platformImage(base baseImages, b Binary, o Options, created time.Time) (v1.Image, *v1.Platform, error) {
	img, plat, baseDigest, err := base.forPlatform(b)
	if err != nil {
		return nil, nil, err
	}
	img, err = onBase(img, b, o, created)
	if err != nil {
		return nil, nil, err
	}
	if name, _ := base.recorded(); name != "" {
		img = mutate.Annotations(img, map[string]string{AnnotationBaseName: name, AnnotationBaseDigest: baseDigest}).(v1.Image)
	}
	return img, plat, nil
}

func onBase(img v1.Image, b Binary, o Options, created time.Time) (v1.Image, error) {
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
	// forPlatform returns the base image of the binary's platform, the
	// platform to list it under, and the base manifest's digest.
	forPlatform(Binary) (v1.Image, *v1.Platform, string, error)
	// recorded returns the base's name and the digest it resolved to, to
	// record in the annotations; "" for no base.
	recorded() (name, digest string)
}

type emptyBase struct{}

func (emptyBase) forPlatform(b Binary) (v1.Image, *v1.Platform, string, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	return mutate.ConfigMediaType(img, types.OCIConfigJSON), &v1.Platform{OS: b.OS, Architecture: b.Arch, Variant: b.Variant}, "", nil
}

func (emptyBase) recorded() (string, string) { return "", "" }

type remoteBase struct {
	ref    string        // as given
	name   string        // fully qualified: gcr.io/distroless/static:nonroot
	digest string        // what ref resolved to
	index  v1.ImageIndex // nil for a single-platform base
	image  v1.Image
}

func (b *remoteBase) recorded() (string, string) { return b.name, b.digest }

// ResolvedBase returns the base name and digest an index built by Build
// records, e.g. ("gcr.io/distroless/static:nonroot", "sha256:..."); ""
// for an image without a base.
func ResolvedBase(idx v1.ImageIndex) (name, digest string, err error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return "", "", err
	}
	return m.Annotations[AnnotationBaseName], m.Annotations[AnnotationBaseDigest], nil
}

func pullBase(ctx context.Context, ref string, opts []remote.Option) (*remoteBase, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", option.Flag(ctx, option.BaseImage), ref, err)
	}
	desc, err := remote.Get(r, append([]remote.Option{remote.WithContext(ctx)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("pull base image %s: %w", ref, err)
	}
	b := &remoteBase{ref: ref, name: r.Name(), digest: desc.Digest.String()}
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

func (b *remoteBase) forPlatform(bin Binary) (v1.Image, *v1.Platform, string, error) {
	want := v1.Platform{OS: bin.OS, Architecture: bin.Arch, Variant: bin.Variant}
	if b.index == nil {
		cf, err := b.image.ConfigFile()
		if err != nil {
			return nil, nil, "", fmt.Errorf("base image %s: %w", b.ref, err)
		}
		if cf.OS != bin.OS || cf.Architecture != bin.Arch {
			return nil, nil, "", fmt.Errorf("base image %s is for %s/%s only, not %s: use a multi-platform base image", b.ref, cf.OS, cf.Architecture, bin.platform())
		}
		v := bin.Variant
		if cf.Variant != "" {
			v = cf.Variant
		}
		return b.image, &v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: v, OSVersion: cf.OSVersion}, b.digest, nil
	}
	im, err := b.index.IndexManifest()
	if err != nil {
		return nil, nil, "", fmt.Errorf("base image %s: %w", b.ref, err)
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
				return nil, nil, "", fmt.Errorf("base image %s for %s: %w", b.ref, bin.platform(), err)
			}
			plat := p
			plat.Features, plat.OSFeatures = nil, nil
			return img, &plat, d.Digest.String(), nil
		}
	}
	return nil, nil, "", fmt.Errorf("base image %s has no image for %s (it has %v): build only the platforms it has (%s), or choose another %s",
		b.ref, bin.platform(), have, option.Platforms, option.BaseImage)
}

// Ref returns REPO:VERSION as a reference.
func Ref(repo, version string) (name.Tag, error) {
	t, err := name.NewTag(repo + ":" + version)
	if err != nil {
		return name.Tag{}, fmt.Errorf("%s %q with tag %q: %w", option.Image, repo, version, err)
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
			return fmt.Errorf("%s %s: folder is not empty and not an OCI layout; refusing to replace it", option.ImageLayout, dir)
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
