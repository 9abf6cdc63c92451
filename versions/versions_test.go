package versions_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"

	"github.com/capirepo/capirepo/versions"
)

// metadata is a metadata.yaml that names its version in a comment (so the
// file clusterctl returns for latest says which version it resolved) and
// maps each series to a contract.
func metadata(version string, series ...string) []byte {
	s := "# " + version + "\napiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n"
	for _, sr := range series {
		var major, minor int
		var contract string
		if _, err := fmt.Sscanf(sr, "%d.%d=%s", &major, &minor, &contract); err != nil {
			panic(sr)
		}
		s += fmt.Sprintf("- major: %d\n  minor: %d\n  contract: %s\n", major, minor, contract)
	}
	return []byte(s)
}

// released is the metadata.yaml of a release: the series of its major up
// to its own, each of this Cluster API's contract, as a release's
// metadata lists them (clusterctl takes the newest series of the contract
// for latest, and a release knows no newer one).
func released(tag string) []byte {
	v, ok := versions.Parse(tag)
	if !ok {
		panic(tag)
	}
	var series []string
	for m := uint(0); m <= v.Minor(); m++ {
		series = append(series, fmt.Sprintf("%d.%d=v1beta2", v.Major(), m))
	}
	return metadata(tag, series...)
}

var resolved = regexp.MustCompile(`^# (\S+)`)

// memory is clusterctl's own in-memory repository holding the versions
// (each with a metadata.yaml) and the versions without one, as a
// versions.Repository: its answers are clusterctl's, errors included (it
// fails on a version it does not hold, as its local repository does).
type memory struct{ *repository.MemoryRepository }

func newMemory(withMetadata map[string][]byte, without ...string) memory {
	m := repository.NewMemoryRepository().WithVersions(without...)
	for v, md := range withMetadata {
		m.WithFile(v, "metadata.yaml", md)
	}
	return memory{m}
}

func (m memory) Versions(ctx context.Context) ([]string, error) { return m.GetVersions(ctx) }
func (m memory) Holds(ctx context.Context, tag string) error {
	_, err := m.GetFile(ctx, tag, "metadata.yaml")
	return err
}
func (m memory) Metadata(ctx context.Context, tag string) ([]byte, error) {
	return m.GetFile(ctx, tag, "metadata.yaml")
}

// clusterctlLatest asks clusterctl's repository for latest and says which
// version it resolved, or its error.
func clusterctlLatest(t *testing.T, m memory) string {
	t.Helper()
	data, err := m.GetFile(context.Background(), "latest", "metadata.yaml")
	if err != nil {
		return "error"
	}
	return resolved.FindStringSubmatch(string(data))[1]
}

func outcome(v string, err error) string {
	if err != nil {
		return "error"
	}
	return v
}

