package versions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/capirepo/capirepo/provider"
)

// Version is a name a repository lists that clusterctl takes as a version.
type Version struct {
	// Name is the name as the repository lists it: a tag, a folder, a
	// package version, with or without the v.
	Name string
	sv   *version.Version
}

// Parse returns the version clusterctl takes name as, and whether it takes
// it: every name version.ParseSemantic accepts (repository_local.go
// GetVersions, repository_github.go getVersions).
func Parse(name string) (Version, bool) {
	sv, err := version.ParseSemantic(name)
	if err != nil {
		return Version{}, false
	}
	return Version{Name: name, sv: sv}, true
}

// Tag is what clusterctl asks a repository for when it picks this
// version: "v" and the semantic version, whatever the listed name
// (repository_versions.go latestPatchRelease).
func (v Version) Tag() string { return "v" + v.sv.String() }

// PreRelease says whether the version is a pre-release.
func (v Version) PreRelease() bool { return v.sv.PreRelease() != "" }

// Major and Minor are the version's release series.
func (v Version) Major() uint { return v.sv.Major() }
func (v Version) Minor() uint { return v.sv.Minor() }

// Less says whether v is below o by semantic version precedence.
func (v Version) Less(o Version) bool { return v.sv.LessThan(o.sv) }

// parseAll returns the names clusterctl takes as versions, sorted by name
// (repositories list in any order; the order of equal versions is then
// the same on every run).
func parseAll(names []string) []Version {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	out := make([]Version, 0, len(sorted))
	for _, n := range slices.Compact(sorted) {
		if v, ok := Parse(n); ok {
			out = append(out, v)
		}
	}
	return out
}

// Candidates are the versions among names as clusterctl orders them to
// find the latest (latestPatchRelease): releases before pre-releases,
// each newest first; names it does not take as versions are dropped, and
// with major (and minor) only that series is kept.
func Candidates(names []string, major, minor *int32) []Version {
	var out []Version
	for _, v := range parseAll(names) {
		if (major != nil && v.Major() != uint(*major)) || (minor != nil && v.Minor() != uint(*minor)) {
			continue
		}
		out = append(out, v)
	}
	slices.SortStableFunc(out, candidateOrder)
	return out
}

// candidateOrder is clusterctl's sort of latestPatchRelease.
func candidateOrder(a, b Version) int {
	switch ap, bp := a.PreRelease(), b.PreRelease(); {
	case ap && !bp:
		return 1
	case !ap && bp:
		return -1
	}
	switch {
	case b.Less(a):
		return -1
	case a.Less(b):
		return 1
	}
	return 0
}

// Compare orders two names oldest first by semantic version precedence
// (v0.3.0-rc.1 before v0.3.0, 1.2.0 and v1.2.0 side by side), the order
// in which versions are listed; names clusterctl does not take as versions
// come first. Equal versions are ordered by name.
func Compare(a, b string) int {
	av, aok := Parse(a)
	bv, bok := Parse(b)
	switch {
	case aok && bok && av.Less(bv):
		return -1
	case aok && bok && bv.Less(av):
		return 1
	case aok != bok:
		if aok {
			return 1
		}
		return -1
	}
	return strings.Compare(a, b)
}

// Sorted returns the names oldest first (Compare), each once.
func Sorted(names []string) []string {
	out := slices.Clone(names)
	slices.SortFunc(out, Compare)
	return slices.Compact(out)
}

// Newest is the first of the names in clusterctl's order: the version
// LatestPatch resolves to when each of them holds a release (a tree
// capirepo has read, the versions a mirror copied): the newest release,
// else the newest pre-release. It is the name as listed; "" when none is a
// version.
func Newest(names []string) string {
	cs := Candidates(names, nil, nil)
	if len(cs) == 0 {
		return ""
	}
	return cs[0].Name
}

// Highest is the version cluster-api-operator installs for a Provider
// without spec.version (phase_load.go getLatestVersion): the highest by
// semantic version, pre-releases included, asked for as "v" and the
// semantic version like clusterctl's; "" when none is a version.
func Highest(names []string) string {
	vs := parseAll(names)
	if len(vs) == 0 {
		return ""
	}
	return slices.MaxFunc(vs, func(a, b Version) int { return Compare(a.Name, b.Name) }).Tag()
}

// Below returns the names whose version is below v's, as listed.
func Below(names []string, v string) ([]string, error) {
	bv, ok := Parse(v)
	if !ok {
		return nil, fmt.Errorf("version %q is not a semantic version", v)
	}
	var out []string
	for _, c := range parseAll(names) {
		if c.Less(bv) {
			out = append(out, c.Name)
		}
	}
	return out, nil
}

// Releases returns the tags of the releases (no pre-release) among names
// that are below v, oldest first: every release a user may run before v.
func Releases(names []string, v string) ([]string, error) {
	below, err := Below(names, v)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range parseAll(below) {
		if !c.PreRelease() && !slices.Contains(out, c.Tag()) {
			out = append(out, c.Tag())
		}
	}
	slices.SortFunc(out, Compare)
	return out, nil
}

// Want is a version a user asks for by name: latest, latest-N (latest and
// the N versions before it), or one version.
type Want struct {
	// Latest is set for latest and latest-N; Before is the N.
	Latest bool
	Before int
	// Version is the one version asked for, when not Latest.
	Version string
}

// ParseWant reads latest, latest-N or a version name; ok is false for a
// latest-N whose N is no count.
func ParseWant(s string) (w Want, ok bool) {
	if s == "latest" {
		return Want{Latest: true}, true
	}
	if n, found := strings.CutPrefix(s, "latest-"); found {
		i, err := strconv.Atoi(n)
		return Want{Latest: true, Before: i}, err == nil && i >= 0
	}
	return Want{Version: s}, true
}

