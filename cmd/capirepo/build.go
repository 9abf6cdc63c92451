package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/image"
	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/pipeline"
)

// buildOptions are the flags of build and release, bound to the build's
// options.
type buildOptions struct {
	pipeline.BuildOptions
	// disable waives lint rules: RULE=reason, as lint --disable.
	disable []string
}

// AddFlags binds the flags of build and release; w gets deprecation notices.
func (o *buildOptions) AddFlags(cmd *cobra.Command, w io.Writer) {
	f := cmd.Flags()
	f.StringVar(&o.Dir, "dir", ".", "provider source tree (only read)")
	cli.DeprecatedFlag(w, f, "dir", "pass the provider tree as PATH")
	f.StringVar(&o.ConfigPath, "config", "", "capirepo.yaml or clusterctl-settings.json (default: looked up in PATH); paths in it are relative to PATH")
	f.StringVar(&o.Version, "version", "", "release version vX.Y.Z (default: version: in the config)")
	f.StringVar(&o.Out, "out", "dist", "output folder: <out>/<provider-label>/<version>/")
	f.StringVar(&o.Image, "image", "", "repository of the provider's manager image (tag = version; image.tag in the config); for one provider, or providers that share one image. imagePullPolicy stays as the tree sets it unless image.pullPolicy is configured")
	f.BoolVar(&o.AllowRemote, "allow-remote", false, "allow kustomizations to pull remote bases (git or http URLs)")
	f.BoolVar(&o.Binaries, "binaries", false, "also compile the manager (build.main) for each platform into <out>/bin/manager-<os>-<arch>")
	f.StringSliceVar(&o.Platforms, "platforms", nil, "platforms for --binaries and the image (default build.platforms: linux/amd64,linux/arm64)")
	f.BoolVar(&o.ImagePush, "image-push", false, "build the manager image from the binaries and push it to --image:VERSION (credentials: docker config)")
	f.StringVar(&o.ImageLayout, "image-layout", "", "build the manager image from the binaries and write it as an OCI layout to this folder")
	f.StringVar(&o.ImageRef, "image-ref", "tag", "how the components name a built image: tag (REPO:VERSION) or digest (REPO@sha256:...)")
	f.StringVar(&o.BaseImage, "base-image", "", "base of the manager image, resolved to a digest and recorded (default "+image.DefaultBase+
		": CA certificates, user 65532); none for the bare binary")
	f.StringArrayVar(&o.disable, "disable", nil, "waive a lint rule: RULE=reason (repeatable), with the waivers of capirepo.yaml lint.disable")
	bindLockTimeout(cmd, &o.LockTimeout)
}

// validate takes the tree from the PATH argument, checks the flags of
// build and release, and adds what the build takes from the environment:
// SOURCE_DATE_EPOCH and the go command's environment, and the registries'
// credentials (the docker config's).
func (o *buildOptions) validate(cmd *cobra.Command, args []string, s streams) error {
	if err := cli.Arg(cmd, args, "dir", "PATH", "the tree", &o.Dir); err != nil {
		return err
	}
	if err := pipeline.CheckFolder(cli.ArgName(cmd, "dir", "PATH"), o.Dir); err != nil {
		return err
	}
	if err := pipeline.CheckConfigFile("--config", o.ConfigPath); err != nil {
		return err
	}
	if err := o.Validate(cmd.Context()); err != nil {
		return err
	}
	var err error
	o.Disabled, err = pipeline.ParseWaivers(o.disable)
	o.SourceDateEpoch, o.Env, o.Keychain = s.getenv("SOURCE_DATE_EPOCH"), os.Environ(), s.keychain()
	return err
}

func newBuildCmd(s streams, g *globalOptions) *cobra.Command {
	o := &buildOptions{}
	cmd := &cobra.Command{
		Use:   "build [PATH]",
		Short: "Render the release assets of every provider into <out>/<label>/<version>/",
		Long: `Renders the provider tree PATH (default: the current folder) into
the files clusterctl reads: the components YAML rendered by kustomize in
process with the release image, one target Namespace and the provider label on
every object; metadata.yaml, checked to cover the version; the cluster
templates and ClusterClasses; and checksums.txt. The tree is only read. What
to build comes from capirepo.yaml (docs/configuration.md), a
clusterctl-settings.json, or the tree's conventions.

The release is linted as capirepo lint does: an error-level finding stops the
build and nothing is written. Otherwise every provider lands in
<out>/<label>/<version>/, written atomically. With --binaries, --image-push or
--image-layout the manager is compiled and its image built first.

The files and their checksums are printed on stdout (--output json: a summary);
progress and findings on stderr.`,
		Example: `  # A provider tree with a capirepo.yaml that names the version
  capirepo build

  # Another tree, an explicit version and image repository
  capirepo build ../cluster-api-provider-example --version v1.4.0 \
    --image ghcr.io/example/capi-example-controller --out dist

  # Also compile the manager and push a multi-platform image
  capirepo build --version v1.4.0 --image ghcr.io/example/manager --image-push`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(cmd, args, s); err != nil {
				return err
			}
			rep, err := pipeline.BuildRelease(cmd.Context(), o.BuildOptions, s.errOut)
			if err != nil {
				return err
			}
			return printResult(s, g, rep)
		},
	}
	o.AddFlags(cmd, s.errOut)
	return cmd
}
