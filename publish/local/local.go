package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/capirepo/capirepo/internal/dirlock"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// Target copies releases into a local provider repository tree,
// Root/<label>/<version>/, the layout clusterctl reads through a file:// URL
// and from its overrides folder, and reads them back (a publish.Source): as
// clusterctl's local repository does, every version folder is a version (the
// temporary folders of an interrupted write are hidden and skipped), and a
// folder with a checksums.txt (written by capirepo) is checked against it.
type Target struct {
	// Root is the repository tree (or overrides folder). It is created if
	// missing; a relative path is made absolute.
	Root string
	// Replace lets a version folder with different content be overwritten.
	Replace bool
	// Kind names the kind of tree in the summary: "local" (default),
	// KindOverrides or "dev".
	Kind string

	// LockTimeout is the longest wait for another capirepo writing into
	// Root; 0 means dirlock.DefaultTimeout (see --lock-timeout).
	LockTimeout time.Duration
	// Progress is told when Publish waits for that other run; nil says nothing.
	Progress io.Writer

	// Locked says the caller already holds Root's lock (dirlock), as the
	// dev loop does for its whole run.
	Locked bool
	// staged, when set, is called after every changed provider folder is
	// staged and before any is renamed into place (tests interrupt here).
	staged func(dirs []string)
}

var (
	_ publish.Target  = (*Target)(nil)
	_ publish.Planner = (*Target)(nil)
	_ publish.Checker = (*Target)(nil)
)

// KindOverrides is the Kind of clusterctl's overrides folder, whose files
// clusterctl reads in place of a provider version's own (Reach.Overrides).
const KindOverrides = "overrides"

// assetName is how a summary names a file of the tree: its path below the
// root, <label>/<version>/<name>, the folder it is written to.
func assetName(p *release.Provider, name string) string {
	return p.Label() + "/" + p.Version + "/" + name
}

// Planned names every file of the release as Publish names it.
func (p *Target) Planned(rel *release.Release) ([]string, error) {
	var out []string
	for _, rp := range rel.Providers {
		for _, f := range rp.Assets() {
			out = append(out, assetName(rp, f.Name))
		}
	}
	return out, nil
}

// ConflictError is returned when a version folder already holds files
// that differ from the release's, or files the release does not have, and
// Replace is off; files only the release has are added without it.
type ConflictError struct {
	Dir string
	// Changed, Added and Removed name files that differ, that the release
	// adds, and that the folder holds but the release does not.
	Changed, Added, Removed []string
}

func (e *ConflictError) Error() string {
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"changed", e.Changed}, {"only in the release", e.Added}, {"only in the folder", e.Removed}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+": "+strings.Join(p.names, ", "))
		}
	}
	return fmt.Sprintf("%s already holds this version with different content (%s): publish a new version, or pass %s to overwrite it",
		e.Dir, strings.Join(parts, "; "), option.Replace)
}

// conflict is the refusal of a version folder that holds other files than
// the release's (changed or removed ones; added ones are not), without
// Replace; nil when Publish may write it.
func (p *Target) conflict(dir string, d dirDiff) error {
	if len(d.changed)+len(d.removed) == 0 || p.Replace {
		return nil
	}
	return &publish.Refusal{Err: &ConflictError{Dir: dir, Changed: d.changed, Added: d.added, Removed: d.removed}}
}

// root is the absolute Root that rel is published into, once rel is one a
// folder tree can hold (CheckRelease).
func (p *Target) root(rel *release.Release) (string, error) {
	if p.Root == "" {
		return "", errors.New("local repository: no root folder given")
	}
	root, err := filepath.Abs(p.Root)
	if err != nil {
		return "", err
	}
	return root, CheckRelease(rel)
}

// Check says, writing nothing, whether Publish would refuse rel: a
// provider's version folder that holds other files (without Replace).
func (p *Target) Check(_ context.Context, rel *release.Release) error {
	root, err := p.root(rel)
	if err != nil {
		return err
	}
	var conflicts []error
	for _, rp := range rel.Providers {
		dir := rp.Dir(root)
		d, err := diffDir(dir, rp.Assets())
		if err != nil {
			return err
		}
		if err := p.conflict(dir, d); err != nil {
			conflicts = append(conflicts, err)
		}
	}
	return errors.Join(conflicts...)
}

