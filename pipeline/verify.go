package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/internal/redact"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/local"
	"github.com/capirepo/capirepo/publish/oci"
	"github.com/capirepo/capirepo/rehearse"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/values"
	"github.com/capirepo/capirepo/verify"
)

// VerifyOptions say what Verify reads back and what it checks besides.
type VerifyOptions struct {
	// Path is what is read: a DIR or file://DIR (a dist folder, a
	// clusterctl local repository tree, a mirror folder, one
	// <label>/<version> folder, or a flat folder of release assets; with
	// or without checksums.txt) or an oci://REGISTRY/PATH/NAME:VERSION
	// reference; "" with ConfigMaps.
	Path string
	// ConfigMaps is a file of operator ConfigMaps and Provider resources
	// (publish configmap --out), read instead of Path.
	ConfigMaps string
	// Version is the version to verify; "" means every version of a DIR
	// clusterctl reads (release.ScanTree).
	Version string
	// KubernetesVersion and Variables are as for verify.Options: Variables
	// (--var NAME=VALUE, and the tokens) are real values for every file.
	KubernetesVersion string
	Variables         map[string]string
	// ValuesFiles are files of real values for the read-back, as FILE
	// (every flavor) or FLAVOR=FILE (one flavor's template), read by
	// values.ReadFiles as the install check reads them; Variables win.
	// Only these and Variables are real values there: the environment and
	// the clusterctl config are not asked, so what verify reads does not
	// depend on the shell it runs in.
	ValuesFiles []string

	// Images asks the registries for every image a DIR's components run,
	// for every Platforms.
	Images    bool
	Platforms []string
	// ImagesLog receives the images report as it is made; nil: it is not
	// written (a JSON report leaves it out).
	ImagesLog io.Writer

	// Signatures, when set, checks the Sigstore signatures it accepts: a
	// DIR's bundles (and with Images, every image's), an oci:// artifact's.
	Signatures *sign.Verifier

	// Install, when set, applies a DIR's version (Version, else the
	// newest) to a Kubernetes API server.
	Install *InstallCheckOptions
	// Rehearse, when set, rehearses the upgrade from Rehearse.From to a
	// DIR's version (Version, else the newest) on a scratch cluster.
	Rehearse *RehearseOptions

	// OCI reads an oci:// reference: plain HTTP, credentials, transport,
	// progress. Its Keychain also reads the artifact's signatures.
	OCI oci.Options
	// Keychain gives the credentials of the images' registries; nil means
	// anonymous.
	Keychain authn.Keychain
	// Transport is what signatures are read through; nil means
	// go-containerregistry's default.
	Transport http.RoundTripper
	// Secrets learns every credential used, to mask it.
	Secrets *redact.Set

	// Log hears of each version read and why one failed; nil discards it.
	Log io.Writer
}

// VerifyReport is what Verify found; it prints itself as text or JSON.
type VerifyReport struct {
	// Read is what clusterctl's client read back.
	Read *verify.Report
	// Images is the images check's report, with VerifyOptions.Images.
	Images *verify.ImagesReport
	// Signatures is what the signature check found.
	Signatures *SignatureReport
	// Install is the install check's report.
	Install *install.Report
	// Rehearsal is the upgrade rehearsal's report.
	Rehearsal *rehearse.Report
	// err is why Verify failed, for the JSON document.
	err error
}

// Verify reads a built or published provider repository back through
// clusterctl's client, the way clusterctl init and generate cluster do, and
// runs the checks the options ask for. The report holds what was found even
// when the error says a check failed; it is nil when nothing could be read.
func Verify(ctx context.Context, o VerifyOptions) (*VerifyReport, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	opts := verify.Options{Version: o.Version, KubernetesVersion: o.KubernetesVersion, Variables: o.Variables}
	reals, err := values.ReadFiles(o.Variables, o.ValuesFiles)
	if err != nil {
		return nil, err
	}
	opts.Values = reals
	rep := &VerifyReport{}
	switch {
	case o.ConfigMaps != "" && o.Path == "":
		if o.Signatures != nil {
			return nil, publish.Usagef("%s checks a folder or an oci:// artifact; ConfigMaps carry no signatures", option.Flag(ctx, option.Signatures))
		}
		rep.Read, err = verifyConfigMaps(ctx, o.ConfigMaps, opts)
	case o.Path != "" && o.ConfigMaps == "" && isOCIReference(o.Path):
		ref, plainHTTP, _ := oci.ParseReference(o.Path)
		oo := o.OCI
		oo.PlainHTTP = oo.PlainHTTP || plainHTTP
		rep.Read, err = o.verifyOCI(ctx, ref, oo, opts)
		if o.Signatures != nil && err == nil {
			rep.Signatures = &SignatureReport{Verifier: o.Signatures.String()}
			var found []*sign.Signature
			found, err = o.verifyImageSignature(ctx, ref, oo.Keychain, oo.PlainHTTP)
			rep.Signatures.Images = map[string][]*sign.Signature{ref: found}
		}
	case o.Path != "" && o.ConfigMaps == "":
		err = o.verifyDir(ctx, rep, opts)
	default:
		return nil, publish.Usagef("verify takes one DIR or oci:// reference, or %s FILE", option.Flag(ctx, option.ConfigMaps))
	}
	err = errors.Join(err, unreadFlavors(ctx, reals, rep.Read))
	rep.err = err
	return rep, err
}

