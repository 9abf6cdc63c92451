package main

import (
	"context"
	"errors"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/publish/oci"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/verify"
)

func newVerifyCmd(s streams, g *globalOptions) *cobra.Command {
	var version, k8s, configMaps string
	var of ociFlags
	var images bool
	var platforms []string
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

--images also asks the registry for every image the components run, for
every --platforms, and names the missing ones by object and container
(credentials: docker config).`,
		Args: cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := verify.Options{Version: version, KubernetesVersion: k8s, Variables: tokenVariables(s.getenv)}
			var rep *verify.Report
			var err error
			switch {
			case configMaps != "" && len(args) == 0:
				rep, err = verifyConfigMaps(cmd.Context(), configMaps, opts)
			case len(args) == 1 && configMaps == "" && strings.HasPrefix(args[0], "oci://"):
				rep, err = verifyOCI(cmd.Context(), s, args[0], of, opts)
			case len(args) == 1 && configMaps == "":
				rep, err = verify.Dir(cmd.Context(), args[0], opts)
				if images {
					irep, ierr := verifyImages(cmd.Context(), args[0], version, platforms)
					if irep != nil && g.output != "json" {
						_ = irep.WriteText(s.errOut)
					}
					err = errors.Join(err, ierr)
				}
			default:
				return usagef("verify takes one DIR or oci:// reference, or --configmaps FILE; see 'capirepo verify --help'")
			}
			if rep != nil {
				var werr error
				if g.output == "json" {
					werr = printJSON(s.out, rep)
				} else {
					werr = rep.WriteText(s.out)
				}
				if err == nil {
					err = werr
				}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&version, "version", "", "version to verify (default: the newest in DIR)")
	cmd.Flags().BoolVar(&images, "images", false, "also check that every image the components run is in its registry, for every --platforms")
	cmd.Flags().StringSliceVar(&platforms, "platforms", verify.DefaultPlatforms, "platforms every image must have, for --images")
	cmd.Flags().StringVar(&k8s, "kubernetes-version", "", "KUBERNETES_VERSION for cluster templates (default "+verify.KubernetesVersion+")")
	cmd.Flags().StringVar(&configMaps, "configmaps", "", "a file of operator ConfigMaps and Provider resources (publish configmap --out)")
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
	kc, secrets := ociKeychain(s.getenv)
	rd, err := oci.New(oci.Options{PlainHTTP: f.plainHTTP, Keychain: kc, Secrets: secrets, Progress: s.errOut})
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
