package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/provider"
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
Every version in DIR is verified, unless --version names one. The report is
printed on stdout.`,
		Example: `  # Everything build wrote into dist
  capirepo verify dist

  # One version of a local repository tree, with a given Kubernetes version
  capirepo verify /srv/capi-repo --version v1.4.0 --kubernetes-version v1.33.0`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkDirFlag("verify", args[0]); err != nil {
				return err
			}
			if err := checkVersionFlag(version); err != nil {
				return err
			}
			versions := []string{version}
			if version == "" {
				versions = dirVersions(args[0]) // every version, not only the newest
			}
			if len(versions) > 1 {
				fmt.Fprintf(s.errOut, "verifying %d versions: %s\n", len(versions), strings.Join(versions, ", "))
			}
			all := &verify.Report{}
			var failed []string
			var firstErr error
			for _, v := range versions {
				rep, err := verify.Dir(cmd.Context(), args[0], verify.Options{Version: v, KubernetesVersion: k8s, Variables: tokenVariables(s.getenv)})
				if rep != nil {
					all.Providers = append(all.Providers, rep.Providers...)
				}
				if err != nil {
					if len(versions) == 1 {
						firstErr = err
						break
					}
					fmt.Fprintf(s.errOut, "%s: %v\n", v, err)
					failed = append(failed, v)
					if firstErr == nil {
						firstErr = err
					}
				}
			}
			err := firstErr
			if len(failed) > 0 {
				err = fmt.Errorf("%d of %d versions failed: %s (the first: %w)", len(failed), len(versions), strings.Join(failed, ", "), firstErr)
			}
			var werr error
			if len(all.Providers) > 0 || err == nil {
				if g.output == "json" {
					// The report, and why it failed when it did.
					doc := struct {
						*verify.Report
						Error string `json:"error,omitempty"`
					}{Report: all}
					if err != nil {
						doc.Error = err.Error()
					}
					werr = printJSON(s.out, doc)
				} else {
					werr = all.WriteText(s.out)
				}
			}
			if err != nil {
				return err
			}
			return werr
		},
	}
	cmd.Flags().StringVar(&version, "version", "", "version to verify (default: every version in DIR)")
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

// dirVersions lists the versions of a dist folder or repository tree,
// DIR/<label>/<version>/, oldest first; [""] (verify.Dir picks) for one
// <label>/<version> folder or when there is none.
func dirVersions(root string) []string {
	abs, err := filepath.Abs(root)
	if err != nil {
		return []string{""}
	}
	if _, err := provider.ParseVersion(filepath.Base(abs)); err == nil {
		return []string{""}
	}
	labels, _ := os.ReadDir(abs)
	seen := map[string]*semver.Version{}
	for _, l := range labels {
		if _, err := provider.ParseLabel(l.Name()); err != nil || !l.IsDir() {
			continue
		}
		vs, _ := os.ReadDir(filepath.Join(abs, l.Name()))
		for _, v := range vs {
			if sv, err := provider.ParseVersion(v.Name()); err == nil && v.IsDir() {
				seen[v.Name()] = sv
			}
		}
	}
	if len(seen) == 0 {
		return []string{""}
	}
	out := slices.Collect(maps.Keys(seen))
	slices.SortFunc(out, func(a, b string) int { return seen[a].Compare(seen[b]) })
	return out
}