// TestLatest_AsClusterctlResolvesIt: on clusterctl's own repository,
// Latest and Before pick what clusterctl's latestContractRelease picks (the
// release before a version is its latest among the versions below): a
// release before a pre-release, names without the v listed and asked for
// with it, at most five candidates, the series the contract maps to.
func TestLatest_AsClusterctlResolvesIt(t *testing.T) {
	beta2 := func(vs ...string) map[string][]byte {
		out := map[string][]byte{}
		for _, v := range vs {
			out[v] = released(v)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		repo    memory
		latest  string
		before  string // the release before latest
		checkAt string // Before this version instead, when set
	}{
		{name: "a release over a newer pre-release", repo: newMemory(beta2("v0.1.0", "v0.2.0", "v0.3.0-rc.1")), latest: "v0.2.0", before: "v0.1.0"},
		{name: "pre-releases only", repo: newMemory(beta2("v0.3.0-rc.1", "v0.3.0-rc.2")), latest: "v0.3.0-rc.2", before: "v0.3.0-rc.1"},
		{name: "the release before a pre-release is a release", repo: newMemory(beta2("v0.1.0", "v0.2.0", "v0.3.0-rc.1", "v0.3.0-rc.2")), latest: "v0.2.0", checkAt: "v0.3.0-rc.2", before: "v0.2.0"},
		{name: "patches order by number", repo: newMemory(beta2("v0.2.9", "v0.2.10", "v0.2.2")), latest: "v0.2.10", before: "v0.2.9"},
		// clusterctl lists 0.1.5 and asks for v0.1.5, which its
		// repository does not hold: an error, in clusterctl as here.
		{name: "a name without the v, older: not reached", repo: newMemory(beta2("v0.1.0", "v0.2.0", "0.0.9")), latest: "v0.2.0", before: "v0.1.0"},
		{name: "a name without the v, the release before", repo: newMemory(beta2("v0.1.0", "v0.2.0", "0.1.5")), latest: "v0.2.0", before: "error"},
		{name: "a name without the v, the newest", repo: newMemory(beta2("v0.1.0", "0.2.0")), latest: "error", checkAt: "v0.1.1", before: "v0.1.0"},
		{name: "the same version with and without the v", repo: newMemory(beta2("v0.1.0", "v0.2.0", "0.2.0")), latest: "v0.2.0", before: "v0.1.0"},
		{name: "a version without metadata.yaml", repo: newMemory(beta2("v0.1.0"), "v0.2.0"), latest: "error", checkAt: "v0.1.9", before: "v0.1.0"},
		{name: "tags that are no version", repo: newMemory(beta2("v0.1.0"), "nightly", "v0.2"), latest: "v0.1.0", checkAt: "v1.0.0", before: "v0.1.0"},
		{
			name: "the contract maps to an older series",
			repo: newMemory(map[string][]byte{
				"v1.0.3": metadata("v1.0.3", "1.0=v1beta2", "1.1=v1beta3"),
				"v1.0.4": metadata("v1.0.4", "1.0=v1beta2", "1.1=v1beta3"),
				"v1.1.0": metadata("v1.1.0", "1.0=v1beta2", "1.1=v1beta3"),
			}),
			latest: "v1.0.4", before: "v1.0.3",
		},
		{
			name: "metadata that does not decode leaves the latest",
			repo: newMemory(map[string][]byte{
				"v1.0.0": metadata("v1.0.0", "1.0=v1beta2"),
				"v1.1.0": []byte("# v1.1.0\napiVersion: example/v1\nkind: Metadata\n"),
			}),
			latest: "v1.1.0", before: "v1.0.0",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			got, err := versions.Latest(ctx, tc.repo)
			if want := clusterctlLatest(t, tc.repo); want != tc.latest {
				t.Fatalf("clusterctl resolves latest to %s; the case says %s", want, tc.latest)
			}
			if outcome(got, err) != tc.latest {
				t.Errorf("Latest: %q, %v; clusterctl: %s", got, err, tc.latest)
			}

			// The release before: clusterctl's latest of the versions below.
			at := cmp.Or(tc.checkAt, tc.latest)
			all, _ := tc.repo.GetVersions(ctx)
			below, err := versions.Below(all, at)
			if err != nil {
				t.Fatal(err)
			}
			older := map[string][]byte{}
			var without []string
			for _, v := range below {
				if md, err := tc.repo.GetFile(ctx, v, "metadata.yaml"); err == nil {
					older[v] = md
				} else {
					without = append(without, v)
				}
			}
			if want := clusterctlLatest(t, newMemory(older, without...)); want != tc.before {
				t.Fatalf("clusterctl's latest below %s is %s; the case says %s", at, want, tc.before)
			}
			prev, err := versions.Before(ctx, tc.repo, at)
			if outcome(prev, err) != tc.before {
				t.Errorf("Before(%s): %q, %v; clusterctl: %s", at, prev, err, tc.before)
			}
		})
	}
}

// TestLatest_AtMostFiveCandidates: like clusterctl, the choice looks at the
// five newest candidates only; a sixth that holds a release is not found.
func TestLatest_AtMostFiveCandidates(t *testing.T) {
	r := &listed{names: []string{"v0.1.0", "v0.2.0", "v0.3.0", "v0.4.0", "v0.5.0", "v0.6.0", "0.7.0"}, holds: []string{"v0.1.0"}}
	if got, err := versions.Latest(context.Background(), r); !errors.Is(err, versions.ErrNoRelease) {
		t.Errorf("Latest: %q, %v; want ErrNoRelease", got, err)
	}
	if diff := gocmp.Diff([]string{"v0.7.0", "v0.6.0", "v0.5.0", "v0.4.0", "v0.3.0"}, r.asked); diff != "" {
		t.Errorf("asked for (-want +got):\n%s", diff)
	}
	r.holds = append(r.holds, "v0.3.0")
	r.asked = nil
	if got, err := versions.Latest(context.Background(), r); got != "v0.3.0" || err != nil {
		t.Errorf("Latest: %q, %v; want v0.3.0", got, err)
	}
	if diff := gocmp.Diff([]string{"v0.7.0", "v0.6.0", "v0.5.0", "v0.4.0", "v0.3.0"}, r.asked); diff != "" {
		t.Errorf("asked for (-want +got):\n%s", diff)
	}
}

// listed is a repository that holds releases of some of the names it
// lists and says ErrNotFound of the others, as a GitHub release list does
// (clusterctl's GitHub reader passes over those): the names without the v
// are asked for with it, and so passed over.
type listed struct {
	names, holds, asked []string
}

