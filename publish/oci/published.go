package oci

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/capirepo/capirepo/publish"
)

// Published returns the artifacts a summary of this target's Publish names,
// by digest, and the registry options (credentials, transport) that reach
// them: what a signer attaches its signatures to.
func (p *Target) Published(ctx context.Context, sum *publish.Summary) ([]name.Digest, []remote.Option, error) {
	var out []name.Digest
	for _, ref := range slices.Sorted(maps.Keys(sum.Digests)) {
		r, err := name.ParseReference(strings.TrimPrefix(ref, "http://"), p.c.nameOptions()...) // http://: the operator's plain-HTTP form
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", ref, err)
		}
		d := r.Context().Digest(sum.Digests[ref])
		out = append(out, d)
	}
	return out, p.c.options(ctx), nil
}
