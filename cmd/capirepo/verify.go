package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish/oci"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/sign"
	"github.com/capirepo/capirepo/verify"
)

func newVerifyCmd(s streams, g *globalOptions) *cobra.Command {
	var version, k8s, configMaps string
	var of ociFlags
	var vf verifyFlags
	var images bool
	var platforms []string
	var inst installFlags
	cmd := &cobra.Command{
		Use:   "verify DIR | oci://REGISTRY/PATH/NAME:VERSION | --configmaps FILE",
		Short: "Read a built or published provider repository back through clusterctl's client",
		Long: `Reads DIR (a dist folder, a clusterctl local repository tree or one
<label>/<version> folder) the way clusterctl init and clusterctl generate
cluster do: versions, metadata.yaml, components with and without a target
namespace, every cluster-template flavor with its ClusterClasses, and every
clusterclass file. Fails where clusterctl would fail, with its message.

oci://REGISTRY/PATH/NAME:VERSION (the reference cluster-api-operator takes,
with --plain-http for a plain-HTTP registry) and --configmaps FILE (the
output of publish configmap) are first read by cluster-api-operator's rules:
the files it would pick, or its error; then those files go through
clusterctl's client the same way.

Every version in DIR is verified, unless --version names one. The report is
printed on stdout.

--images also asks the registry for every image the components run, for
every --platforms, and names the missing ones by object and container
(credentials: docker config).

--signatures checks what capirepo sign (or release --sign) signed, for
--key or --certificate-identity with --certificate-oidc-issuer (cosign's
names): each version folder's checksums.txt.sigstore.json signs its
checksums.txt, every file matches its sha256 there, and the provenance is
signed and names the same files; with --images, every image the components
run carries a signature that checks out; for oci://, the artifact does.
Each file that fails is named; the command fails.

--install also applies the version to the Kubernetes API server of
--kubeconfig as clusterctl init and kubectl apply would: cert-manager's
CRDs (the cluster's, or those of the cert-manager clusterctl installs), then
each provider's components in clusterctl's order, then every flavor and
ClusterClass with stand-ins for the required variables. It CREATES the CRDs
and a few capirepo-install-* namespaces for real and removes them at the
end; everything else, webhook configurations included, is only dry-run. Use
a scratch cluster (kind create cluster); a cluster that already has the
release's CRDs is refused unless --force; --dry-run-only creates nothing and
lists what it could not check. Every refusal is listed, by file, object and
field, with the server's message.`,
		Example: `  # Everything build wrote into dist
  capirepo verify dist

  # One version of a local repository tree, with a given Kubernetes version
  capirepo verify /srv/capi-repo --version v1.4.0 --kubernetes-version v1.33.0

  # Also apply it to a kind cluster, as clusterctl init and kubectl apply would
  kind create cluster --name capirepo-check --kubeconfig kind.kubeconfig
  capirepo verify dist --install --kubeconfig kind.kubeconfig

  # An artifact pushed with publish oci, as cluster-api-operator reads it
  capirepo verify oci://registry.example.com/capi/infrastructure-example:v1.4.0

  # The signatures of a dist folder or repository tree signed in GitHub Actions
  capirepo verify dist --signatures \
    --certificate-identity https://github.com/my-org/cluster-api-provider-example/.github/workflows/release.yaml@refs/tags/v1.4.0 \
    --certificate-oidc-issuer https://token.actions.githubusercontent.com`,
		Args: cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkVersionFlag(version); err != nil {
				return err
			}
			if err := inst.validate(); err != nil {
				return err
			}
			if inst.on && (len(args) != 1 || configMaps != "" || strings.HasPrefix(args[0], "oci://")) {
				return usagef("--install applies a DIR (a dist folder or a local repository tree)")
			}
			opts := verify.Options{Version: version, KubernetesVersion: k8s, Variables: tokenVariables(s.getenv)}
			sv, err := vf.verifier(cmd.Context(), s, of.timeout)
			if err != nil {
				return err
			}
			var sigs *signatureReport
			switch {
			case configMaps != "" && len(args) == 0:
				if sv != nil {
					return usagef("--signatures checks a folder or an oci:// artifact; ConfigMaps carry no signatures")
				}
				rep, err := verifyConfigMaps(cmd.Context(), configMaps, opts)
				return printVerify(s, g, rep, nil, nil, err)
			case len(args) == 1 && configMaps == "" && strings.HasPrefix(args[0], "oci://"):
				rep, err := verifyOCI(cmd.Context(), s, args[0], of, opts)
				if sv != nil && err == nil {
					sigs = &signatureReport{Verifier: sv.String()}
					var found []*sign.Signature
					kc, _ := oci.KeychainFromEnv(s.getenv)
					found, err = verifyImageSignature(cmd.Context(), s, sv, ociRef(args[0]), kc, of.nameOptions(args[0]), of.timeout)
					sigs.Images = map[string][]*sign.Signature{ociRef(args[0]): found}
				}
				return printVerify(s, g, rep, sigs, nil, err)
			case len(args) == 1 && configMaps == "":
				if err := checkDirFlag("verify", args[0]); err != nil {
					return err
				}
				rep, err := verifyDirVersions(cmd.Context(), s, args[0], opts)
				if images {
					irep, ierr := verifyImages(cmd.Context(), args[0], version, platforms)
					if irep != nil && g.output != "json" {
						_ = irep.WriteText(s.errOut)
					}
					err = errors.Join(err, ierr)
				}
				if sv != nil {
					var serr error
					sigs, serr = verifyDirSignatures(cmd.Context(), s, sv, args[0], version, images, of.timeout)
					err = errors.Join(err, serr)
				}
				var inrep *install.Report
				if inst.on {
					check := inst.options(s, "", of.timeout)
					check.KubernetesVersion = k8s
					var ierr error
					inrep, ierr = verifyInstall(cmd.Context(), args[0], version, check)
					err = errors.Join(err, ierr)
				}
				return printVerify(s, g, rep, sigs, inrep, err)
			default:
				return usagef("verify takes one DIR or oci:// reference, or --configmaps FILE; see 'capirepo verify --help'")
			}
		},
	}
	cmd.Flags().StringVar(&version, "version", "", "version to verify (default: every version in DIR)")
	cmd.Flags().BoolVar(&images, "images", false, "also check that every image the components run is in its registry, for every --platforms")
	cmd.Flags().StringSliceVar(&platforms, "platforms", verify.DefaultPlatforms, "platforms every image must have, for --images")
	cmd.Flags().StringVar(&k8s, "kubernetes-version", "", "KUBERNETES_VERSION for cluster templates (default "+verify.KubernetesVersion+")")
	cmd.Flags().StringVar(&configMaps, "configmaps", "", "a file of operator ConfigMaps and Provider resources (publish configmap --out)")
	inst.bind(cmd, "install", "also apply the release to a Kubernetes API server (--kubeconfig) as clusterctl init and kubectl apply would, and report every object it refuses")
	of.bind(cmd, false, "")
	vf.bind(cmd, "signatures", "also check the Sigstore signatures of the files (and with --images, of the images; of an oci:// artifact): for --key or --certificate-identity")
	bindTimeout(cmd, &of.timeout)
	return cmd
}

