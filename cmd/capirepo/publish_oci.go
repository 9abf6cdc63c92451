package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/epoch"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish/oci"
	"github.com/capirepo/capirepo/publish/operator"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/sign"
)

// ociFlags are the flags of every command that talks to an OCI registry.
type ociFlags struct {
	plainHTTP bool
	format    string
	single    bool
	// timeout bounds every wait for the registry (see --timeout); 0 means
	// publish.DefaultTimeout.
	timeout time.Duration
}

// transport is what capirepo talks to a registry through: every wait
// bounded and a "waiting for" line, as for GitHub and GitLab.
func (f ociFlags) transport(s streams) http.RoundTripper { return httpClient(s, f.timeout).Transport }

// bind binds the flags; prefix names them apart in commands with other
// targets (release: --oci-format, ...).
func (f *ociFlags) bind(cmd *cobra.Command, write bool, prefix string) {
	cmd.Flags().BoolVar(&f.plainHTTP, prefix+"plain-http", false, "talk plain HTTP to the registry (printed references then start with http://, the operator's plain-HTTP switch)")
	if !write {
		return
	}
	cmd.Flags().StringVar(&f.format, prefix+"format", string(oci.FormatOperator),
		"artifact layout: operator (what cluster-api-operator reads) or proposal (the Cluster API proposal's single tar+gzip layer, which the operator CANNOT read)")
	cmd.Flags().BoolVar(&f.single, prefix+"single-artifact", false, "one artifact at REGISTRY/PATH:<version> for all providers of a monorepo release, under the operator's versioned file names")
}

type publishOCIOptions struct {
	fromOptions
	ociFlags
	repo      string
	replace   bool
	namespace string
	sign      bool
	signing   signFlags
}

func newPublishOCICmd(s streams, g *globalOptions) *cobra.Command {
	o := &publishOCIOptions{}
	cmd := &cobra.Command{
		Use:   "oci --repo REGISTRY/PATH [DIST]",
		Short: "Push each provider of a built release as an OCI artifact cluster-api-operator installs from",
		Long: `Pushes one artifact per provider and version of the built release DIST
(default dist) to REGISTRY/PATH/<label>:<version>
in the layout cluster-api-operator reads (spec.fetchConfig.oci): one
application/yaml layer per file, titled with the operator's file names
(metadata.yaml, <type>-components.yaml with the operator's type names core,
bootstrap, controlplane, infrastructure, ipam, runtimeextension, addon),
templates and ClusterClasses as further layers.

A tag is never moved: the same files again send nothing; other files are an
error unless --replace. SOURCE_DATE_EPOCH sets the created annotation, so a
rebuild gives the same digest. Prints the reference the operator takes
(never a digest: the operator cannot parse one), the digest beside it, and
the Provider resources (on stdout) that install it.

--format proposal writes the layout of Cluster API's provisional proposal for
clusterctl (one tar+gzip layer). cluster-api-operator CANNOT read it: it never
unpacks a layer.

--sign signs each artifact pushed as cosign sign does (see capirepo sign):
a signature referrer of its digest, keyless in CI or with --key.

Credentials: OCI_USERNAME/OCI_PASSWORD, OCI_ACCESS_TOKEN or OCI_REFRESH_TOKEN
(the variables the operator reads from its configSecret), else the docker
config and its credential helpers (docker login). They are never printed.`,
		Example: `  # Push dist to a registry you are logged in to (docker login) and save the Provider resources
  capirepo publish oci --repo registry.example.com/capi dist > providers.yaml

  # A plain-HTTP registry in a kind cluster, with credentials from the environment
  OCI_USERNAME=ci OCI_PASSWORD=... capirepo publish oci --repo localhost:5000/capi --plain-http`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.fromArg(cmd, args); err != nil {
				return err
			}
			opts, err := o.options(cmd.Context(), s, ".")
			if err != nil {
				return err
			}
			var signer *sign.Signer
			if o.sign {
				if signer, err = o.signing.signer(cmd.Context(), s, o.timeout); err != nil {
					return err
				}
			} else if err := o.signing.unused("sign"); err != nil {
				return err
			}
			return runPublish(cmd.Context(), s, g, pipeline.PublishOptions{Target: "oci://" + o.repo, Load: o.load, Signer: signer, Created: opts.Meta.Created,
				Namespace: o.namespace, TargetOptions: targets.Options{Replace: o.replace, HTTPClient: httpClient(s, o.timeout), OCI: opts}}, publishOut{format: o.format})
		},
	}
	o.fromOptions.bind(cmd, s.errOut)
	o.ociFlags.bind(cmd, true, "")
	bindTimeout(cmd, &o.timeout)
	f := cmd.Flags()
	f.StringVar(&o.repo, "repo", "", "registry and path, e.g. registry.example.com/capi (each provider goes to REPO/<label>)")
	f.BoolVar(&o.replace, "replace", false, "move a tag that holds other content to the new artifact")
	f.StringVar(&o.namespace, "namespace", "", "namespace of the printed Provider resources (default: the namespace each provider's components create)")
	f.BoolVar(&o.sign, "sign", false, "sign each artifact pushed: a signature referrer of its digest (see capirepo sign)")
	o.signing.bind(cmd)
	_ = cmd.MarkFlagRequired("repo")
	return cmd
}

// printResources prints Provider resources on stdout, or says why there are
// none (the proposal's format).
func printResources(s streams, res []operator.Resource, format string) error {
	if format == string(oci.FormatProposal) {
		_, err := io.WriteString(s.errOut, "format proposal: cluster-api-operator cannot read these artifacts (it never unpacks a layer); no Provider resources printed\n")
		return err
	}
	var b strings.Builder
	for _, r := range res {
		y, err := r.YAML()
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	if _, err := io.WriteString(s.out, b.String()); err != nil {
		return err
	}
	_, err := io.WriteString(s.errOut, "Provider resources on stdout: apply them where cluster-api-operator runs; a private registry needs OCI_USERNAME/OCI_PASSWORD (or OCI_ACCESS_TOKEN) in the provider's configSecret\n")
	return err
}

// options are the registry options of the flags and the environment: the
// source URL and SOURCE_DATE_EPOCH (the credentials are the target's own).
func (f ociFlags) options(ctx context.Context, s streams, sourceDir string) (oci.Options, error) {
	created, err := sourceDateEpoch(s.getenv)
	if err != nil {
		return oci.Options{}, err
	}
	return oci.Options{Format: oci.Format(f.format), SingleArtifact: f.single, PlainHTTP: f.plainHTTP,
		Meta: oci.Meta{Source: ociSource(ctx, s.getenv, sourceDir), Created: created}}, nil
}

// ociSource is the org.opencontainers.image.source of the artifacts: the
// repository CI builds (GitHub Actions, GitLab CI), else dir's git origin.
func ociSource(ctx context.Context, getenv env, dir string) string {
	if server, repo := getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"); server != "" && repo != "" {
		return strings.TrimSuffix(server, "/") + "/" + repo
	}
	if u := getenv("CI_PROJECT_URL"); u != "" {
		return u
	}
	return pipeline.SourceURL(ctx, dir)
}

// sourceDateEpoch reads SOURCE_DATE_EPOCH; the zero time when unset.
func sourceDateEpoch(getenv env) (time.Time, error) {
	v := getenv(epoch.Var)
	t, err := epoch.Parse(v)
	if err != nil {
		return time.Time{}, usagef("%s=%q: %v", epoch.Var, strings.TrimSpace(v), err)
	}
	return t, nil
}
