package release

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/provider"
)

// Layouts Read reads, as its error lists them.
const releaseLayouts = `a provider repository tree <label>/<version>/ (capirepo build's dist, a clusterctl overrides folder or local repository), ` +
	`a single version folder, or a flat folder of release assets (a GitHub release download, the kustomize + cp pipeline's out/) ` +
	`holding metadata.yaml, a *components*.yaml or cluster-template*.yaml`

// ReadOptions say which version Read takes and how its notes speak to the
// user.
type ReadOptions struct {
	// Version selects the version in a tree ("" = the newest of each
	// provider as clusterctl orders them, Newest: its newest release, else
	// its newest pre-release); for a flat folder it is the release version ("" = the
	// folder's name when it is one, else the manager image's tag, else none,
	// and the lint rules that need a version are skipped).
	Version string
	// Doing is what the caller does with the release, as the note on a
	// tree's newest version says it ("linting v1.2.0, the newest version
	// in ..."); "" means "reading".
	Doing string
	// Choose is how the user picks another of a tree's versions, as that
	// note says it; "" means option.Version's flag.
	Choose string
}

// Read reads release assets from any folder clusterctl reads them from: a
// provider repository tree (<label>/<version>/ folders: a dist folder, a
// clusterctl overrides folder or local repository), one version folder, or
// a flat folder of assets (a GitHub release download, the kustomize CLI +
// cp pipeline's output). checksums.txt is not needed (Load reads
// capirepo's own dist and checks it).
//
// The provider label of a flat folder is its parent folder's name when
// that is a label, else the objects' provider label. notes say what was
// inferred, for the user.
func Read(root string, o ReadOptions) (rel *Release, notes []string, err error) {
	version := o.Version
	doing, choose := cmp.Or(o.Doing, "reading"), cmp.Or(o.Choose, option.Version.String())
	fi, err := os.Stat(root)
	if err != nil {
		return nil, nil, err
	}
	if !fi.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a folder", root)
	}
	if hasAssets(root) {
		p, n, err := readFlat(root, version)
		if err != nil {
			return nil, nil, err
		}
		return &Release{Version: p.Version, Providers: []*Provider{p}}, n, nil
	}
	// <label>/<version>/ folders, as clusterctl finds them.
	tree, err := ScanTree(root)
	if err != nil {
		return nil, nil, err
	}
	if err := Unreadable(tree); err != nil {
		return nil, nil, err
	}
	rel = &Release{Version: version}
	byLabel := map[provider.ID][]VersionFolder{}
	var ids []provider.ID
	for _, f := range tree {
		if !hasAssets(f.Dir) {
			continue
		}
		if byLabel[f.ID] == nil {
			ids = append(ids, f.ID)
		}
		byLabel[f.ID] = append(byLabel[f.ID], f)
	}
	for _, id := range ids {
		vs := byLabel[id] // oldest first
		want := version
		if want == "" {
			want = Newest(vs)
		}
		i := slices.IndexFunc(vs, func(f VersionFolder) bool { return f.Version == want })
		if version == "" {
			notes = append(notes, fmt.Sprintf("%s: %s %s, %s in %s (choose one with %s)", id.Label(), doing, want, newestSaid(vs, want), filepath.Dir(vs[i].Dir), choose))
		}
		if i < 0 {
			continue
		}
		p, err := readProvider(vs[i].Dir, id, vs[i].Version)
		if err != nil {
			return nil, nil, err
		}
		rel.Providers = append(rel.Providers, p)
	}
	if len(rel.Providers) == 0 {
		what := "release assets"
		if version != "" {
			what = "release assets of version " + version
		}
		return nil, nil, fmt.Errorf("%s holds no %s; looked for %s", root, what, releaseLayouts)
	}
	slices.SortStableFunc(rel.Providers, func(a, b *Provider) int {
		if d := a.ID.Type.Order() - b.ID.Type.Order(); d != 0 {
			return d
		}
		return strings.Compare(a.Label(), b.Label())
	})
	if rel.Version == "" {
		rel.Version = rel.Providers[0].Version
	}
	return rel, notes, nil
}

// newestSaid says which version newest is among the folders vs: the
// newest version, or the newest release when pre-releases are newer
// (clusterctl installs those only when asked for them).
func newestSaid(vs []VersionFolder, newest string) string {
	if highest := vs[len(vs)-1].Version; highest != newest {
		return fmt.Sprintf("the newest release (%s is a pre-release, which clusterctl installs only when asked for it)", highest)
	}
	return "the newest version"
}

