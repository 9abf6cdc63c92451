package pipeline

import (
	"context"

	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
)

// OpenMirrorTarget opens the target mirror writes to, to publish, and
// refuses one the mirror would be of no use in before anything is read or
// copied: a target nobody could install from (a GitLab host clusterctl does
// not read), and one whose single release per version cannot hold the
// providers of several upstreams side by side (a GitHub release). The
// errors are publish.UsageErrors.
func OpenMirrorTarget(ctx context.Context, loc targets.Location, o targets.Options) (publish.Target, error) {
	// Opened to read first, which needs no credentials where reading
	// does not, so a target mirror cannot use is refused before the user
	// is asked for a token.
	if t, err := loc.Open(ctx, o); err == nil {
		if f, ok := t.(publish.Flat); ok {
			return nil, publish.Usagef("%q: %s", loc.URL, f.Flat())
		}
		if r := t.Clusterctl(); r.ProviderURL == nil && r.Reader == "" {
			return nil, publish.Usagef("%q: %s, so it could not install from this mirror", loc.URL, r.Why)
		}
	}
	o.Publish = true
	return loc.Open(ctx, o)
}