// verifyOCI reads an artifact back by the operator's rules and hands its
// files to clusterctl's client.
func verifyOCI(ctx context.Context, s streams, arg string, f ociFlags, opts verify.Options) (*verify.Report, error) {
	ref := strings.TrimPrefix(arg, "oci://")
	if r, ok := strings.CutPrefix(ref, "http://"); ok { // the operator's plain-HTTP form
		ref, f.plainHTTP = r, true
	}
	kc, secrets := oci.KeychainFromEnv(s.getenv)
	rd, err := oci.New(oci.Options{PlainHTTP: f.plainHTTP, Keychain: kc, Secrets: secrets, Progress: s.errOut, Transport: f.transport(s)})
	if err != nil {
		return nil, usageError{err}
	}
	provs, err := rd.ReadReference(ctx, ref)
	if err != nil {
		return nil, err
	}
	if opts.Version != "" && opts.Version != provs[0].Version {
		return nil, usagef("%s holds version %s, not %s", arg, provs[0].Version, opts.Version)
	}
	return verify.Providers(ctx, provs, arg, opts)
}

// ociRef is an oci:// argument as a registry reference.
func ociRef(arg string) string {
	ref := strings.TrimPrefix(arg, "oci://")
	return strings.TrimPrefix(ref, "http://")
}

