package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/internal/redact"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/oci"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/verify"
)

// VerifyOptions say what Verify reads back and what it checks besides.
type VerifyOptions struct {
	// Path is what is read: a DIR (a dist folder, a clusterctl local
	// repository tree or one <label>/<version> folder) or an
	// oci://REGISTRY/PATH/NAME:VERSION reference; "" with ConfigMaps.
	Path string
	// ConfigMaps is a file of operator ConfigMaps and Provider resources
	// (publish configmap --out), read instead of Path.
	ConfigMaps string
	// Version is the version to verify; "" means every version in a DIR.
	Version string
	// KubernetesVersion and Variables are as for verify.Options.
	KubernetesVersion string
	Variables         map[string]string

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
	rep := &VerifyReport{}
	var err error
	switch {
	case o.ConfigMaps != "" && o.Path == "":
		if o.Signatures != nil {
			return nil, publish.Usagef("--signatures checks a folder or an oci:// artifact; ConfigMaps carry no signatures")
		}
		rep.Read, err = verifyConfigMaps(ctx, o.ConfigMaps, opts)
	case o.Path != "" && o.ConfigMaps == "" && strings.HasPrefix(o.Path, "oci://"):
		rep.Read, err = o.verifyOCI(ctx, opts)
		if o.Signatures != nil && err == nil {
			rep.Signatures = &SignatureReport{Verifier: o.Signatures.String()}
			var found []*sign.Signature
			ref := ociRef(o.Path)
			found, err = o.verifyImageSignature(ctx, ref, o.OCI.Keychain, o.OCI.PlainHTTP || strings.HasPrefix(strings.TrimPrefix(o.Path, "oci://"), "http://"))
			rep.Signatures.Images = map[string][]*sign.Signature{ref: found}
		}
	case o.Path != "" && o.ConfigMaps == "":
		err = o.verifyDir(ctx, rep, opts)
	default:
		return nil, publish.Usagef("verify takes one DIR or oci:// reference, or --configmaps FILE; see 'capirepo verify --help'")
	}
	rep.err = err
	return rep, err
}

// verifyDir reads every version of a DIR and runs the images, signatures
// and install checks on it; each check runs even when another failed.
func (o VerifyOptions) verifyDir(ctx context.Context, rep *VerifyReport, opts verify.Options) error {
	var err error
	rep.Read, err = verifyDirVersions(ctx, o.Log, o.Path, opts)
	if o.Images {
		var ierr error
		rep.Images, ierr = o.verifyImages(ctx)
		if rep.Images != nil && o.ImagesLog != nil {
			_ = rep.Images.WriteText(o.ImagesLog)
		}
		err = errors.Join(err, ierr)
	}
	if o.Signatures != nil {
		var serr error
		rep.Signatures, serr = o.verifyDirSignatures(ctx)
		err = errors.Join(err, serr)
	}
	if o.Install != nil {
		check := *o.Install
		check.KubernetesVersion = o.KubernetesVersion
		var ierr error
		rep.Install, ierr = verifyInstall(ctx, o.Path, o.Version, check)
		err = errors.Join(err, ierr)
	}
	return err
}

// verifyOCI reads an artifact back by the operator's rules and hands its
// files to clusterctl's client.
func (o VerifyOptions) verifyOCI(ctx context.Context, opts verify.Options) (*verify.Report, error) {
	ref := strings.TrimPrefix(o.Path, "oci://")
	oo := o.OCI
	if r, ok := strings.CutPrefix(ref, "http://"); ok { // the operator's plain-HTTP form
		ref, oo.PlainHTTP = r, true
	}
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

// ociRef is an oci:// argument as a registry reference.
func ociRef(arg string) string {
	ref := strings.TrimPrefix(arg, "oci://")
	return strings.TrimPrefix(ref, "http://")
}

// verifyImages checks the images of the release in the DIR.
func (o VerifyOptions) verifyImages(ctx context.Context) (*verify.ImagesReport, error) {
	rel, err := release.Load(o.Path, o.Version)
	if err != nil {
		return nil, err
	}
	return CheckImages(ctx, rel, o.Platforms, o.Keychain)
}

// CheckImages asks the registries for every image rel's components run,
// for every platform, with kc's credentials (nil: anonymous).
func CheckImages(ctx context.Context, rel *release.Release, platforms []string, kc authn.Keychain) (*verify.ImagesReport, error) {
	uses, err := verify.ReleaseImages(rel)
	if err != nil {
		return nil, err
	}
	if kc == nil {
		kc = authn.NewMultiKeychain() // anonymous
	}
	return verify.Images(ctx, uses, verify.ImagesOptions{Platforms: platforms,
		Remote: publish.RegistryOptions(publish.Registry{Keychain: kc})})
}

// verifyDirVersions verifies every version in dir (or opts.Version): a
// failed version is named and the others are still reported.
func verifyDirVersions(ctx context.Context, log io.Writer, dir string, opts verify.Options) (*verify.Report, error) {
	versions := []string{opts.Version}
	if opts.Version == "" {
		versions = DirVersions(dir) // every version, not only the newest
	}
	if len(versions) > 1 {
		fmt.Fprintf(log, "verifying %d versions: %s\n", len(versions), strings.Join(versions, ", "))
	}
	all := &verify.Report{}
	var failed []string
	var firstErr error
	for _, v := range versions {
		o := opts
		o.Version = v
		rep, err := verify.Dir(ctx, dir, o)
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

// DirVersions lists the versions of a dist folder or repository tree,
// DIR/<label>/<version>/, oldest first; [""] (verify.Dir picks) for one
// <label>/<version> folder or when there is none.
func DirVersions(root string) []string {
	abs, err := filepath.Abs(root)
	if err != nil {
		return []string{""}
	}
	if _, err := provider.ParseVersion(filepath.Base(abs)); err == nil {
		return []string{""}
	}
	labels, _ := os.ReadDir(abs)
	seen := map[string]*semver.Version{}
	for _, l := range labels {
		if _, err := provider.ParseLabel(l.Name()); err != nil || !l.IsDir() {
			continue
		}
		vs, _ := os.ReadDir(filepath.Join(abs, l.Name()))
		for _, v := range vs {
			if sv, err := provider.ParseVersion(v.Name()); err == nil && v.IsDir() {
				seen[v.Name()] = sv
			}
		}
	}
	if len(seen) == 0 {
		return []string{""}
	}
	out := slices.Collect(maps.Keys(seen))
	slices.SortFunc(out, func(a, b string) int { return seen[a].Compare(seen[b]) })
	return out
}

// verifyInstall runs the install check on the version of dir that verify
// reads: version, or else the newest.
func verifyInstall(ctx context.Context, dir, version string, o InstallCheckOptions) (*install.Report, error) {
	if version == "" {
		versions := DirVersions(dir)
		version = versions[len(versions)-1]
	}
	rel, err := release.Load(dir, version)
	if err != nil {
		return nil, err
	}
	return InstallCheck(ctx, rel, o)
}
