package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/capirepo/capirepo/release"
)

// Providers verifies provider versions read from a place clusterctl cannot
// read itself (an OCI artifact, the operator's ConfigMaps): they are written
// as a local repository tree into a temporary folder, which clusterctl's
// client then reads as Dir does. Each URL in the report is that folder's
// file:// URL, gone when Providers returns; origin says where the files came
// from and replaces it.
func Providers(ctx context.Context, provs []*release.Provider, origin string, opts Options) (*Report, error) {
	if len(provs) == 0 {
		return nil, errors.New("verify: no provider to read")
	}
	tmp, err := os.MkdirTemp("", "capirepo-verify-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	var versions []string
	for _, p := range provs {
		if err := release.Write(tmp, &release.Release{Version: p.Version, Providers: []*release.Provider{p}}); err != nil {
			return nil, fmt.Errorf("verify: stage %s %s: %w", p.Label(), p.Version, err)
		}
		if !slices.Contains(versions, p.Version) {
			versions = append(versions, p.Version)
		}
	}
	rep := &Report{}
	var errs []error
	for _, v := range versions {
		o := opts
		o.Version = v
		r, err := Dir(ctx, tmp, o)
		if r != nil {
			rep.Providers = append(rep.Providers, r.Providers...)
		}
		errs = append(errs, err)
	}
	if origin != "" {
		for _, p := range rep.Providers {
			p.URL = origin
		}
	}
	return rep, errors.Join(errs...)
}