// Publish writes every provider of rel into Root/<label>/<version>/. A folder
// that already holds the same files is left alone; each written folder is
// staged beside its target and renamed into place, so clusterctl sees the
// old folder or the new one, never a part. Nothing is written when any
// provider conflicts. The whole publish holds Root's lock.
func (p *Target) Publish(ctx context.Context, rel *release.Release) (*publish.Summary, error) {
	root, err := p.root(rel)
	if err != nil {
		return nil, err
	}
	// One writer at a time per root: another run's half-staged folder is
	// never taken for a leftover, and a second identical publish finds the
	// first one's folder complete.
	if !p.Locked {
		lock, err := dirlock.Acquire(ctx, root, dirlock.Options{Timeout: p.LockTimeout, Wait: p.Progress})
		if err != nil {
			return nil, err
		}
		defer func() { _ = lock.Release() }()
	}
	kind := p.Kind
	if kind == "" {
		kind = "local"
	}
	sum := &publish.Summary{Kind: kind, URL: FileURL(root), Version: rel.Version,
		Uploaded: []string{}, Skipped: []string{}, Replaced: []string{}}

	type write struct {
		p      *release.Provider
		dir    string
		staged string
	}
	var writes []*write
	var conflicts []error
	for _, rp := range rel.Providers {
		dir := rp.Dir(root)
		if err := release.CleanLeftovers(filepath.Dir(dir)); err != nil {
			return nil, err
		}
		d, err := diffDir(dir, rp.Assets())
		if err != nil {
			return nil, err
		}
		name := func(f string) string { return assetName(rp, f) }
		for _, f := range d.same {
			sum.Skipped = append(sum.Skipped, name(f))
		}
		if err := p.conflict(dir, d); err != nil {
			conflicts = append(conflicts, err)
			continue
		}
		switch {
		case !d.exists:
			for _, f := range d.added {
				sum.Uploaded = append(sum.Uploaded, name(f))
			}
		case len(d.changed)+len(d.added)+len(d.removed) == 0:
			// identical: nothing to write
		default:
			// Files the version lacks (a signature, provenance, an SBOM
			// added after publishing) change nothing anybody read: added
			// without --replace. Changed and removed files are replaced.
			for _, f := range d.added {
				sum.Uploaded = append(sum.Uploaded, name(f))
			}
			for _, f := range slices.Concat(d.changed, d.removed) {
				sum.Replaced = append(sum.Replaced, name(f))
			}
		}
		if d.exists && len(d.changed)+len(d.added)+len(d.removed) == 0 {
			continue
		}
		writes = append(writes, &write{p: rp, dir: dir})
		for _, f := range rp.Assets() {
			sum.BytesUploaded += int64(len(f.Data))
		}
	}
	if err := errors.Join(conflicts...); err != nil {
		return nil, err
	}
	defer func() {
		for _, w := range writes {
			if w.staged != "" {
				_ = os.RemoveAll(w.staged)
			}
		}
	}()
	// A signal stops the run before anything moves into place (the staged
	// folders are removed); once folders move, all of them do, so the root
	// never holds some providers of the release and not the others.
	stopped := func() error {
		if ctx.Err() == nil || len(writes) == 0 {
			return nil
		}
		return fmt.Errorf("%w: stopped before anything was moved into %s, which is as it was (nothing published)", context.Cause(ctx), root)
	}
	var stagedDirs []string
	for _, w := range writes {
		if err := stopped(); err != nil {
			return nil, err
		}
		if w.staged, err = release.StageDir(filepath.Dir(w.dir), w.p.Version, w.p.Assets()); err != nil {
			return nil, fmt.Errorf("write %s: %w", w.dir, err)
		}
		stagedDirs = append(stagedDirs, w.staged)
	}
	if p.staged != nil {
		p.staged(stagedDirs)
	}
	if err := stopped(); err != nil {
		return nil, err
	}
	for _, w := range writes {
		if err := release.ReplaceDir(w.staged, w.dir); err != nil {
			return nil, fmt.Errorf("move %s into place: %w", w.dir, err)
		}
		w.staged = ""
	}
	for _, rp := range rel.Providers {
		sum.Providers = append(sum.Providers, publish.ProviderURL{
			Name: rp.ID.Name, Type: string(rp.ID.Type),
			URL: FileURL(filepath.Join(rp.Dir(root), rp.ComponentsFile)),
		})
	}
	return sum, nil
}

// FileURL returns the file:// URL of an absolute path.
func FileURL(abs string) string { return "file://" + filepath.ToSlash(abs) }

// TargetURL is the target URL of a folder tree: file://DIR.
func TargetURL(dir string) string { return "file://" + dir }

// Folder is a folder argument as a path: file://DIR (as a clusterctl
// provider URL or a target names a folder) is DIR; anything else is taken
// as it is.
func Folder(arg string) (string, error) {
	rest, ok := strings.CutPrefix(arg, "file://")
	if !ok {
		return arg, nil
	}
	dir, err := ParseURL(rest)
	if err != nil {
		return "", publish.UsageError{Err: fmt.Errorf("%s: %w", arg, err)}
	}
	return dir, nil
}