func (l *listed) Versions(context.Context) ([]string, error) { return l.names, nil }
func (l *listed) Holds(_ context.Context, tag string) error {
	l.asked = append(l.asked, tag)
	if slices.Contains(l.holds, tag) {
		return nil
	}
	return fmt.Errorf("no release %s: %w", tag, versions.ErrNotFound)
}
func (l *listed) Metadata(_ context.Context, tag string) ([]byte, error) {
	return released(tag), nil
}

// TestResolve_LatestAndTheReleasesBefore: latest-N is latest and the N
// releases before it, oldest first; a version without a release, or only
// without the v, is passed over; before a release no pre-release is taken.
func TestResolve_LatestAndTheReleasesBefore(t *testing.T) {
	r := &listed{
		names: []string{"v0.1.0", "v0.2.0-rc.1", "v0.2.0", "v0.2.1", "0.2.2", "v0.3.0-rc.1", "v0.2.3"},
		holds: []string{"v0.1.0", "v0.2.0-rc.1", "v0.2.0", "v0.2.1", "v0.3.0-rc.1"},
	}
	for _, tc := range []struct {
		want string
		got  []string
	}{
		{"latest", []string{"v0.2.1"}},
		{"latest-1", []string{"v0.2.0", "v0.2.1"}},
		{"latest-5", []string{"v0.1.0", "v0.2.0", "v0.2.1"}},
		{"v0.2.0-rc.1", []string{"v0.2.0-rc.1"}},
	} {
		w, ok := versions.ParseWant(tc.want)
		if !ok {
			t.Fatalf("ParseWant(%q)", tc.want)
		}
		got, err := versions.Resolve(context.Background(), r, w)
		if err != nil {
			t.Fatalf("%s: %v", tc.want, err)
		}
		if diff := gocmp.Diff(tc.got, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.want, diff)
		}
	}
	if _, err := versions.Resolve(context.Background(), r, versions.Want{Version: "v0.2.2"}); !errors.Is(err, versions.ErrNotFound) {
		t.Errorf("v0.2.2 (listed as 0.2.2 only): %v; want ErrNotFound", err)
	}
	for _, bad := range []string{"latest-x", "latest--1"} {
		if _, ok := versions.ParseWant(bad); ok {
			t.Errorf("ParseWant(%q) ok", bad)
		}
	}
}

// TestOrders: the orders without reading: oldest first; clusterctl's
// latest of versions that all hold a release; the operator's highest.
func TestOrders(t *testing.T) {
	names := []string{"v0.10.0", "v0.3.0-rc.1", "nightly", "v0.2.0", "0.2.5", "v0.3.0-alpha.2", "v0.9.0", "v0.2.0"}
	if diff := gocmp.Diff([]string{"nightly", "v0.2.0", "0.2.5", "v0.3.0-alpha.2", "v0.3.0-rc.1", "v0.9.0", "v0.10.0"}, versions.Sorted(names)); diff != "" {
		t.Errorf("Sorted (-want +got):\n%s", diff)
	}
	var cands []string
	for _, c := range versions.Candidates(names, nil, nil) {
		cands = append(cands, c.Name)
	}
	if diff := gocmp.Diff([]string{"v0.10.0", "v0.9.0", "0.2.5", "v0.2.0", "v0.3.0-rc.1", "v0.3.0-alpha.2"}, cands); diff != "" {
		t.Errorf("Candidates (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		names            []string
		newest, highest  string
		releases, before string
	}{
		{[]string{"v0.1.0", "v0.2.0", "v0.3.0-rc.1"}, "v0.2.0", "v0.3.0-rc.1", "v0.1.0 v0.2.0", "v0.3.0-rc.1"},
		{[]string{"v0.3.0-rc.1", "v0.3.0-rc.2"}, "v0.3.0-rc.2", "v0.3.0-rc.2", "", "v0.3.0"},
		{[]string{"v1.9.0", "v1.10.0", "1.11.0"}, "1.11.0", "v1.11.0", "v1.9.0 v1.10.0 v1.11.0", "v2.0.0"},
		{[]string{"nightly"}, "", "", "", "v1.0.0"},
	} {
		if got := versions.Newest(tc.names); got != tc.newest {
			t.Errorf("Newest(%v) = %q, want %q", tc.names, got, tc.newest)
		}
		if got := versions.Highest(tc.names); got != tc.highest {
			t.Errorf("Highest(%v) = %q, want %q", tc.names, got, tc.highest)
		}
		rs, err := versions.Releases(tc.names, tc.before)
		if err != nil || strings.Join(rs, " ") != tc.releases {
			t.Errorf("Releases(%v, %s) = %v, %v; want %s", tc.names, tc.before, rs, err, tc.releases)
		}
	}
}
