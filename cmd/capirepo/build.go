package main

import (
	"io"
	"os"
	"time"

	"github.com/distribution/reference"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/image"
	"github.com/capirepo/capirepo/internal/redact"
	"github.com/capirepo/capirepo/pipeline"
)

type buildOptions struct {
	dir         string
	config      string
	version     string
	out         string
	image       string
	allowRemote bool
	lockTimeout time.Duration

	// Manager binaries and image.
	binaries    bool
	platforms   []string
	imagePush   bool
	imageLayout string
	imageRef    string
	baseImage   string

	// disable waives lint rules: RULE=reason, as lint --disable.
	disable []string
}

// bind binds the flags of build and release; w gets deprecation notices.
func (o *buildOptions) bind(cmd *cobra.Command, w io.Writer) {
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", ".", "provider source tree (only read)")
	deprecatedFlag(w, f, "dir", "pass the provider tree as PATH")
	f.StringVar(&o.config, "config", "", "capirepo.yaml or clusterctl-settings.json (default: looked up in PATH); paths in it are relative to PATH")
	f.StringVar(&o.version, "version", "", "release version vX.Y.Z (default: version: in the config)")
	f.StringVar(&o.out, "out", "dist", "output folder: <out>/<provider-label>/<version>/")
	f.StringVar(&o.image, "image", "", "repository of the provider's manager image (tag = version; image.tag in the config); for one provider, or providers that share one image. imagePullPolicy stays as the tree sets it unless image.pullPolicy is configured")
	f.BoolVar(&o.allowRemote, "allow-remote", false, "allow kustomizations to pull remote bases (git or http URLs)")
	f.BoolVar(&o.binaries, "binaries", false, "also compile the manager (build.main) for each platform into <out>/bin/manager-<os>-<arch>")
	f.StringSliceVar(&o.platforms, "platforms", nil, "platforms for --binaries and the image (default build.platforms: linux/amd64,linux/arm64)")
	f.BoolVar(&o.imagePush, "image-push", false, "build the manager image from the binaries and push it to --image:VERSION (credentials: docker config)")
	f.StringVar(&o.imageLayout, "image-layout", "", "build the manager image from the binaries and write it as an OCI layout to this folder")
	f.StringVar(&o.imageRef, "image-ref", "tag", "how the components name a built image: tag (REPO:VERSION) or digest (REPO@sha256:...)")
	f.StringVar(&o.baseImage, "base-image", "", "base of the manager image, resolved to a digest and recorded (default "+image.DefaultBase+
		": CA certificates, user 65532); none for the bare binary")
	f.StringArrayVar(&o.disable, "disable", nil, "waive a lint rule: RULE=reason (repeatable), with the waivers of capirepo.yaml lint.disable")
	bindLockTimeout(cmd, &o.lockTimeout)
}

// validate checks the flags of build and release, and takes the tree from
// the PATH argument when there is one.
func (o *buildOptions) validate(cmd *cobra.Command, args []string) error {
	if err := treeArg(cmd, args, &o.dir); err != nil {
		return err
	}
	for _, err := range []error{checkDirFlag(argName(cmd, "dir", "PATH"), o.dir), checkConfigFlag(o.config), checkVersionFlag(o.version), checkImageFlag(o.image)} {
		if err != nil {
			return err
		}
	}
	return o.validateArtifacts()
}

// treeArg takes the provider tree from the optional PATH argument (default
// the current folder), as every command takes what it reads from its
// argument; the deprecated --dir says the same.
func treeArg(cmd *cobra.Command, args []string, dir *string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.Flags().Changed("dir") && *dir != args[0] {
		return usagef("the tree is given twice, as PATH %s and --dir %s: pass one", args[0], *dir)
	}
	*dir = args[0]
	return nil
}

// checkImageFlag refuses a tag or digest in --image: the tag is the version.
func checkImageFlag(image string) error {
	if image == "" {
		return nil
	}
	ref, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return usagef("--image %q: %v", image, err)
	}
	if _, ok := ref.(reference.Tagged); ok {
		return usagef("--image %s names a tag: pass the repository only (%s), the tag is the release version", image, reference.FamiliarString(reference.TrimNamed(ref)))
	}
	if _, ok := ref.(reference.Digested); ok {
		return usagef("--image %s names a digest: pass the repository only (%s); --image-ref digest makes the components name the built image by digest", image, reference.FamiliarString(reference.TrimNamed(ref)))
	}
	return nil
}

// validateArtifacts checks the binary and image flags of build and release.
func (o *buildOptions) validateArtifacts() error {
	if o.imageRef != pipeline.ImageRefTag && o.imageRef != pipeline.ImageRefDigest {
		return usagef("--image-ref must be tag or digest, not %q", o.imageRef)
	}
	building := o.imagePush || o.imageLayout != ""
	switch {
	case building && o.image == "":
		return usagef("--image-push and --image-layout need --image REPOSITORY to name the image")
	case o.imageRef == pipeline.ImageRefDigest && !building:
		return usagef("--image-ref digest needs the image built here: add --image-push or --image-layout DIR")
	case o.baseImage != "" && !building:
		return usagef("--base-image is used only when the image is built: add --image-push or --image-layout DIR")
	}
	for _, p := range o.platforms {
		if _, err := builder.ParsePlatform(p); err != nil {
			return usagef("--platforms: %v", err)
		}
	}
	_, err := parseDisable(o.disable)
	return err
}

// disabled is --disable as Options.Disabled (validated by validateArtifacts).
func (o *buildOptions) disabled() map[string]string {
	d, _ := parseDisable(o.disable)
	return d
}

// pipelineOptions is what the flags ask the build to make; the go command gets the
// process environment and the registries docker's credentials.
func (o *buildOptions) pipelineOptions(s streams) pipeline.BuildOptions {
	return pipeline.BuildOptions{
		Dir: o.dir, ConfigPath: o.config, Version: o.version, Out: o.out, Image: o.image, AllowRemote: o.allowRemote,
		LockTimeout: o.lockTimeout,
		Binaries:    o.binaries, Platforms: o.platforms, ImagePush: o.imagePush, ImageLayout: o.imageLayout,
		ImageRef: o.imageRef, BaseImage: o.baseImage, Disabled: o.disabled(),
		SourceDateEpoch: s.getenv("SOURCE_DATE_EPOCH"), Env: os.Environ(), Keychain: redact.Keychain(authn.DefaultKeychain, s.secrets),
	}
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
			if err := o.validate(cmd, args); err != nil {
				return err
			}
			rep, err := pipeline.BuildRelease(cmd.Context(), o.pipelineOptions(s), s.errOut)
			if err != nil {
				return err
			}
			if g.output == "json" {
				return rep.WriteJSON(s.out)
			}
			rep.WriteText(s.out)
			return nil
		},
	}
	o.bind(cmd, s.errOut)
	return cmd
}
