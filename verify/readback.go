package verify

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// Published is one provider version to read back from a target.
type Published struct {
	Ref publish.Ref
	// Files name the files clusterctl reads of it (Repo.Files).
	Files []string
	// Built, when set, is the provider as it was built: every file read
	// back through the target's Source must be one of its files, byte for
	// byte.
	Built *release.Provider
}

// ReadBack reads provider versions back from a target the way its readers
// will: through clusterctl's client by the target's provider URLs; or, for
// a target clusterctl cannot read by URL (an OCI registry, which
// cluster-api-operator reads; a GitHub Enterprise server), through the
// target's Source by the rules it follows, then through clusterctl's client
// from memory. It writes what was read to log; bySource says which way it
// read (ReadBackWay says it in words). The release's verify steps and
// mirror read targets back here.
func ReadBack(ctx context.Context, t publish.Target, url string, vs []Published, o Options, log io.Writer) (rep *Report, bySource bool, err error) {
	if len(vs) == 0 {
		return nil, false, nil
	}
	reach := t.Clusterctl()
	if reach.ProviderURL != nil {
		repos := make([]Repo, len(vs))
		for i, v := range vs {
			repos[i] = Repo{ID: v.Ref.ID, URL: reach.ProviderURL(v.Ref), Version: v.Ref.Version, Files: v.Files}
		}
		rep, err := Repository(ctx, repos, o)
		if rep != nil {
			_ = rep.WriteText(log)
		}
		return rep, false, err
	}
	var got []*release.Provider
	for _, v := range vs {
		rp, err := publish.Read(ctx, t, v.Ref)
		if err != nil {
			return nil, true, fmt.Errorf("read back %s %s from %s: %w", v.Ref.ID.Label(), v.Ref.Version, url, err)
		}
		if v.Built != nil {
			for _, f := range rp.Files {
				if want, ok := v.Built.File(f.Name); !ok || !bytes.Equal(want.Data, f.Data) {
					return nil, true, fmt.Errorf("read back %s %s from %s: %s is not the file that was built", v.Ref.ID.Label(), v.Ref.Version, url, f.Name)
				}
			}
		}
		got = append(got, rp)
	}
	rep, err = Providers(ctx, got, url, o)
	if rep != nil {
		_ = rep.WriteText(log)
	}
	return rep, true, err
}

// ReadBackWay says how ReadBack read a target it read through its Source.
func ReadBackWay(reach publish.Reach) string {
	if reach.Reader != "" {
		return "by " + reach.Reader + "'s rules, then through clusterctl"
	}
	return "through the target (" + reach.Why + "), then through clusterctl from memory"
}
