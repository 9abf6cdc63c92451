package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/gitlab"
)

// mirrorOptions are mirror's flags, bound to what Mirror copies.
type mirrorOptions struct {
	pipeline.MirrorOptions
	to               string
	clusterctlConfig string
	replace          bool
	targets          targetOptions
	oci              ociOptions
	configOut        configOut
	signatures       signatureOptions
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
			o.Requests = args
			return runMirror(cmd.Context(), s, g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.to, "to", "", "target: file://DIR, gitlab://HOST/PROJECT or oci://REGISTRY/PATH (required)")
	f.BoolVar(&o.All, "all", false, "mirror every provider the clusterctl config knows, at its URL's version")
	f.StringVar(&o.clusterctlConfig, "clusterctl-config", "", "clusterctl config whose providers: and cert-manager: apply (default clusterctl's own)")
	o.targets.AddFlags(cmd, targetUsage{githubAPI: "GitHub REST API base for github.com provider URLs (default $GITHUB_API_URL, else https://api.github.com/)",
		gitlabURL: "GitLab instance URL for a gitlab:// target (default https://HOST)",
		tokenType: "GitLab token header: private or bearer (GITLAB_ACCESS_TOKEN), or job (CI_JOB_TOKEN)"})
	f.StringVar(&o.Images, "images", "", "copy every image to REGISTRY/PREFIX and write image overrides")
	f.BoolVar(&o.replace, "replace", false, "let mirrored files that changed upstream be replaced")
	o.oci.AddFlags(cmd, "", "talk plain HTTP to an oci:// target registry", false)
	f.IntVar(&o.Concurrency, "concurrency", 4, "providers mirrored at once")
	f.BoolVar(&o.NoVerify, "no-verify", false, "do not read the mirror back through clusterctl")
	f.BoolVar(&o.CertManager, "cert-manager", true, "mirror cert-manager at the version clusterctl would install")
	o.configOut.AddFlags(cmd, "write the site's clusterctl config (for an oci:// target: the operator's Provider resources) to this file (atomically) instead of stdout")
	o.signatures.AddFlags(cmd, "require-signatures", "copy nothing unless every version is signed upstream (its checksums.txt and provenance, as capirepo sign makes them) for --key or --certificate-identity with --certificate-oidc-issuer")
	return cmd
}

func runMirror(ctx context.Context, s streams, g *globalOptions, o *mirrorOptions) error {
	if o.to == "" {
		return cli.Usagef("mirror needs --to file://DIR, gitlab://HOST/PROJECT or oci://REGISTRY/PATH")
	}
	if err := o.Validate(ctx); err != nil {
		return err
	}
	if o.Concurrency < 1 {
		return cli.Usagef("--concurrency must be at least 1")
	}
	if err := o.configOut.check(); err != nil {
		return err
	}
	locs, err := pipeline.ParseTargets("--to", []string{o.to})
	if err != nil {
		return err
	}
	if o.RequireSignatures, err = o.signatures.verifier(ctx, s, o.targets.timeout); err != nil {
		return err
	}
	if o.Clusterctl, err = clusterctlConfig(ctx, o.clusterctlConfig); err != nil {
		return err
	}
	// On a terminal, a bar per upload to GitLab, with the run's lines above
	// the bars; one line shows the provider versions as they are copied.
	// Elsewhere (CI logs) every step is a line of its own.
	bars, ms := uploadBars(s, g)
	defer bars.Close()
	if o.TargetOptions, err = o.targets.Options(ms); err != nil {
		return err
	}
	o.To, o.Log, o.ConfigOut = locs[0], ms.errOut, string(o.configOut)
	if cli.IsTerminal(s.errOut) {
		o.Log, o.Progress = io.Discard, pipeline.Lines(ms.errOut, bars == nil)
	}
	// The providers' repositories are read with GitHub's API and the
	// tokens; --gitlab-url and --plain-http are the target's.
	o.Sources, o.Variables = o.targets.sources(s), tokenVariables(s.getenv)
	o.TargetOptions.GitHub.APIURL, o.TargetOptions.OCI.PlainHTTP = "", o.oci.plainHTTP
	o.TargetOptions.Replace, o.TargetOptions.UploadProgress = o.replace, bars.Hook()
	if o.TargetOptions.GitLab.TokenType == gitlab.JobToken && o.To.Scheme == "gitlab" {
		o.Variables["gitlab-access-token"] = s.getenv("CI_JOB_TOKEN") // clusterctl reads a GitLab mirror back with it
	}
	o.Registry = publish.Registry{Keychain: s.keychain(), HTTP: publish.HTTPOptions{Timeout: o.targets.timeout, Progress: s.errOut}}
	sum, err := pipeline.Mirror(ctx, o.MirrorOptions)
	bars.Close()
	if sum == nil {
		return err
	}
	return printOutcome(s, g, sum, err)
}
