package sign

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// ReleaseOptions say what SignRelease makes.
type ReleaseOptions struct {
	// Provenance writes provenance.intoto.json for each provider (and for
	// the flat set of several) and signs it too.
	Provenance bool
	// Source is the repository the provenance names.
	Source string
	// SourceHint says how a user names the repository, for the warning on
	// a provenance made without one (the caller's words: "pass --source
	// URL"); "" says it generally.
	SourceHint string
	// Log hears of each signature: what, by whom, where it was logged.
	Log io.Writer
}

// Signed is one bundle SignRelease made.
type Signed struct {
	// File is what was signed, as DIR/NAME: <label>/<version>/checksums.txt,
	// or flat/<version>/checksums.txt for a flat set.
	File string `json:"file"`
	// Bundle is the bundle's file name, beside the file.
	Bundle string `json:"bundle"`
	// Made says the file was written by this signing (a provenance where
	// the release held none); a file found is signed as it is, never made
	// again.
	Made bool `json:"made,omitempty"`
	// Warning says what a user should know of the file signed: a
	// provenance that names no repository, or another one than Source.
	Warning string `json:"warning,omitempty"`
	*Signature
}

// Note says, for the output, whether a provenance signed was made here or
// found: "" for checksums.txt.
func (s Signed) Note() string {
	switch {
	case path.Base(s.File) != release.ProvenanceFile:
		return ""
	case s.Made:
		return " (provenance written here: the release held none)"
	default:
		return " (provenance signed as found)"
	}
}

// SignRelease signs each provider's checksums.txt (which names every
// release file by sha256) and its provenance, and attaches the bundles to
// the provider; for a release of several providers, the flat set a GitHub
// release holds is signed the same way (Release.Attached). A provenance the
// release holds is signed as it is, after checking it names the files with
// their sha256 and the release's version: a signing step never edits what
// it attests. With Provenance, one is made where there is none (naming the
// files, the version and the providers), and the log says so. Providers
// that hold no checksums.txt of capirepo's (a mirrored release) are left as
// they are.
func SignRelease(ctx context.Context, s *Signer, rel *release.Release, o ReleaseOptions) ([]Signed, error) {
	return signRelease(ctx, s.SignBlob, rel, o)
}

// Plan returns a copy of rel holding what SignRelease would attach to it,
// without signing anything (a dry run's count of what is published): the
// provenance it would make, as it would make it (its bytes depend only on
// the files), and each bundle, empty (a bundle exists only once signed).
func Plan(rel *release.Release, o ReleaseOptions) (*release.Release, error) {
	c := rel.Clone()
	o.Log = nil // what it would do is said by the caller
	_, err := signRelease(context.Background(), func(context.Context, []byte) (*Signature, error) { return &Signature{}, nil }, c, o)
	return c, err
}