// unreadFlavors fails for values files given for a flavor (FLAVOR=FILE)
// that no provider read has: their values were checked nowhere (a typo,
// or the file's name for the flavor's). Nothing is said when some
// provider's templates could not be listed.
func unreadFlavors(ctx context.Context, reals values.Real, read *verify.Report) error {
	if read == nil || len(reals.Flavors) == 0 {
		return nil
	}
	var have []string
	for _, p := range read.Providers {
		if !p.TemplatesListed {
			return nil
		}
		for _, f := range p.Flavors {
			if !slices.Contains(have, f.Name) {
				have = append(have, f.Name)
			}
		}
	}
	slices.Sort(have)
	names := make([]string, len(have))
	for i, f := range have {
		names[i] = cmp.Or(f, "default")
	}
	var errs []error
	for _, flavor := range slices.Sorted(maps.Keys(reals.Flavors)) {
		if slices.Contains(have, flavor) {
			continue
		}
		errs = append(errs, fmt.Errorf("%s %s=FILE: no flavor %s was read, so its values were checked nowhere; the flavors read: %s",
			option.Flag(ctx, option.Values), cmp.Or(flavor, "default"), cmp.Or(flavor, "default"), strings.Join(names, ", ")))
	}
	return errors.Join(errs...)
}

// verifyDir reads every version of a DIR and runs the images, signatures
// and install checks on it; each check runs even when another failed.
func (o VerifyOptions) verifyDir(ctx context.Context, rep *VerifyReport, opts verify.Options) error {
	path, err := local.Folder(o.Path)
	if err != nil {
		return err
	}
	if err := CheckFolder("verify", path); err != nil {
		return err
	}
	o.Path = path
	f, err := openFolder(ctx, o.Path, o.Version, o.Log)
	if err != nil {
		return err
	}
	serr := f.checkSums(o.Version, o.Log)
	rep.Read, err = verifyDirVersions(ctx, o.Log, f, opts)
	err = errors.Join(f.unreadable, serr, err)
	if f.unreadable != nil {
		// The other checks read the tree as a release, which refuses those
		// folders by the same words.
		if o.Images || o.Signatures != nil || o.Install != nil {
			fmt.Fprintf(o.Log, "%s holds version folders capirepo cannot read: the images, signature and install checks did not run\n", o.Path)
		}
		return err
	}
	if o.Images {
		var ierr error
		rep.Images, ierr = o.verifyImages(ctx, f)
		if rep.Images != nil && o.ImagesLog != nil {
			_ = rep.Images.WriteText(o.ImagesLog)
		}
		err = errors.Join(err, ierr)
	}
	if o.Signatures != nil {
		var serr error
		rep.Signatures, serr = o.verifyDirSignatures(ctx, f)
		err = errors.Join(err, serr)
	}
	if o.Install != nil {
		check := *o.Install
		check.KubernetesVersion = o.KubernetesVersion
		var ierr error
		rep.Install, ierr = verifyInstall(ctx, f, o.Version, check)
		err = errors.Join(err, ierr)
	}
	if o.Rehearse != nil {
		ro := *o.Rehearse
		ro.KubernetesVersion = o.KubernetesVersion
		var rerr error
		rep.Rehearsal, rerr = verifyRehearsal(ctx, f, o.Version, ro)
		err = errors.Join(err, rerr)
	}
	return err
}

// verifyOCI reads an artifact back by the operator's rules and hands its
// files to clusterctl's client.
func (o VerifyOptions) verifyOCI(ctx context.Context, ref string, oo oci.Options, opts verify.Options) (*verify.Report, error) {
	rd, err := oci.New(oo)
	if err != nil {
		return nil, publish.UsageError{Err: err}
	}
	provs, err := rd.ReadReference(ctx, ref)
	if err != nil {
		return nil, err
	}
	if opts.Version != "" && opts.Version != provs[0].Version {
		return nil, publish.Usagef("%s holds version %s, not %s", o.Path, provs[0].Version, opts.Version)
	}
	return verify.Providers(ctx, provs, o.Path, opts)
}

// isOCIReference says whether a verify argument is an OCI artifact's
// reference (oci.ParseReference), not a folder.
func isOCIReference(arg string) bool {
	_, _, ok := oci.ParseReference(arg)
	return ok
}

