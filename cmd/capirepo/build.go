package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/redact"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/release"
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
}

func (o *buildOptions) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", ".", "provider source tree (only read)")
	f.StringVar(&o.config, "config", "", "capirepo.yaml or clusterctl-settings.json (default: looked up in --dir); paths in it are relative to --dir")
	f.StringVar(&o.version, "version", "", "release version vX.Y.Z (default: version: in the config)")
	f.StringVar(&o.out, "out", "dist", "output folder: <out>/<provider-label>/<version>/")
	f.StringVar(&o.image, "image", "", "repository of the manager container's image (tag = version)")
	f.BoolVar(&o.allowRemote, "allow-remote", false, "allow kustomizations to pull remote bases (git or http URLs)")
	f.BoolVar(&o.binaries, "binaries", false, "also compile the manager (build.main) for each platform into <out>/bin/manager-<os>-<arch>")
	f.StringSliceVar(&o.platforms, "platforms", nil, "platforms for --binaries and the image (default build.platforms: linux/amd64,linux/arm64)")
	f.BoolVar(&o.imagePush, "image-push", false, "build the manager image from the binaries and push it to --image:VERSION (credentials: docker config)")
	f.StringVar(&o.imageLayout, "image-layout", "", "build the manager image from the binaries and write it as an OCI layout to this folder")
	f.StringVar(&o.imageRef, "image-ref", "tag", "how the components name a built image: tag (REPO:VERSION) or digest (REPO@sha256:...)")
	f.StringVar(&o.baseImage, "base-image", "", "base of the manager image (default: empty, for a static binary)")
	bindLockTimeout(cmd, &o.lockTimeout)
}

// validateArtifacts checks the binary and image flags of build and release.
func (o *buildOptions) validateArtifacts() error {
	if err := checkWaits(map[string]time.Duration{"lock-timeout": o.lockTimeout}); err != nil {
		return err
	}
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
	return nil
}

// pipelineOptions is what the flags ask the build to make; the go command gets the
// process environment and the registries docker's credentials.
func (o *buildOptions) pipelineOptions(s streams) pipeline.BuildOptions {
	return pipeline.BuildOptions{
		Dir: o.dir, ConfigPath: o.config, Version: o.version, Out: o.out, Image: o.image, AllowRemote: o.allowRemote,
		LockTimeout: o.lockTimeout,
		Binaries:    o.binaries, Platforms: o.platforms, ImagePush: o.imagePush, ImageLayout: o.imageLayout,
		ImageRef: o.imageRef, BaseImage: o.baseImage,
		SourceDateEpoch: s.getenv("SOURCE_DATE_EPOCH"), Env: os.Environ(), Keychain: redact.Keychain(authn.DefaultKeychain, s.secrets),
	}
}

func newBuildCmd(s streams, g *globalOptions) *cobra.Command {
	o := &buildOptions{}
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Render the release assets of every provider into <out>/<label>/<version>/",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validateArtifacts(); err != nil {
				return err
			}
			b, err := pipeline.Build(cmd.Context(), o.pipelineOptions(s), s.errOut)
			if err != nil {
				return err
			}
			res := b.Result
			if err := lintBuilt(s, res); err != nil {
				return err
			}
			if err := release.WriteContext(cmd.Context(), o.out, res.Release,
				release.WriteOptions{LockTimeout: o.lockTimeout, Progress: s.errOut}); err != nil {
				return fmt.Errorf("write %s: %w", o.out, err)
			}
			return printBuild(s, g, o.out, res, b.Artifacts)
		},
	}
	o.bind(cmd)
	return cmd
}

type buildSummary struct {
	Version   string                   `json:"version"`
	Out       string                   `json:"out"`
	Providers []builder.ProviderResult `json:"providers"`
	Files     map[string][]fileSummary `json:"files"`
	Warnings  []string                 `json:"warnings"`
	pipeline.Artifacts
}

type fileSummary struct {
	Name   string `json:"name"`
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
}

// lintBuilt runs the contract checks on a fresh build: findings are printed,
// errors fail the build before anything is written.
func lintBuilt(s streams, res *builder.Result) error {
	rep := contract.Lint(res.Release, contract.Options{Disabled: contract.Disabled(res.Config.Lint)})
	if len(rep.Findings) > 0 || len(rep.Waived) > 0 {
		if err := rep.WriteText(s.errOut); err != nil {
			return err
		}
	}
	if rep.HasErrors() {
		return fmt.Errorf("lint: %d contract errors (see above); nothing was written", rep.Count(contract.Error))
	}
	return nil
}

func printBuild(s streams, g *globalOptions, out string, res *builder.Result, art pipeline.Artifacts) error {
	for _, w := range res.Warnings {
		fmt.Fprintf(s.errOut, "warning: %s\n", w)
	}
	sum := buildSummary{Version: res.Release.Version, Out: out, Providers: res.Providers, Files: map[string][]fileSummary{}, Warnings: res.Warnings, Artifacts: art}
	for _, p := range res.Release.Providers {
		for _, f := range p.Assets() {
			sum.Files[p.Label()] = append(sum.Files[p.Label()], fileSummary{Name: f.Name, Size: len(f.Data), SHA256: f.SHA256()})
		}
	}
	if g.output == "json" {
		return printJSON(s.out, sum)
	}
	for i, p := range res.Release.Providers {
		r := res.Providers[i]
		fmt.Fprintf(s.out, "%s %s -> %s\n", p.Label(), p.Version, p.Dir(out))
		fmt.Fprintf(s.out, "  namespace %s, %d objects, images %v\n", r.Namespace, r.Objects, r.Images)
		writeVariables(s.out, r.Variables)
		for _, f := range sum.Files[p.Label()] {
			fmt.Fprintf(s.out, "  %-45s %8d  sha256:%s\n", filepath.Base(f.Name), f.Size, f.SHA256[:16])
		}
	}
	return nil
}

func writeVariables(w io.Writer, vars []builder.Variable) {
	if len(vars) == 0 {
		fmt.Fprintln(w, "  variables: none")
		return
	}
	fmt.Fprintln(w, "  variables:")
	for _, v := range vars {
		if v.Required {
			fmt.Fprintf(w, "    %s (required)\n", v.Name)
		} else {
			fmt.Fprintf(w, "    %s (default %q)\n", v.Name, *v.Default)
		}
	}
}