// CheckRelease refuses a release whose labels, versions or file names could
// leave the version folder or that clusterctl could not read back.
func CheckRelease(rel *release.Release) error {
	if rel == nil || len(rel.Providers) == 0 {
		return errors.New("release has no providers: run capirepo build first")
	}
	if _, err := provider.ParseVersion(rel.Version); err != nil {
		return fmt.Errorf("release version: %w", err)
	}
	seen := map[string]bool{}
	for _, p := range rel.Providers {
		label := p.Label()
		if id, err := provider.ParseLabel(label); (err != nil || id != p.ID) && p.ID != provider.CertManager {
			return fmt.Errorf("provider %q: not a provider label (e.g. infrastructure-aws): %w", label, err)
		}
		if err := provider.CheckName(p.ID.Name); err != nil {
			return fmt.Errorf("provider %q: %w", label, err)
		}
		key := label + "/" + p.Version
		if seen[key] {
			return fmt.Errorf("provider %s version %s is in the release twice", label, p.Version)
		}
		seen[key] = true
		if _, err := provider.ParseVersion(p.Version); err != nil {
			return fmt.Errorf("provider %s: %w", label, err)
		}
		for _, f := range p.Files {
			if err := provider.CheckFileName("file name", f.Name); err != nil {
				return fmt.Errorf("provider %s %s: %w", label, p.Version, err)
			}
		}
		if _, ok := p.File(p.ComponentsFile); !ok || p.ComponentsFile == "" {
			return fmt.Errorf("provider %s %s: components file %q is not among its files", label, p.Version, p.ComponentsFile)
		}
	}
	return nil
}

type dirDiff struct {
	exists                        bool
	same, changed, added, removed []string
}

// diffDir compares a version folder with the files that should be in it.
func diffDir(dir string, want []release.File) (dirDiff, error) {
	var d dirDiff
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		for _, f := range want {
			d.added = append(d.added, f.Name)
		}
		slices.Sort(d.added)
		return d, nil
	}
	if err != nil {
		return d, fmt.Errorf("read %s: %w", dir, err)
	}
	d.exists = true
	have := map[string]bool{}
	for _, e := range entries {
		have[e.Name()] = true
	}
	for _, f := range want {
		if !have[f.Name] {
			d.added = append(d.added, f.Name)
			continue
		}
		delete(have, f.Name)
		data, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			return d, fmt.Errorf("read %s: %w", filepath.Join(dir, f.Name), err)
		}
		if bytes.Equal(data, f.Data) || strings.HasSuffix(f.Name, release.BundleSuffix) && publish.SameSignature(data, f.Data) {
			d.same = append(d.same, f.Name)
		} else {
			d.changed = append(d.changed, f.Name)
		}
	}
	for name := range have {
		d.removed = append(d.removed, name)
	}
	slices.Sort(d.changed)
	slices.Sort(d.added)
	slices.Sort(d.removed)
	return d, nil
}

// ParseURL reads the folder of a file://DIR target URL (rest is what follows
// file://; a relative DIR is taken from the working folder).
func ParseURL(rest string) (dir string, err error) {
	if rest == "" {
		return "", errors.New("want file://DIR")
	}
	return rest, nil
}

// FromProviderURL recognizes clusterctl's local repository URL,
// file:///ROOT/LABEL/VERSION/COMPONENTS-FILE, VERSION being a version or
// latest.
func FromProviderURL(u *url.URL) (root, version, components string, ok bool) {
	seg := strings.Split(strings.Trim(u.Path, "/"), "/")
	if u.Scheme != "file" || len(seg) < 3 {
		return "", "", "", false
	}
	return "/" + strings.Join(seg[:len(seg)-3], "/"), seg[len(seg)-2], seg[len(seg)-1], true
}

// Clusterctl says how clusterctl reads the tree: through file:// URLs of
// its components files; clusterctl's overrides folder (KindOverrides) in
// place of each provider version's own files.
func (p *Target) Clusterctl() publish.Reach {
	return publish.Reach{Overrides: p.Kind == KindOverrides, ProviderURL: func(ref publish.Ref) string {
		root, err := filepath.Abs(p.Root)
		if err != nil {
			root = p.Root
		}
		components := ref.Components
		if components == "" {
			components = ref.ID.DefaultComponentsFile()
		}
		return FileURL(filepath.Join(root, ref.ID.Label(), ref.Version, components))
	}}
}
