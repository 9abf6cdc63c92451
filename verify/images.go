package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/release"
)

// DefaultPlatforms are the platforms images are checked for when the
// provider names none (the default of build.platforms).
var DefaultPlatforms = []string{"linux/amd64", "linux/arm64"}

// Image check statuses.
const (
	ImageOK         = "ok"
	ImageMissing    = "missing"    // not in the registry, or without a platform
	ImageUnreadable = "unreadable" // the registry wants credentials (a warning)
	// ImageUnreachable: the registry could not be asked (no such host, no
	// connection, no answer, a server error): not known to be missing.
	ImageUnreachable = "unreachable"
	ImageSkipped     = "skipped" // the reference holds ${VARIABLES}
)

// ImageResult is what the registry said about one image.
type ImageResult struct {
	Image  string             `json:"image"`
	Status string             `json:"status"`
	Detail string             `json:"detail,omitempty"`
	Uses   []release.ImageUse `json:"uses"`
	// Platforms are the platforms found (of those checked).
	Platforms []string `json:"platforms,omitempty"`
}

// ImagesReport is the result of Images.
type ImagesReport struct {
	Platforms []string       `json:"platforms"`
	Images    []*ImageResult `json:"images"`
}

// Count returns how many images have the status.
func (r *ImagesReport) Count(status string) int {
	n := 0
	for _, i := range r.Images {
		if i.Status == status {
			n++
		}
	}
	return n
}

// WriteText writes one line per image, and one per use of a missing one.
func (r *ImagesReport) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, i := range r.Images {
		fmt.Fprintf(&b, "image %s: %s", i.Image, i.Status)
		if i.Detail != "" {
			fmt.Fprintf(&b, " (%s)", i.Detail)
		}
		b.WriteString("\n")
		if i.Status != ImageOK {
			for _, u := range i.Uses {
				fmt.Fprintf(&b, "  used by %s %s: %s container %s\n", u.Provider, u.File, u.Object, u.Container)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ImagesOptions tune Images.
type ImagesOptions struct {
	// Platforms every image must have ("os/arch[/variant]"); nil means
	// DefaultPlatforms.
	Platforms []string
	// Remote holds options for the registry calls (auth, transport).
	Remote []remote.Option
	// Concurrency is how many images are checked at once; 0 means 4.
	Concurrency int
	// Timeout bounds the check of one image; 0 means one minute.
	Timeout time.Duration
	// Report lists images of these statuses (ImageMissing,
	// ImageUnreachable) without failing: a dry run reports an unreachable
	// registry, a draft release the images still to be promoted.
	Report []string
}

// ImagesError says which images are not ready: missing from their
// registry, or not checked because the registry could not be asked.
type ImagesError struct {
	Missing, Unreachable []string // one line per use: provider file: object container: image: detail
	Total                int      // images checked
	missing, unreachable int      // images (not uses)
}

func (e *ImagesError) Error() string {
	var parts []string
	if e.missing > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d images are not ready for clusterctl init (push or promote them first, or pass %s):\n  %s",
			e.missing, e.Total, option.SkipImageCheck, strings.Join(e.Missing, "\n  ")))
	}
	if e.unreachable > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d images could not be checked, which is not the same as missing: the registry did not answer (check the network, the registry name, or its status; a dry run reports this without failing; %s publishes without asking the registry, safe only when you know these images are pushed, e.g. by this run's %s or a job that must pass before this one):\n  %s",
			e.unreachable, e.Total, option.SkipImageCheck, option.ImagePush, strings.Join(e.Unreachable, "\n  ")))
	}
	return strings.Join(parts, "\n")
}

// Images asks the registry for every image the uses name, once per image,
// for every platform: a HEAD for the reference, the index for its
// platforms, a HEAD for each platform's manifest. The error names every
// missing image with the objects and containers that use it; images the
// registry does not let us read are reported, not failed.
func Images(ctx context.Context, uses []release.ImageUse, o ImagesOptions) (*ImagesReport, error) {
	if o.Platforms == nil {
		o.Platforms = DefaultPlatforms
	}
	var want []v1.Platform
	for _, p := range o.Platforms {
		pl, err := v1.ParsePlatform(p)
		if err != nil {
			return nil, fmt.Errorf("platform %q: %w", p, err)
		}
		want = append(want, *pl)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	rep := &ImagesReport{Platforms: o.Platforms}
	byImage := map[string]*ImageResult{}
	for _, u := range uses {
		// What the container pulls without the variables set; an image
		// whose variable has no default is checked as written (skipped).
		img := u.Pulls
		if img == "" {
			img = u.Image
		}
		r := byImage[img]
		if r == nil {
			r = &ImageResult{Image: img}
			byImage[img] = r
			rep.Images = append(rep.Images, r)
		}
		r.Uses = append(r.Uses, u)
	}
	slices.SortFunc(rep.Images, func(a, b *ImageResult) int { return strings.Compare(a.Image, b.Image) })

	sem := make(chan struct{}, o.Concurrency)
	var wg sync.WaitGroup
	for _, r := range rep.Images {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				r.Status, r.Detail = ImageUnreachable, "not checked: "+context.Cause(ctx).Error()
				return
			}
			defer func() { <-sem }()
			ictx, cancel := context.WithTimeout(ctx, o.Timeout)
			defer cancel()
			checkImage(ictx, r, want, o.Remote)
		})
	}
	wg.Wait()

	ie := &ImagesError{Total: len(rep.Images)}
	for _, r := range rep.Images {
		var to *[]string
		switch {
		case slices.Contains(o.Report, r.Status):
			continue
		case r.Status == ImageMissing:
			to = &ie.Missing
			ie.missing++
		case r.Status == ImageUnreachable:
			to = &ie.Unreachable
			ie.unreachable++
		default:
			continue
		}
		for _, u := range r.Uses {
			*to = append(*to, fmt.Sprintf("%s %s: %s container %s: image %s: %s", u.Provider, u.File, u.Object, u.Container, r.Image, r.Detail))
		}
	}
	if ie.missing+ie.unreachable > 0 {
		return rep, ie
	}
	return rep, nil
}

