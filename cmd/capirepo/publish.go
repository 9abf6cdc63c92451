package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/pipeline"
)

// runPublish publishes through pipeline.Publish, the one flow of release
// and every publish command, with upload bars on a terminal, then prints
// the report.
func runPublish(ctx context.Context, s streams, g *globalOptions, o pipeline.PublishOptions) error {
	bars, bs := uploadBars(s, g)
	defer bars.Close()
	o.TargetOptions.Progress, o.TargetOptions.UploadProgress, o.Log = bs.errOut, bars.Hook(), bs.errOut
	p, err := pipeline.Publish(ctx, o)
	bars.Close()
	if err != nil {
		return err
	}
	return printOutcome(s, g, p, nil)
}

func newPublishCmd(s streams, g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "publish",
		Short: "Publish a built release: to GitHub, GitLab generic packages, a local folder tree, an OCI registry or operator ConfigMaps",
		Long: `Publishes what capirepo build wrote (DIST, default dist) to one target.
DIST is read back through clusterctl's client first, as release reads its
dist: nothing clusterctl cannot read is published.
Each target compares before writing: unchanged files are skipped, files the
version lacks (bundles and provenance of capirepo sign, run after publishing)
are added, changed ones are an error unless --replace, and a re-run finishes
an interrupted publish.
What was done goes to stderr; the result (the providers: entry for
clusterctl's config, or the operator's Provider resources) to stdout, or with
--config-out to that file (github, gitlab, local); then, on stderr, what to
do next: the clusterctl init line that tries the version.`,
		Example: `  capirepo publish github --repo my-org/cluster-api-provider-example
  capirepo publish gitlab --gitlab-url https://gitlab.example.com --project infra/capi-mirror
  capirepo publish local --out /srv/capi-repo
  capirepo publish oci --repo registry.example.com/capi dist`,
	}
	cmd.AddCommand(
		newPublishGitHubCmd(s, g),
		newPublishGitLabCmd(s, g),
		newPublishLocalCmd(s, g),
		newPublishOCICmd(s, g),
		newPublishConfigMapCmd(s, g),
	)
	return cmd
}
