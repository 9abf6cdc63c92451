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
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/oci"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/verify"
)

func newVerifyCmd(s streams, g *globalOptions) *cobra.Command {
	var version, k8s, configMaps string
	var of ociFlags
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
  capirepo verify oci://registry.example.com/capi/infrastructure-example:v1.4.0`,
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
			switch {
			case configMaps != "" && len(args) == 0:
				rep, err := verifyConfigMaps(cmd.Context(), configMaps, opts)
				return printVerify(s, g, rep, err)
			case len(args) == 1 && configMaps == "" && strings.HasPrefix(args[0], "oci://"):
				rep, err := verifyOCI(cmd.Context(), s, args[0], of, opts)
				return printVerify(s, g, rep, err)
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
				if inst.on {
					check := inst.options(s, "", publish.DefaultTimeout)
					check.KubernetesVersion = k8s
					irep, ierr := verifyInstall(cmd.Context(), args[0], version, check)
					return printVerifyInstall(s, g, rep, irep, errors.Join(err, ierr))
				}
				return printVerify(s, g, rep, err)
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
func printVerify(s streams, g *globalOptions, rep *verify.Report, err error) error {
	var werr error
	if rep != nil && (len(rep.Providers) > 0 || err == nil) {
		if g.output == "json" {
			doc := struct {
				*verify.Report
				Error string `json:"error,omitempty"`
			}{Report: rep}
			if err != nil {
				doc.Error = err.Error()
			}
			werr = printJSON(s.out, doc)
		} else {
			werr = rep.WriteText(s.out)
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
