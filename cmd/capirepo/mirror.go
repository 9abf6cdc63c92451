package main

import (
	"context"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/publish/targets"
)

type mirrorOptions struct {
	to               string
	all              bool
	clusterctlConfig string
	targetFlags
	images      string
	replace     bool
	concurrency int
	noVerify    bool
	certManager bool
	configOut   configOut
	signatures  verifyFlags
}

func newMirrorCmd(s streams, g *globalOptions) *cobra.Command {
	o := &mirrorOptions{}
	cmd := &cobra.Command{
		Use:   "mirror PROVIDER[:VERSION]... --to TARGET",
		Short: "Copy upstream providers (and cert-manager, and their images) to a folder, GitLab or a registry for an air-gapped site",
		Long: `mirror reads providers from their upstream releases, as clusterctl would, and
writes them to TARGET: file://DIR, gitlab://HOST/PROJECT (HOST must start with
"gitlab.", as clusterctl requires) or oci://REGISTRY/PATH.

PROVIDER is a provider label (cluster-api, bootstrap-kubeadm,
infrastructure-aws, ...) from clusterctl's provider list and the providers: of
the clusterctl config. VERSION is vX.Y.Z, latest (the version clusterctl
installs) or latest-N (latest and the N published versions before it).
Drafts and tags without a release are never mirrored. metadata.yaml, the
components file and the cluster-template*.yaml and clusterclass-*.yaml files
are copied, with the other files the release's checksums.txt names (a variables
file, a script), as they are, and the signatures and SBOMs (below).
cert-manager is mirrored at the version clusterctl would install.

--images REGISTRY/PREFIX copies every image the components run (and
cert-manager's) to REGISTRY/PREFIX/<provider-label>/<name>, all platforms, by
digest. The clusterctl config for the site (providers:, cert-manager:, images:)
is printed, or written with --config-out; for an oci:// target, which clusterctl
cannot read, the cluster-api-operator Provider resources instead.

Upstream's signed checksums.txt, its provenance and their Sigstore bundles
and the SBOMs are copied with the files, and an image's signatures and
SBOMs (its OCI referrers) with the image, so the mirror can be checked as
upstream can. --require-signatures copies nothing unless every version's
signatures check out for --key or --certificate-identity with
--certificate-oidc-issuer (cosign's names).

A re-run copies only what is missing. A file that changed upstream under a
mirrored version is refused (exit 1) unless --replace. At the end clusterctl
reads every mirrored version back from the mirror.

Tokens: GITHUB_TOKEN (optional, for rate limits and private repositories),
GITLAB_ACCESS_TOKEN or CI_JOB_TOKEN for a GitLab target; registries use the
docker credential helpers and ~/.docker/config.json (OCI_USERNAME/OCI_PASSWORD
or OCI_ACCESS_TOKEN for an oci:// target, as publish oci reads them). An oci://
target holds the artifacts cluster-api-operator reads (see publish oci);
clusterctl itself reads no registry, so the mirror is read back by the
operator's rules, then through clusterctl's client from memory.`,
		Example: `  # The providers a site uses, at the versions clusterctl installs, into GitLab
  GITLAB_ACCESS_TOKEN=... capirepo mirror cluster-api:latest infrastructure-aws:latest \
    --to gitlab://gitlab.example.com/infra/capi-mirror --config-out clusterctl.yaml

  # The last three patch releases of a provider into a folder, with its images
  capirepo mirror infrastructure-aws:latest-2 --to file:///srv/capi --images registry.example.com/capi

  # Into a registry, for cluster-api-operator
  capirepo mirror infrastructure-aws:v2.13.0 --to oci://registry.example.com/capi/providers`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMirror(cmd.Context(), s, g, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.to, "to", "", "target: file://DIR, gitlab://HOST/PROJECT or oci://REGISTRY/PATH (required)")
	f.BoolVar(&o.all, "all", false, "mirror every provider the clusterctl config knows, at its URL's version")
	f.StringVar(&o.clusterctlConfig, "clusterctl-config", "", "clusterctl config whose providers: and cert-manager: apply (default clusterctl's own)")
	o.bindGitHubAPI(cmd, "GitHub REST API base for github.com provider URLs (default $GITHUB_API_URL, else https://api.github.com/)")
	o.bindGitLabURL(cmd, "GitLab instance URL for a gitlab:// target (default https://HOST)")
	o.bindTokenType(cmd, "GitLab token header: private or bearer (GITLAB_ACCESS_TOKEN), or job (CI_JOB_TOKEN)")
	f.StringVar(&o.images, "images", "", "copy every image to REGISTRY/PREFIX and write image overrides")
	f.BoolVar(&o.replace, "replace", false, "let mirrored files that changed upstream be replaced")
	o.bindPlainHTTP(cmd, "talk plain HTTP to an oci:// target registry")
	o.bindTimeout(cmd)
	f.IntVar(&o.concurrency, "concurrency", 4, "providers mirrored at once")
	f.BoolVar(&o.noVerify, "no-verify", false, "do not read the mirror back through clusterctl")
	f.BoolVar(&o.certManager, "cert-manager", true, "mirror cert-manager at the version clusterctl would install")
	o.configOut.bind(cmd, "write the site's clusterctl config (for an oci:// target: the operator's Provider resources) to this file (atomically) instead of stdout")
	o.signatures.bind(cmd, "require-signatures", "copy nothing unless every version is signed upstream (its checksums.txt and provenance, as capirepo sign makes them) for --key or --certificate-identity with --certificate-oidc-issuer")
	return cmd
}

func runMirror(ctx context.Context, s streams, g *globalOptions, o *mirrorOptions, args []string) error {
	if o.to == "" {
		return usagef("mirror needs --to file://DIR, gitlab://HOST/PROJECT or oci://REGISTRY/PATH")
	}
	if len(args) == 0 && !o.all {
		return usagef("name at least one PROVIDER[:VERSION] (e.g. infrastructure-aws:latest), or --all")
	}
	if o.all && len(args) > 0 {
		return usagef("--all mirrors every provider of the clusterctl config: give no PROVIDER with it")
	}
	if o.concurrency < 1 {
		return usagef("--concurrency must be at least 1")
	}
	if err := o.configOut.check(); err != nil {
		return err
	}
	cc, err := clusterctlConfig(ctx, o.clusterctlConfig)
	if err != nil {
		return err
	}
	loc, err := targets.Parse(o.to)
	if err != nil {
		return usagef("--to %v", err)
	}
	required, err := o.signatures.verifier(ctx, s, o.timeout)
	if err != nil {
		return err
	}
	to, err := o.options(s)
	if err != nil {
		return err
	}
	// The providers' repositories are read with GitHub's API and the
	// tokens; --gitlab-url and --plain-http are the target's.
	sources := targets.Options{Getenv: to.Getenv, HTTPClient: to.HTTPClient, GitHub: to.GitHub}
	// On a terminal, a bar per upload to GitLab, with the run's lines above the bars.
	bars := newUploadBars(s, g)
	defer bars.Close()
	ms := bars.streams(s)
	to.GitHub, to.Replace, to.Progress, to.UploadProgress = github.Options{}, o.replace, ms.errOut, bars.hook()
	t, err := pipeline.OpenMirrorTarget(ctx, loc, to)
	if err != nil {
		return fmt.Errorf("--to %w", err)
	}
	vars := tokenVariables(s.getenv)
	if to.GitLab.TokenType == gitlab.JobToken && loc.Scheme == "gitlab" {
		vars["gitlab-access-token"] = s.getenv("CI_JOB_TOKEN") // clusterctl reads the mirror back with it
	}
	// On a terminal one line shows the provider versions as they are copied;
	// elsewhere (CI logs) every step is a line of its own.
	// With bars, steps are lines above the bars.
	log := ms.errOut
	var progress pipeline.Progress
	if isTerminal(s.errOut) {
		log, progress = io.Discard, pipeline.Lines(ms.errOut, bars == nil)
	}
	sum, err := pipeline.Mirror(ctx, pipeline.MirrorOptions{
		Requests: args, All: o.all, Clusterctl: cc, CertManager: o.certManager,
		To: loc, Target: t,
		Sources: sources,
		Images:  o.images, ImageOptions: publish.RegistryOptions(publish.Registry{Keychain: authn.DefaultKeychain, Secrets: s.secrets, HTTP: publish.HTTPOptions{Timeout: o.timeout, Progress: s.errOut}}),
		Concurrency: o.concurrency, NoVerify: o.noVerify, Variables: vars, RequireSignatures: required,
		Log: log, Progress: progress,
	})
	bars.Close()
	if sum == nil {
		return err
	}
	configFile := string(o.configOut)
	if err == nil && o.configOut != "" {
		var werr error
		if configFile, _, werr = publish.WriteFileIfChanged(configFile, []byte(sum.Config)); werr != nil {
			return fmt.Errorf("--config-out: %w", werr)
		}
	}
	if g.output == "json" {
		if perr := printJSON(s.out, sum); perr != nil {
			return perr
		}
		return err
	}
	// Each version's counts were said as it was copied (a log line, or its
	// progress line): not again here.
	copied := 0
	for _, i := range sum.Images {
		if i.Copied {
			copied++
		}
	}
	if len(sum.Images) > 0 {
		fmt.Fprintf(s.errOut, "images: %d copied, %d already there\n", copied, len(sum.Images)-copied)
	}
	for _, w := range sum.Warnings {
		fmt.Fprintf(s.errOut, "warning: %s\n", w)
	}
	what := "clusterctl config for the site"
	if sum.ConfigFor != "" {
		what = "Provider resources of " + sum.ConfigFor + " for the site (clusterctl cannot install from this mirror)"
	}
	if err == nil && o.configOut == "" {
		fmt.Fprint(s.out, sum.Config)
		if sum.ConfigFor != "" {
			fmt.Fprintf(s.errOut, "%s on stdout\n", what)
		}
	} else if err == nil {
		fmt.Fprintf(s.errOut, "%s written to %s\n", what, configFile)
	}
	return err
}
