package main

import (
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/pipeline"
)

type publishOCIOptions struct {
	dist      distOptions
	oci       ociOptions
	targets   targetOptions
	repo      string
	replace   bool
	namespace string
	sign      bool
	signing   signOptions
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
			if err := o.dist.arg(cmd, args); err != nil {
				return err
			}
			to, err := o.targets.Options(s)
			if err != nil {
				return err
			}
			to.Replace, to.OCI = o.replace, o.oci.Options(s)
			signer, err := o.signing.signer(cmd.Context(), s, o.targets.timeout, o.sign)
			if err != nil {
				return err
			}
			return runPublish(cmd.Context(), s, g, pipeline.PublishOptions{Target: "oci://" + o.repo, TargetOptions: to, Signer: signer,
				SourceDateEpoch: s.getenv("SOURCE_DATE_EPOCH"), SourceDir: ".", Namespace: o.namespace,
				Dist: o.dist.dir, DistName: o.dist.what, Version: o.dist.version})
		},
	}
	o.dist.AddFlags(cmd, s.errOut, "version to publish when DIST holds several")
	o.oci.AddFlags(cmd, "", "", true)
	o.targets.AddFlags(cmd, targetUsage{})
	f := cmd.Flags()
	f.StringVar(&o.repo, "repo", "", "registry and path, e.g. registry.example.com/capi (each provider goes to REPO/<label>)")
	f.BoolVar(&o.replace, "replace", false, "move a tag that holds other content to the new artifact")
	f.StringVar(&o.namespace, "namespace", "", "namespace of the printed Provider resources (default: the namespace each provider's components create)")
	f.BoolVar(&o.sign, "sign", false, "sign each artifact pushed: a signature referrer of its digest (see capirepo sign)")
	o.signing.AddFlags(cmd)
	_ = cmd.MarkFlagRequired("repo")
	return cmd
}
