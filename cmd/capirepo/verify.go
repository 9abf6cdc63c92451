package main

import (
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/verify"
)

func newVerifyCmd(s streams, g *globalOptions) *cobra.Command {
	var version, k8s string
	cmd := &cobra.Command{
		Use:   "verify DIR",
		Short: "Read a built or published provider repository back through clusterctl's client",
		Long: `Reads DIR (a dist folder, a clusterctl local repository tree or one
<label>/<version> folder) the way clusterctl init and clusterctl generate
cluster do: versions, metadata.yaml, components with and without a target
namespace, every cluster-template flavor with its ClusterClasses, and every
clusterclass file. Fails where clusterctl would fail, with its message.
The report is printed on stdout.`,
		Example: `  # Everything build wrote into dist
  capirepo verify dist

  # One version of a local repository tree, with a given Kubernetes version
  capirepo verify /srv/capi-repo --version v1.4.0 --kubernetes-version v1.33.0`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := verify.Options{Version: version, KubernetesVersion: k8s, Variables: tokenVariables(s.getenv)}
			rep, err := verify.Dir(cmd.Context(), args[0], opts)
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
	cmd.Flags().StringVar(&k8s, "kubernetes-version", "", "KUBERNETES_VERSION for cluster templates (default "+verify.KubernetesVersion+")")
	return cmd
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
