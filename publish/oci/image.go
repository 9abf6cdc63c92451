package oci

import (
	"bytes"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Image returns the artifact as a go-containerregistry image, so
// remote.Write pushes it: its manifest bytes are Manifest's exactly (an
// image built with mutate would re-serialise them), and each blob is pushed
// once however many layers share it.
func (a *Artifact) Image() (v1.Image, error) {
	manifest, err := a.Manifest()
	if err != nil {
		return nil, err
	}
	core := &artifactImage{manifest: manifest, config: a.Config, blobs: map[v1.Hash]blob{}}
	for _, l := range a.Layers {
		core.blobs[digestOf(l.Data)] = blob{data: l.Data, mediaType: l.MediaType}
	}
	return partial.CompressedToImage(core)
}

type blob struct {
	data      []byte
	mediaType types.MediaType
}

// artifactImage is the minimal core partial.CompressedToImage completes.
type artifactImage struct {
	manifest, config []byte
	blobs            map[v1.Hash]blob
}

func (i *artifactImage) RawConfigFile() ([]byte, error)      { return i.config, nil }
func (i *artifactImage) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (i *artifactImage) RawManifest() ([]byte, error)        { return i.manifest, nil }

func (i *artifactImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	b, ok := i.blobs[h]
	if !ok {
		return nil, fmt.Errorf("artifact has no blob %s", h)
	}
	return &blobLayer{h: h, b: b}, nil
}

type blobLayer struct {
	h v1.Hash
	b blob
}

func (l *blobLayer) Digest() (v1.Hash, error) { return l.h, nil }
func (l *blobLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.b.data)), nil
}
func (l *blobLayer) Size() (int64, error)                { return int64(len(l.b.data)), nil }
func (l *blobLayer) MediaType() (types.MediaType, error) { return l.b.mediaType, nil }