// verifyImages checks the images of the release in the DIR.
func (o VerifyOptions) verifyImages(ctx context.Context, f *folder) (*verify.ImagesReport, error) {
	rel, err := f.Release(o.Version)
	if err != nil {
		return nil, err
	}
	return CheckImages(ctx, rel, o.Platforms, o.Keychain)
}

// CheckImages asks the registries for every image rel's components run,
// for every platform, with kc's credentials (nil: anonymous).
func CheckImages(ctx context.Context, rel *release.Release, platforms []string, kc authn.Keychain) (*verify.ImagesReport, error) {
	return checkImages(ctx, rel, verify.ImagesOptions{Platforms: platforms, Remote: publish.RegistryOptions(publish.Registry{Keychain: kc})})
}

// checkImages is the one image check of verify --images, release's images
// step and publish --images: every image rel's components run, asked of its
// registry as o says.
func checkImages(ctx context.Context, rel *release.Release, o verify.ImagesOptions) (*verify.ImagesReport, error) {
	uses, err := rel.Images()
	if err != nil {
		return nil, err
	}
	return verify.Images(ctx, uses, o)
}

// verifyDirVersions verifies every version of f (or opts.Version): a
// failed version is named and the others are still reported.
func verifyDirVersions(ctx context.Context, log io.Writer, f *folder, opts verify.Options) (*verify.Report, error) {
	if f.flat != nil {
		if opts.Version != "" && opts.Version != f.flat.Version {
			return nil, fmt.Errorf("%s holds version %s, not %s", f.path, f.flat.Version, opts.Version)
		}
		opts.Version = ""
		return verify.Providers(ctx, f.flat.Providers, f.path, opts)
	}
	versions := []string{opts.Version}
	if opts.Version == "" {
		versions = f.Versions() // every version, not only the newest
	}
	if len(versions) > 1 {
		fmt.Fprintf(log, "verifying %d versions: %s (clusterctl's latest: %s)\n", len(versions), strings.Join(versions, ", "), f.latestSaid())
	}
	all := &verify.Report{}
	var failed []string
	var firstErr error
	for _, v := range versions {
		o := opts
		o.Version = v
		rep, err := verify.Dir(ctx, f.path, o)
		if rep != nil {
			all.Providers = append(all.Providers, rep.Providers...)
		}
		if err != nil {
			if len(versions) == 1 {
				return all, err
			}
			fmt.Fprintf(log, "%s: %v\n", v, err)
			failed = append(failed, v)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if len(failed) > 0 {
		return all, fmt.Errorf("%d of %d versions failed: %s (the first: %w)", len(failed), len(versions), strings.Join(failed, ", "), firstErr)
	}
	return all, nil
}

// verifyRehearsal rehearses the upgrade from o.From to the version of f
// that verify reads: version, or else the newest.
func verifyRehearsal(ctx context.Context, f *folder, version string, o RehearseOptions) (*rehearse.Report, error) {
	rel, err := f.Release(version)
	if err != nil {
		return nil, err
	}
	old, err := o.rehearseFrom(ctx, rel)
	if err != nil {
		return nil, fmt.Errorf("upgrade rehearsal: %w", err)
	}
	return Rehearse(ctx, old, rel, o)
}

// verifyInstall runs the install check on each release of f (of version,
// or of every version), each on its own: the providers of a version, with
// the CRDs of --core's providers, else of the newest core, bootstrap and
// control plane releases f holds (what a management cluster runs), created
// first; the CRDs of one check are removed before the next.
func verifyInstall(ctx context.Context, f *folder, version string, o InstallCheckOptions) (*install.Report, error) {
	vs := []string{version}
	if version == "" {
		vs = f.Versions()
	}
	if err := o.readBase(ctx); err != nil {
		return nil, err
	}
	if o.Core == nil {
		base, err := f.base()
		if err != nil {
			return nil, err
		}
		o.base = base
	}
	names := make([]string, len(vs))
	reps := make([]*install.Report, len(vs))
	var errs []error
	for i, v := range vs {
		rel, err := f.Release(v)
		if err != nil {
			return nil, err
		}
		for _, p := range rel.Providers {
			names[i] += fmt.Sprintf(", %s %s", p.Label(), p.Version)
		}
		names[i] = names[i][2:]
		if len(vs) > 1 && o.Log != nil {
			fmt.Fprintf(o.Log, "install check %d of %d: %s\n", i+1, len(vs), names[i])
		}
		reps[i], err = InstallCheck(ctx, rel, o)
		if err != nil {
			errs = append(errs, err)
			if reps[i] == nil { // the cluster could not be reached: the others cannot be checked either
				break
			}
		}
	}
	if len(vs) == 1 {
		return reps[0], errors.Join(errs...)
	}
	return install.Join(names, reps), errors.Join(errs...)
}