// ErrNotFound is what a Repository wraps when it holds no release of a
// version: the choice passes over it, as clusterctl passes over its
// errNotFound.
var ErrNotFound = errors.New("not found")

// ErrNoRelease is the choice finding no candidate that holds a release
// (clusterctl: "failed to find releases tagged with a valid semantic
// version number").
var ErrNoRelease = errors.New("no release tagged with a semantic version holds a metadata.yaml")

// Repository is what the choice reads of a repository: the calls of
// clusterctl's Repository its latestContractRelease makes.
type Repository interface {
	// Versions lists the names the repository holds, in any order
	// (GetVersions).
	Versions(ctx context.Context) ([]string, error)
	// Holds says whether the repository holds a release of tag (the
	// metadata.yaml clusterctl fetches to find out): nil if it does, an
	// error wrapping ErrNotFound if it does not, any other error if it
	// cannot tell, which stops the choice.
	Holds(ctx context.Context, tag string) error
	// Metadata reads tag's metadata.yaml (an error wrapping ErrNotFound
	// when there is none).
	Metadata(ctx context.Context, tag string) ([]byte, error)
}

// maxTried is how many candidates clusterctl looks at ("Limit the number
// of searchable versions by 5").
const maxTried = 5

// pick returns the tag of the first of the candidates (at most maxTried)
// the repository holds a release of.
func pick(ctx context.Context, r Repository, cands []Version) (string, error) {
	for _, c := range cands[:min(maxTried, len(cands))] {
		err := r.Holds(ctx, c.Tag())
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return "", err
		}
		return c.Tag(), nil
	}
	return "", ErrNoRelease
}

// LatestPatch is clusterctl's latestPatchRelease: of the newest candidates
// (of the series major.minor, when given), the first the repository holds
// a release of.
func LatestPatch(ctx context.Context, r Repository, major, minor *int32) (string, error) {
	names, err := r.Versions(ctx)
	if err != nil {
		return "", fmt.Errorf("list versions: %w", err)
	}
	return pick(ctx, r, Candidates(names, major, minor))
}

// Latest is the version clusterctl installs for latest
// (latestContractRelease): LatestPatch; and when that release's
// metadata.yaml maps the contract of this Cluster API to another release
// series, the newest patch of that series. Metadata that cannot be read
// or decoded leaves the latest as it is, as it leaves clusterctl's.
func Latest(ctx context.Context, r Repository) (string, error) {
	latest, err := LatestPatch(ctx, r, nil, nil)
	if err != nil {
		return "", err
	}
	data, err := r.Metadata(ctx, latest)
	if errors.Is(err, ErrNotFound) {
		return "", err
	}
	if err != nil {
		return latest, nil //nolint:nilerr // clusterctl takes the latest when its metadata cannot be read
	}
	// clusterctl decodes the file by its scheme: the apiVersion and kind
	// must be right; what else the lint says of it does not matter here.
	md, problems := provider.CheckMetadata(data)
	if md == nil || slices.ContainsFunc(problems, func(p provider.MetadataProblem) bool {
		return p.Kind == provider.MetadataInvalid && (p.Field == "apiVersion" || p.Field == "kind")
	}) {
		return latest, nil // as clusterctl, when the metadata cannot be decoded
	}
	series := md.GetReleaseSeriesForContract(clusterv1.GroupVersion.Version)
	if series == nil {
		return latest, nil
	}
	lv, _ := Parse(latest)
	if lv.Major() != uint(series.Major) || lv.Minor() != uint(series.Minor) {
		return LatestPatch(ctx, r, &series.Major, &series.Minor)
	}
	return latest, nil
}

// Before is the release before v at the repository: LatestPatch among the
// versions below v's (the newest release below it, else the newest
// pre-release; at most five tried), which is what a user running latest
// had installed before v existed. "" when the repository holds none.
func Before(ctx context.Context, r Repository, v string) (string, error) {
	names, err := r.Versions(ctx)
	if err != nil {
		return "", fmt.Errorf("list versions: %w", err)
	}
	below, err := Below(names, v)
	if err != nil {
		return "", err
	}
	prev, err := pick(ctx, r, Candidates(below, nil, nil))
	if errors.Is(err, ErrNoRelease) {
		return "", nil
	}
	return prev, err
}

// Resolve returns the versions w names at the repository, oldest first:
// the one version (which the repository must list), or Latest and the
// Before versions before it, each the release before the last (only
// releases before a release: a pre-release of an older series is not
// what a user of a release upgrades from).
func Resolve(ctx context.Context, r Repository, w Want) ([]string, error) {
	if !w.Latest {
		names, err := r.Versions(ctx)
		if err != nil {
			return nil, fmt.Errorf("list versions: %w", err)
		}
		if !slices.Contains(names, w.Version) {
			return nil, fmt.Errorf("%s: %w", w.Version, ErrNotFound)
		}
		return []string{w.Version}, nil
	}
	latest, err := Latest(ctx, r)
	if err != nil {
		return nil, err
	}
	lv, _ := Parse(latest)
	out := []string{latest}
	for cur := latest; len(out) <= w.Before; {
		prev, err := Before(ctx, r, cur)
		if err != nil {
			return nil, err
		}
		pv, _ := Parse(prev)
		if prev == "" || (pv.PreRelease() && !lv.PreRelease()) {
			break
		}
		out = append(out, prev)
		cur = prev
	}
	slices.SortFunc(out, Compare)
	return out, nil
}
