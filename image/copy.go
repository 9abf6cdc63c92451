package image

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Copied is what Copy did with one image.
type Copied struct {
	// Digest is the source's digest, which the copy keeps.
	Digest string
	// Copied is false when the destination already held that digest.
	Copied bool
	// Referrers counts the referrers (signatures, SBOMs) copied with it.
	Referrers int
}

// Copy copies one image or multi-platform index (every platform) from src
// to dst by digest: the manifest bytes are kept, so the copy has the
// source's digest. Nothing is written when dst already holds that digest;
// the referrers (signatures, SBOMs, attestations) are copied either way,
// those already there skipped.
func Copy(ctx context.Context, src, dst string, opts ...remote.Option) (Copied, error) {
	var out Copied
	from, err := name.ParseReference(src)
	if err != nil {
		return out, err
	}
	to, err := name.ParseReference(dst)
	if err != nil {
		return out, err
	}
	opts = append(slices.Clone(opts), remote.WithContext(ctx))
	desc, err := remote.Get(from, opts...)
	if err != nil {
		return out, fmt.Errorf("read source: %w", err)
	}
	out.Digest = desc.Digest.String()
	if have, err := remote.Head(to, opts...); err != nil || have.Digest != desc.Digest {
		switch {
		case desc.MediaType.IsIndex():
			idx, err := desc.ImageIndex()
			if err == nil {
				err = remote.WriteIndex(to, idx, opts...)
			}
			if err != nil {
				return out, err
			}
		case desc.MediaType.IsImage():
			img, err := desc.Image()
			if err == nil {
				err = remote.Write(to, img, opts...)
			}
			if err != nil {
				return out, err
			}
		default:
			return out, fmt.Errorf("media type %s is neither an image nor an index", desc.MediaType)
		}
		out.Copied = true
	}
	out.Referrers, err = CopyReferrers(ctx, from.Context().Digest(out.Digest), to.Context(), opts...)
	if err != nil {
		return out, fmt.Errorf("copy its referrers: %w", err)
	}
	return out, nil
}

// Resolve names an image by digest: ref as it is when it names one, else
// the digest its tag points at now.
func Resolve(ctx context.Context, ref name.Reference, opts ...remote.Option) (name.Digest, error) {
	if d, ok := ref.(name.Digest); ok {
		return d, nil
	}
	desc, err := remote.Head(ref, append([]remote.Option{remote.WithContext(ctx)}, opts...)...)
	if err != nil {
		return name.Digest{}, err
	}
	return ref.Context().Digest(desc.Digest.String()), nil
}

// CopyReferrers copies every referrer of src (signatures, SBOMs,
// attestations) to the repository dst, by digest, so they refer to the copy
// of src there (same digest); those already there are skipped. It returns
// how many it copied.
func CopyReferrers(ctx context.Context, src name.Digest, dst name.Repository, opts ...remote.Option) (int, error) {
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	idx, err := remote.Referrers(src, opts...)
	if err != nil {
		return 0, fmt.Errorf("referrers of %s: %w", src, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return 0, fmt.Errorf("referrers of %s: %w", src, err)
	}
	n := 0
	for _, d := range im.Manifests {
		to := dst.Digest(d.Digest.String())
		if _, err := remote.Head(to, opts...); err == nil {
			continue
		}
		desc, err := remote.Get(src.Context().Digest(d.Digest.String()), opts...)
		if err != nil {
			return n, fmt.Errorf("referrer %s of %s: %w", d.Digest, src, err)
		}
		if desc.MediaType.IsIndex() {
			ii, err := desc.ImageIndex()
			if err == nil {
				err = remote.WriteIndex(to, ii, opts...)
			}
			if err != nil {
				return n, fmt.Errorf("copy referrer %s of %s: %w", d.Digest, src, err)
			}
		} else {
			img, err := desc.Image()
			if err == nil {
				err = remote.Write(to, img, opts...)
			}
			if err != nil {
				return n, fmt.Errorf("copy referrer %s of %s: %w", d.Digest, src, err)
			}
		}
		n++
	}
	return n, nil
}