func checkImage(ctx context.Context, r *ImageResult, want []v1.Platform, opts []remote.Option) {
	if strings.Contains(r.Image, "${") {
		r.Status, r.Detail = ImageSkipped, "the reference holds variables without a default, set when clusterctl installs"
		return
	}
	ref, err := name.ParseReference(r.Image)
	if err != nil {
		r.Status, r.Detail = ImageMissing, "not a valid image reference: "+err.Error()
		return
	}
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	desc, err := remote.Head(ref, opts...)
	if err != nil {
		r.Status, r.Detail = classify(err)
		return
	}
	var have []v1.Platform
	if desc.MediaType.IsIndex() {
		idx, err := remote.Index(ref, opts...)
		if err == nil {
			var im *v1.IndexManifest
			if im, err = idx.IndexManifest(); err == nil {
				var missing []string
				for _, w := range want {
					d := findPlatform(im, w)
					if d == nil {
						continue
					}
					// The index may list a manifest the registry does not hold yet.
					if _, herr := remote.Head(ref.Context().Digest(d.Digest.String()), opts...); herr != nil {
						status, detail := classify(herr)
						if status == ImageMissing {
							missing = append(missing, fmt.Sprintf("%s manifest %s: %s", w.String(), d.Digest, detail))
							continue
						}
						r.Status, r.Detail = status, detail
						return
					}
					have = append(have, w)
				}
				if len(missing) > 0 {
					r.Status, r.Detail = ImageMissing, strings.Join(missing, "; ")
					return
				}
			}
		}
		if err != nil {
			r.Status, r.Detail = classify(err)
			return
		}
	} else {
		img, err := remote.Image(ref, opts...)
		var cf *v1.ConfigFile
		if err == nil {
			cf, err = img.ConfigFile()
		}
		if err != nil {
			r.Status, r.Detail = classify(err)
			return
		}
		p := cf.Platform()
		for _, w := range want {
			if p != nil && p.OS == w.OS && p.Architecture == w.Architecture && (w.Variant == "" || p.Variant == w.Variant) {
				have = append(have, w)
			}
		}
	}
	for _, p := range have {
		r.Platforms = append(r.Platforms, p.String())
	}
	if len(have) < len(want) {
		var lack []string
		for _, w := range want {
			if !slices.ContainsFunc(have, func(h v1.Platform) bool { return h.String() == w.String() }) {
				lack = append(lack, w.String())
			}
		}
		r.Status, r.Detail = ImageMissing, "no image for "+strings.Join(lack, ", ")
		return
	}
	r.Status = ImageOK
}

func findPlatform(im *v1.IndexManifest, w v1.Platform) *v1.Descriptor {
	for i, d := range im.Manifests {
		p := d.Platform
		if p != nil && p.OS == w.OS && p.Architecture == w.Architecture && (w.Variant == "" || p.Variant == w.Variant) {
			return &im.Manifests[i]
		}
	}
	return nil
}

// classify sorts a registry error: not found is missing; a refusal to
// read (401, 403) is unreadable, since the cluster may have pull secrets;
// anything else (no such host, no connection, no answer, a server error)
// is unreachable: the image may well be there.
func classify(err error) (string, string) {
	var te *transport.Error
	if errors.As(err, &te) {
		switch te.StatusCode {
		case http.StatusNotFound:
			return ImageMissing, "not found in the registry"
		case http.StatusUnauthorized, http.StatusForbidden:
			return ImageUnreadable, fmt.Sprintf("the registry refused to show it (%d): private, or not there; set registry credentials (docker config) to check it", te.StatusCode)
		}
		for _, d := range te.Errors {
			if d.Code == transport.ManifestUnknownErrorCode || d.Code == transport.NameUnknownErrorCode {
				return ImageMissing, "not found in the registry"
			}
		}
	}
	return ImageUnreachable, "could not reach the registry: " + err.Error()
}
