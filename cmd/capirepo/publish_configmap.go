package main

import (
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/pipeline"
)

func newPublishConfigMapCmd(s streams, g *globalOptions) *cobra.Command {
	var dist distOptions
	var o pipeline.ConfigMapOptions
	cmd := &cobra.Command{
		Use:   "configmap [--out FILE] [DIST]",
		Short: "Write the ConfigMaps and Provider resources cluster-api-operator installs a built release from",
		Long: `Writes to --out (default stdout), from the built release DIST (default
dist), as multi-document YAML for kubectl apply --server-side or a GitOps
repository, each provider's namespace, one ConfigMap per provider version
(labels provider.cluster.x-k8s.io/name, /type and /version; data.metadata and
data.components) and the Provider resource (InfrastructureProvider, ...)
whose spec.fetchConfig.selector selects it. When metadata and components
exceed 1048576 bytes the components are gzipped into binaryData with the
annotation provider.cluster.x-k8s.io/compressed: "true", as the operator
expects; a provider still too large compressed is an error.

The operator reads ConfigMaps only from the Provider's namespace: --namespace
puts everything in one; the default is each provider's own (the namespace
its components create). ConfigMaps over 256 KiB cannot be applied with
client-side kubectl apply: use kubectl apply --server-side.`,
		Example: `  # The ConfigMaps and Provider resources, for kubectl or a GitOps repository
  capirepo publish configmap dist --namespace capi-providers --out providers.yaml
  kubectl apply --server-side -f providers.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := dist.arg(cmd, args); err != nil {
				return err
			}
			if o.Out == "" && g.output == "json" {
				return cli.Usagef("-o json needs --out FILE: the YAML goes to stdout otherwise")
			}
			o.Dist, o.DistName, o.Version = dist.dir, dist.what, dist.version
			rep, err := pipeline.PublishConfigMap(cmd.Context(), o)
			if err != nil {
				return err
			}
			return printOutcome(s, g, rep, nil)
		},
	}
	dist.AddFlags(cmd, s.errOut, "version to publish when DIST holds several")
	cmd.Flags().StringVar(&o.Namespace, "namespace", "", "namespace of every ConfigMap and Provider resource (default: each provider's own)")
	cmd.Flags().StringVar(&o.Out, "out", "", "file to write (default: stdout)")
	return cmd
}