// hasAssets says whether a folder holds release assets itself.
func hasAssets(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(entries, func(e os.DirEntry) bool {
		n := e.Name()
		return !e.IsDir() && (n == provider.MetadataFile || // not a regular file: readFiles says why
			(strings.Contains(n, "components") && strings.HasSuffix(n, ".yaml")) ||
			(strings.HasPrefix(n, "cluster-template") && strings.HasSuffix(n, ".yaml")))
	})
}

func readFlat(dir, version string) (*Provider, []string, error) {
	var notes []string
	abs, _ := filepath.Abs(dir)
	if version == "" {
		if _, err := provider.ParseVersion(filepath.Base(abs)); err == nil {
			version = filepath.Base(abs)
		}
	}
	files, err := readFiles(dir)
	if err != nil {
		return nil, nil, err
	}
	id, err := provider.ParseLabel(filepath.Base(filepath.Dir(abs)))
	if err != nil {
		label := labelFromObjects(files)
		if id, err = provider.ParseLabel(label); err != nil {
			return nil, nil, fmt.Errorf("%s: cannot tell the provider: the folder is not in a <label>/<version>/ tree and its objects carry no cluster.x-k8s.io/provider label; put it in <label>/<version>/, or lint the files one by one with %s", dir, option.Provider)
		}
		notes = append(notes, fmt.Sprintf("provider %s, from the objects' %s label", label, provider.ProviderLabel))
	}
	if version == "" {
		if version = imageTag(files); version != "" {
			notes = append(notes, fmt.Sprintf("version %s, from the manager image's tag (set it with %s)", version, option.Version))
		} else {
			notes = append(notes, "no version: the checks that need one are skipped (set it with "+option.Version.String()+")")
		}
	}
	p, err := readProvider(dir, id, version)
	return p, notes, err
}

func readProvider(dir string, id provider.ID, version string) (*Provider, error) {
	files, err := readFiles(dir)
	if err != nil {
		return nil, err
	}
	p := &Provider{ID: id, Version: version}
	names := make([]string, 0, len(files))
	for _, name := range slices.Sorted(maps.Keys(files)) {
		add := p.Add
		if IsAttached(name) { // a signed release's provenance and bundles
			add = p.Attach
		}
		if err := add(name, files[name]); err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		names = append(names, name)
	}
	if c, err := ComponentsFile(id, names); err == nil {
		p.ComponentsFile = c
	}
	return p, nil
}

// readFiles reads the files of a folder but checksums.txt, hidden files
// and subfolders. Anything else that is not a regular file (a symlink, a
// FIFO) is an error naming it: skipped, it would read as a release without
// that file.
func readFiles(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	var errs []error
	for _, e := range entries {
		if e.IsDir() || e.Name() == ChecksumsFile || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if err := fsafe.CheckEntry(dir, e); err != nil {
			errs = append(errs, err)
			continue
		}
		data, err := fsafe.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[e.Name()] = data
	}
	return out, errors.Join(errs...)
}

var (
	providerLabelRE = regexp.MustCompile(`(?m)^\s*cluster\.x-k8s\.io/provider:\s*"?([a-z0-9-]+)"?\s*$`)
	managerImageRE  = regexp.MustCompile(`(?m)^\s*-?\s*image:\s*"?[^\s"@]+:(v[0-9]+\.[0-9]+\.[0-9]+[^\s"@]*)"?\s*$`)
)

// labelFromObjects is the provider label most objects of the components
// carry.
func labelFromObjects(files map[string][]byte) string {
	count := map[string]int{}
	for name, data := range files {
		if strings.Contains(name, "components") {
			for _, m := range providerLabelRE.FindAllSubmatch(data, -1) {
				count[string(m[1])]++
			}
		}
	}
	best := ""
	for _, l := range slices.Sorted(maps.Keys(count)) {
		if count[l] > count[best] {
			best = l
		}
	}
	return best
}

// imageTag is the first vX.Y.Z image tag of the components.
func imageTag(files map[string][]byte) string {
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if strings.Contains(name, "components") {
			if m := managerImageRE.FindSubmatch(files[name]); m != nil {
				if _, err := provider.ParseVersion(string(m[1])); err == nil {
					return string(m[1])
				}
			}
		}
	}
	return ""
}