// signRelease is SignRelease with the signing of one blob given.
func signRelease(ctx context.Context, signBlob func(context.Context, []byte) (*Signature, error), rel *release.Release, o ReleaseOptions) ([]Signed, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	var out []Signed
	signSet := func(dir string, labels []string, listed []release.File, found func(string) (release.File, bool), attach func(string, []byte) error) error {
		sums := listed[len(listed)-1]
		todo := []release.File{sums}
		made, warning := false, ""
		if pf, ok := found(release.ProvenanceFile); ok {
			byName := map[string]release.File{}
			for _, f := range listed {
				byName[f.Name] = f
			}
			if err := checkProvenance(pf.Data, byName, VerifyFilesOptions{Version: rel.Version}); err != nil {
				return fmt.Errorf("%s: %w: it is signed as it is, never made again; remove it to have one made", path.Join(dir, pf.Name), err)
			}
			fmt.Fprintf(o.Log, "  signing %s as found\n", path.Join(dir, pf.Name))
			todo = append(todo, pf)
			warning = foundSourceWarning(path.Join(dir, pf.Name), pf.Data, o.Source)
		} else if o.Provenance {
			pf, err := publish.Provenance(listed, publish.ProvenanceSource{Repository: o.Source, Version: rel.Version, Providers: labels})
			if err != nil {
				return err
			}
			if err := attach(pf.Name, pf.Data); err != nil {
				return err
			}
			fmt.Fprintf(o.Log, "  wrote %s (the release held none)\n", path.Join(dir, pf.Name))
			todo, made = append(todo, pf), true
			if o.Source == "" {
				hint := o.SourceHint
				if hint == "" {
					hint = "give the repository the release is built from"
				}
				warning = fmt.Sprintf("%s names no repository (\"repository\": \"\"): none was given and none was found (no CI repository, no git origin remote); users cannot tell from it where the release comes from: %s",
					path.Join(dir, pf.Name), hint)
			}
		} else {
			fmt.Fprintf(o.Log, "  %s: no %s: nothing signed names version %s, so verify %s refuses it unless %s\n", dir, release.ProvenanceFile, rel.Version, option.Signatures, option.AllowMissingProvenance)
		}
		if warning != "" {
			fmt.Fprintf(o.Log, "  warning: %s\n", warning)
		}
		for _, f := range todo {
			sig, err := signBlob(ctx, f.Data)
			if err != nil {
				return fmt.Errorf("sign %s/%s: %w", dir, f.Name, err)
			}
			if err := attach(BundleName(f.Name), sig.Bundle); err != nil {
				return err
			}
			sd := Signed{File: path.Join(dir, f.Name), Bundle: BundleName(f.Name), Made: made && f.Name == release.ProvenanceFile, Signature: sig}
			if f.Name == release.ProvenanceFile {
				sd.Warning = warning
			}
			out = append(out, sd)
			fmt.Fprintf(o.Log, "  signed %s %s\n", sd.File, sig)
		}
		return nil
	}
	var labels []string
	for _, p := range rel.Providers {
		labels = append(labels, p.Label())
	}
	for _, p := range rel.Providers {
		if p.NoChecksums {
			continue
		}
		if err := signSet(path.Join(p.Label(), p.Version), []string{p.Label()}, p.Listed(), p.AttachedFile, p.Attach); err != nil {
			return nil, err
		}
	}
	if len(rel.Providers) > 1 {
		listed, err := rel.FlatListed()
		if err != nil {
			// Not one flat set (two providers with different files of one
			// name): no GitHub release can hold it, so there is nothing to sign.
			fmt.Fprintf(o.Log, "  the providers' files are not one flat set (%v): no flat checksums.txt signed\n", err)
			return out, nil
		}
		// A flat provenance the release holds (release.Load reads one made
		// for the same files) is kept; the bundles are made again.
		attached := slices.DeleteFunc(slices.Clone(rel.Attached), func(f release.File) bool { return f.Name != release.ProvenanceFile })
		foundFlat := func(name string) (release.File, bool) {
			i := slices.IndexFunc(attached, func(f release.File) bool { return f.Name == name })
			if i < 0 {
				return release.File{}, false
			}
			return attached[i], true
		}
		err = signSet(path.Join(release.FlatDir, rel.Version), labels, listed, foundFlat, func(name string, data []byte) error {
			attached = slices.DeleteFunc(attached, func(f release.File) bool { return f.Name == name })
			attached = append(attached, release.File{Name: name, Data: data})
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.SortFunc(attached, func(a, b release.File) int { return strings.Compare(a.Name, b.Name) })
		rel.Attached = attached
	}
	return out, nil
}

// foundSourceWarning says when the source given is not what a provenance
// found names: the provenance is signed as it is, so the source is not
// used, and a user who gave it should know.
func foundSourceWarning(file string, data []byte, source string) string {
	if source == "" {
		return ""
	}
	st, err := publish.ReadProvenance(data)
	if err != nil || st.Repository != nil && *st.Repository == source {
		return ""
	}
	named := "no repository"
	if st.Repository != nil && *st.Repository != "" {
		named = "repository " + *st.Repository
	}
	return fmt.Sprintf("%s names %s, not %s: a provenance found is signed as it is, never made again, so %s is not used; remove the provenance to have one made naming it",
		file, named, source, source)
}

// Checked is what VerifyFiles found in one set of files.
type Checked struct {
	// Dir names the set: <label>/<version>, flat/<version>, or a URL.
	Dir string `json:"dir"`
	// Files counts the files checked against the signed checksums.txt.
	Files int `json:"files"`
	// Signatures are the bundles that checked out, by the file they sign.
	Signatures map[string]*Signature `json:"signatures"`
}

// VerifyFilesOptions say how strict VerifyFiles is.
type VerifyFilesOptions struct {
	// Partial allows files the signed checksums.txt lists to be missing: a
	// mirror holds only what clusterctl reads, and a GitHub release's
	// checksums.txt also lists other providers' files.
	Partial bool
	// Version is the version the files are read as (the folder's name, the
	// tag): a signed provenance of another version is refused, so a signed
	// older release cannot pass for a newer one (a rollback), and so is a
	// set without a provenance unless the verifier accepts one
	// (VerifyOptions.AllowMissingProvenance). "" checks nothing.
	Version string
	// Provider is the label the files are read as: a signed provenance
	// that names its providers must name it. "" checks nothing (a flat set).
	Provider string
}

// VerifyFiles checks one set of files (a provider version folder, a
// release's flat set): checksums.txt is signed for v
// (checksums.txt.sigstore.json), every other file is listed in it with its
// sha256, and a provenance.intoto.json is signed too and names those files
// with the same sha256. Each problem names its file under dir; all are
// reported, joined.
func VerifyFiles(v *Verifier, dir string, files []release.File, o VerifyFilesOptions) (*Checked, error) {
	byName := map[string]release.File{}
	for _, f := range files {
		byName[f.Name] = f
	}
	at := func(name string) string { return path.Join(dir, name) }
	res := &Checked{Dir: dir, Signatures: map[string]*Signature{}}
	sums, ok := byName[release.ChecksumsFile]
	if !ok {
		return nil, fmt.Errorf("%s: nothing is signed: no %s (and so no %s), which is what a signature covers: an unsigned release cannot pass a signature check; sign it with capirepo sign, or check it without signatures", dir, release.ChecksumsFile, BundleName(release.ChecksumsFile))
	}
	verifyOne := func(f release.File) error {
		b, ok := byName[BundleName(f.Name)]
		if !ok {
			return fmt.Errorf("%s is not signed: no %s", at(f.Name), BundleName(f.Name))
		}
		sig, err := v.VerifyBlob(f.Data, b.Data)
		if err != nil {
			return fmt.Errorf("%s does not sign %s for %s: %w", at(b.Name), at(f.Name), v, err)
		}
		res.Signatures[f.Name] = sig
		return nil
	}
	if err := verifyOne(sums); err != nil {
		return nil, err // nothing else can be trusted
	}
	listed, err := release.ParseChecksums(sums.Data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at(release.ChecksumsFile), err)
	}
	var errs []error
	for _, f := range files {
		if f.Name == release.ChecksumsFile || release.IsAttached(f.Name) {
			continue
		}
		want, ok := listed[f.Name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s is not listed in the signed %s", at(f.Name), release.ChecksumsFile))
		case want != f.SHA256():
			errs = append(errs, fmt.Errorf("%s has sha256 %s, the signed %s says %s: the file was changed after it was signed",
				at(f.Name), publish.ShortSum(f.SHA256()), release.ChecksumsFile, publish.ShortSum(want)))
		default:
			res.Files++
		}
	}
	if !o.Partial {
		for _, name := range slices.Sorted(maps.Keys(listed)) {
			if _, ok := byName[name]; !ok {
				errs = append(errs, fmt.Errorf("%s is listed in the signed %s and missing", at(name), release.ChecksumsFile))
			}
		}
	}
	pf, ok := byName[release.ProvenanceFile]
	switch {
	case !ok && o.Version != "" && !v.allowNoProvenance:
		errs = append(errs, fmt.Errorf("%s: no %s: the signed %s names files, not a version, so nothing signed tells these files from another release's put under %s (a rollback); capirepo sign writes and signs one unless %s=false: sign the release again, or pass %s to accept a release whose version nothing signed names",
			dir, release.ProvenanceFile, release.ChecksumsFile, o.Version, option.Provenance, option.AllowMissingProvenance))
	case ok:
		if err := verifyOne(pf); err != nil {
			errs = append(errs, err)
		} else if err := checkProvenance(pf.Data, byName, o); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", at(pf.Name), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return res, nil
}

// checkProvenance checks the statement's subjects against the files, and
// its version and providers against those the files are read as.
func checkProvenance(data []byte, files map[string]release.File, o VerifyFilesOptions) error {
	st, err := publish.ReadProvenance(data)
	if err != nil {
		return fmt.Errorf("not an in-toto statement: %w", err)
	}
	var errs []error
	switch {
	case o.Version == "":
	case st.Version == nil || *st.Version == "":
		errs = append(errs, fmt.Errorf("names no version (predicate.buildDefinition.externalParameters.version), so the release it attests cannot be told from %s", o.Version))
	case *st.Version != o.Version:
		errs = append(errs, fmt.Errorf("attests version %s, not %s: these are the files of another release, under the name of this one (a rollback?)", *st.Version, o.Version))
	}
	if o.Provider != "" && len(st.Providers) > 0 && !slices.Contains(st.Providers, o.Provider) {
		errs = append(errs, fmt.Errorf("attests the files of %s, not of %s: these are another provider's files", strings.Join(st.Providers, ", "), o.Provider))
	}
	for _, s := range st.Subjects {
		f, ok := files[s.Name]
		switch {
		case !ok && o.Partial:
		case !ok:
			errs = append(errs, fmt.Errorf("names %s, which is missing", s.Name))
		case s.SHA256 != f.SHA256():
			errs = append(errs, fmt.Errorf("names %s with sha256 %s, the file has %s", s.Name, publish.ShortSum(s.SHA256), publish.ShortSum(f.SHA256())))
		}
	}
	return errors.Join(errs...)
}

// VerifyDir checks the signatures of every provider version folder of a
// dist folder or repository tree (of version, or of every version for ""):
// VerifyFiles on each, all files required; and the flat set of a release of
// several providers where root holds one (flat/<version>). Each problem
// names its file; all are reported, joined.
func VerifyDir(v *Verifier, root, version string) ([]*Checked, error) {
	dirs, err := release.ProviderDirs(root, version)
	if err != nil {
		return nil, err
	}
	var out []*Checked
	var errs []error
	byVersion := map[string][]release.File{}
	for _, dir := range dirs {
		files, err := release.ReadFolder(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ver, label := filepath.Base(dir), filepath.Base(filepath.Dir(dir))
		name := path.Join(label, ver)
		c, err := VerifyFiles(v, name, files, VerifyFilesOptions{Version: ver, Provider: label})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, c)
		for _, f := range files {
			if f.Name != release.ChecksumsFile && !release.IsAttached(f.Name) {
				byVersion[ver] = append(byVersion[ver], f)
			}
		}
	}
	for _, ver := range slices.Sorted(maps.Keys(byVersion)) {
		flat, err := release.ReadFolder(filepath.Join(root, release.FlatDir, ver))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// The flat set lists each file once; a monorepo's shared files are
		// the same in every folder (or the folders' own checks failed).
		seen := map[string]bool{}
		for _, f := range byVersion[ver] {
			if !seen[f.Name] {
				seen[f.Name] = true
				flat = append(flat, f)
			}
		}
		c, err := VerifyFiles(v, path.Join(release.FlatDir, ver), flat, VerifyFilesOptions{Version: ver})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}