// nameOptions are how a reference of an oci:// argument is parsed.
func (f ociFlags) nameOptions(arg string) []name.Option {
	if f.plainHTTP || strings.HasPrefix(strings.TrimPrefix(arg, "oci://"), "http://") {
		return []name.Option{name.Insecure}
	}
	return nil
}

// tokenVariables passes the tokens clusterctl reads to its config, only when set.
func tokenVariables(getenv env) map[string]string {
	vars := map[string]string{}
	if t := getenv("GITHUB_TOKEN"); t != "" {
		vars["github-token"] = t
	}
	if t := getenv("GITLAB_ACCESS_TOKEN"); t != "" {
		vars["gitlab-access-token"] = t
	}
	return vars
}

// verifyImages checks the images of the release in dir.
func verifyImages(ctx context.Context, dir, version string, platforms []string) (*verify.ImagesReport, error) {
	rel, err := release.Load(dir, version)
	if err != nil {
		return nil, err
	}
	return releaseImages(ctx, rel, platforms)
}

// releaseImages asks the registries for every image rel's components run,
// for every platform, with the docker config's credentials.
func releaseImages(ctx context.Context, rel *release.Release, platforms []string) (*verify.ImagesReport, error) {
	uses, err := verify.ReleaseImages(rel)
	if err != nil {
		return nil, err
	}
	return verify.Images(ctx, uses, verify.ImagesOptions{Platforms: platforms,
		Remote: []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain), remote.WithUserAgent("capirepo")}})
}

// verifyDirVersions verifies every version in dir (or opts.Version): a
// failed version is named and the others are still reported.
func verifyDirVersions(ctx context.Context, s streams, dir string, opts verify.Options) (*verify.Report, error) {
	versions := []string{opts.Version}
	if opts.Version == "" {
		versions = dirVersions(dir) // every version, not only the newest
	}
	if len(versions) > 1 {
		fmt.Fprintf(s.errOut, "verifying %d versions: %s\n", len(versions), strings.Join(versions, ", "))
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
			fmt.Fprintf(s.errOut, "%s: %v\n", v, err)
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

// printVerify prints a verify report on stdout (with the error in JSON
// when it failed) and returns the error.
func printVerify(s streams, g *globalOptions, rep *verify.Report, sigs *signatureReport, inst *install.Report, err error) error {
	read := rep != nil && (len(rep.Providers) > 0 || err == nil)
	if !read && inst == nil {
		return err
	}
	var werr error
	if g.output == "json" {
		doc := struct {
			*verify.Report
			Signatures *signatureReport `json:"signatures,omitempty"`
			Install    *install.Report  `json:"install,omitempty"`
			Error      string           `json:"error,omitempty"`
		}{Report: rep, Signatures: sigs, Install: inst}
		if doc.Report == nil {
			doc.Report = &verify.Report{}
		}
		if err != nil {
			doc.Error = err.Error()
		}
		werr = printJSON(s.out, doc)
	} else {
		if read {
			werr = rep.WriteText(s.out)
		}
		if sigs != nil {
			sigs.writeText(s.out)
		}
		if inst != nil {
			werr = errors.Join(werr, inst.WriteText(s.out))
		}
	}
	if err != nil {
		return err
	}
	return werr
}

// dirVersions lists the versions of a dist folder or repository tree,
// DIR/<label>/<version>/, oldest first; [""] (verify.Dir picks) for one
// <label>/<version> folder or when there is none.
func dirVersions(root string) []string {
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
