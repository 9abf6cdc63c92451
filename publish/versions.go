package publish

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/versions"
)

// Repository is some providers of a Source as clusterctl's repository shows
// their versions, for the one choice of the newest and the one before
// (package versions: versions.Latest(ctx, repo), versions.Before(ctx, repo,
// v)). The providers of one release share its versions: a version counts
// when the source holds any of them at it.
type Repository struct {
	Source Source
	IDs    []provider.ID
	// Components names the components file, as a provider URL's last
	// element does; "" means the conventional name (Ref.Components).
	Components string
	// Skipped hears of each version the choice passes over, because the
	// source holds no release of it clusterctl could read, and why; nil
	// means nobody.
	Skipped func(tag string, err error)

	mu    sync.Mutex
	names []string
}

var _ versions.Repository = (*Repository)(nil)

// Versions lists the versions the source holds of any of the providers,
// each once; the list is read once.
func (r *Repository) Versions(ctx context.Context) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.names != nil {
		return slices.Clone(r.names), nil
	}
	all := []string{}
	for _, id := range r.IDs {
		vs, err := r.Source.Versions(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("list the versions of %s: %w", id.Label(), err)
		}
		all = append(all, vs...)
	}
	slices.Sort(all)
	r.names = slices.Compact(all)
	return slices.Clone(r.names), nil
}

// Holds says whether the source holds a release of tag clusterctl reads:
// its metadata.yaml and components file (Files), from the listing, for
// any of the providers.
func (r *Repository) Holds(ctx context.Context, tag string) error {
	var missing error
	for _, id := range r.IDs {
		_, _, err := Files(ctx, r.Source, r.ref(id, tag))
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("read %s %s: %w", id.Label(), tag, err)
		}
		missing = err
	}
	if missing == nil {
		missing = fmt.Errorf("no provider to read: %w", ErrNotFound)
	}
	if r.Skipped != nil {
		r.Skipped(tag, missing)
	}
	return missing
}

// Metadata reads tag's metadata.yaml, of the first of the providers that
// has one.
func (r *Repository) Metadata(ctx context.Context, tag string) ([]byte, error) {
	var missing error
	for _, id := range r.IDs {
		fs, err := ReadFiles(ctx, r.Source, r.ref(id, tag), provider.MetadataFile)
		if err == nil {
			return fs[0].Data, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		missing = err
	}
	if missing == nil {
		missing = fmt.Errorf("no provider to read: %w", ErrNotFound)
	}
	return nil, missing
}

func (r *Repository) ref(id provider.ID, tag string) Ref {
	return Ref{ID: id, Version: tag, Components: r.Components}
}
