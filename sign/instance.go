package sign

import (
	"context"
	"fmt"
	"net/http"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/tuf"
	"github.com/theupdateframework/go-tuf/v2/metadata/fetcher"
)

// PublicInstance fetches the public Sigstore instance's signing config
// and trusted root from its TUF repository, as cosign does: the TUF root
// built into sigstore-go vouches for them. cacheDir keeps the TUF metadata
// between runs ("" keeps nothing); client makes the requests, so every
// wait is bounded.
func PublicInstance(ctx context.Context, cacheDir string, client *http.Client) (*root.SigningConfig, *root.TrustedRoot, error) {
	// The TUF client's requests do not stop with the context (the client's
	// timeouts bound them): a stopped run returns at once.
	type result struct {
		sc  *root.SigningConfig
		tr  *root.TrustedRoot
		err error
	}
	done := make(chan result, 1)
	go func() {
		sc, tr, err := publicInstance(ctx, cacheDir, client)
		done <- result{sc, tr, err}
	}()
	select {
	case <-ctx.Done():
		return nil, nil, context.Cause(ctx)
	case r := <-done:
		return r.sc, r.tr, r.err
	}
}

func publicInstance(ctx context.Context, cacheDir string, client *http.Client) (*root.SigningConfig, *root.TrustedRoot, error) {
	opts := tuf.DefaultOptions().WithContext(ctx).WithFetcher(fetcher.NewDefaultFetcher().NewFetcherWithHTTPClient(client))
	if cacheDir == "" {
		opts = opts.WithDisableLocalCache()
	} else {
		opts = opts.WithCachePath(cacheDir)
	}
	c, err := tuf.New(opts)
	if err != nil {
		return nil, nil, fmt.Errorf("the public Sigstore instance's TUF repository (%s): %w", opts.RepositoryBaseURL, err)
	}
	tr, err := root.GetTrustedRoot(c)
	if err != nil {
		return nil, nil, fmt.Errorf("the public Sigstore instance's trusted root: %w", err)
	}
	sc, err := root.GetSigningConfig(c)
	if err != nil {
		return nil, nil, fmt.Errorf("the public Sigstore instance's signing config: %w", err)
	}
	return sc, tr, nil
}
