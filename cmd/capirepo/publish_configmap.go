package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/publish/configmap"
	"github.com/capirepo/capirepo/release"
)

type publishConfigMapOptions struct {
	fromOptions
	namespace string
	out       string
}

func newPublishConfigMapCmd(s streams, g *globalOptions) *cobra.Command {
	o := &publishConfigMapOptions{}
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
			if err := o.fromArg(cmd, args); err != nil {
				return err
			}
			rel, err := o.load()
			if err != nil {
				return err
			}
			return runPublishConfigMap(s, g, rel, o)
		},
	}
	o.bind(cmd, s.errOut)
	cmd.Flags().StringVar(&o.namespace, "namespace", "", "namespace of every ConfigMap and Provider resource (default: each provider's own)")
	cmd.Flags().StringVar(&o.out, "out", "", "file to write (default: stdout)")
	return cmd
}

// configMapSummary is the -o json result.
type configMapSummary struct {
	Out        string           `json:"out,omitempty"`
	ConfigMaps []configMapEntry `json:"configMaps"`
}

type configMapEntry struct {
	Provider   string `json:"provider"`
	Version    string `json:"version"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	Compressed bool   `json:"compressed"`
	Bytes      int    `json:"bytes"`
}

func runPublishConfigMap(s streams, g *globalOptions, rel *release.Release, o *publishConfigMapOptions) error {
	data, items, err := configmap.Render(rel, configmap.Options{Namespace: o.namespace})
	if err != nil {
		return err
	}
	sum := configMapSummary{Out: o.out}
	large := false
	for _, it := range items {
		sum.ConfigMaps = append(sum.ConfigMaps, configMapEntry{Provider: it.ID.Label(), Version: it.Version, Namespace: it.Namespace,
			Name: it.Name, Compressed: it.Compressed, Bytes: it.Size})
		state := ""
		if it.Compressed {
			state = fmt.Sprintf(", components gzipped (%d bytes of metadata + components)", it.RawSize)
		}
		fmt.Fprintf(s.errOut, "ConfigMap %s/%s: %d bytes%s\n", it.Namespace, it.Name, it.Size, state)
		large = large || it.Size > configmap.ClientSideApplyLimit
	}
	if o.out == "" {
		if g.output == "json" {
			return usagef("-o json needs --out FILE: the YAML goes to stdout otherwise")
		}
		if _, err := s.out.Write(data); err != nil {
			return err
		}
	} else if err := fsafe.WriteFileAtomic(o.out, data); err != nil {
		return err
	}
	target := o.out
	if target == "" {
		target = "-"
	}
	hint := fmt.Sprintf("apply with: kubectl apply --server-side -f %s", target)
	if large {
		hint += "  (client-side apply fails on ConfigMaps over 256 KiB)"
	}
	fmt.Fprintln(s.errOut, hint)
	if g.output == "json" {
		return printJSON(s.out, sum)
	}
	return nil
}
