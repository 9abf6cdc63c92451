package sign

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/release"
)

// SBOMImage is the manager image a build made, as its SBOM names it.
type SBOMImage struct {
	// Repo is the image's repository, Digest its index digest, Base the
	// base image by digest (NAME@sha256:...; "" for none).
	Repo, Digest, Base string
	// Pushed attaches the image's SBOM to the pushed image as a referrer.
	Pushed bool
}

// ReleaseSBOMOptions say which SBOMs AddSBOMs makes.
type ReleaseSBOMOptions struct {
	// Binaries are the manager binaries built, one per platform.
	Binaries []Binary
	// Image is the manager image built from them; nil when none was.
	Image *SBOMImage
	// Created stamps the SBOMs and the referrer.
	Created time.Time
	// Remote reaches the image's registry (credentials, transport).
	Remote []remote.Option
	// Log hears of each SBOM made and attached; nil discards it.
	Log io.Writer
}

// AddSBOMs makes the SBOM of each manager binary and of the image, adds
// them to every provider's files of rel (checksums.txt lists them, so the
// signature covers them), and attaches the image's to the pushed image as a
// referrer.
func AddSBOMs(ctx context.Context, rel *release.Release, o ReleaseSBOMOptions) error {
	if o.Log == nil {
		o.Log = io.Discard
	}
	so := SBOMOptions{Created: o.Created}
	var files []release.File
	for _, b := range o.Binaries {
		data, err := BinarySBOM(b, so)
		if err != nil {
			return err
		}
		files = append(files, release.File{Name: filepath.Base(b.Path) + SBOMSuffix, Data: data})
	}
	if img := o.Image; img != nil {
		baseName, baseDigest, _ := strings.Cut(img.Base, "@")
		data, err := ImageSBOM(img.Repo, img.Digest, baseName, baseDigest, o.Binaries, so)
		if err != nil {
			return err
		}
		files = append(files, release.File{Name: ImageSBOMFile, Data: data})
		if img.Pushed {
			ref, err := name.NewDigest(img.Repo + "@" + img.Digest)
			if err != nil {
				return err
			}
			if _, err := Attach(ctx, ref, SBOMArtifactType, data, nil, o.Created, o.Remote...); err != nil {
				return err
			}
			fmt.Fprintf(o.Log, "  attached %s to %s\n", ImageSBOMFile, ref)
		}
	}
	for _, p := range rel.Providers {
		for _, f := range files {
			if err := p.Add(f.Name, f.Data); err != nil {
				return err
			}
		}
	}
	for _, f := range files {
		fmt.Fprintf(o.Log, "  SBOM %s (%s)\n", f.Name, text.Bytes(int64(len(f.Data))))
	}
	return nil
}
