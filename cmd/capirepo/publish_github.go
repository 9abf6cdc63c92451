package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/verify"
)

type publishGitHubOptions struct {
	dist        distOptions
	repo, tag   string
	notes       notesOptions
	replace     bool
	concurrency int
	targets     targetOptions
	images      bool
	platforms   []string
	configOut   configOut
}

func newPublishGitHubCmd(s streams, g *globalOptions) *cobra.Command {
	o := &publishGitHubOptions{}
	cmd := &cobra.Command{
		Use:   "github --repo OWNER/NAME [DIST]",
		Short: "Create or complete the GitHub release for the version and upload every asset",
		Long: `Publishes the built release DIST (default dist) as a GitHub release whose
tag is the version.
The release is created as a draft, the assets are uploaded (unchanged ones are
skipped, changed ones are an error unless --replace), read back and checked,
then the release is published (--draft leaves that to a person). A re-run
resumes an interrupted publish. An immutable release whose assets differ is
refused before any upload: a new version is the only fix.
--target creates the tag from COMMITISH when the release is published, so
the tag and the release appear together. --images first asks the registry
for every image the components run: publish a draft made before its images
were promoted (release --github-draft) with it.
The token comes from GITHUB_TOKEN; GITHUB_API_URL or --github-api-url select
a GitHub Enterprise server.`,
		Example: `  # The release in dist, as github.com/my-org/cluster-api-provider-example's release v1.4.0
  GITHUB_TOKEN=... capirepo publish github --repo my-org/cluster-api-provider-example

  # A draft on a GitHub Enterprise server
  GITHUB_TOKEN=... capirepo publish github --repo infra/capi --draft \
    --github-api-url https://github.example.com/api/v3/`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.dist.arg(cmd, args); err != nil {
				return err
			}
			owner, name, ok := strings.Cut(o.repo, "/")
			switch {
			case !ok || owner == "" || name == "" || strings.Contains(name, "/"):
				return cli.Usagef("--repo must be OWNER/NAME, not %q", o.repo)
			case o.concurrency < 0:
				return cli.Usagef("--concurrency must be positive")
			}
			if err := o.configOut.check(); err != nil {
				return err
			}
			to, err := o.targets.Options(s)
			if err != nil {
				return err
			}
			to.Replace, to.GitHub.Tag, to.GitHub.Concurrency = o.replace, o.tag, o.concurrency
			if err := o.notes.apply(&to); err != nil {
				return err
			}
			po := pipeline.PublishOptions{Target: "github://" + owner + "/" + name, TargetOptions: to, NotesFile: o.notes.notesFile,
				Dist: o.dist.dir, DistName: o.dist.what, Version: o.dist.version, ConfigOut: string(o.configOut)}
			if o.images {
				// Publishing a draft made before its images were promoted
				// (release --github-draft only reports them) is when the
				// release becomes installable: the images are checked first.
				po.Images = &pipeline.ImageCheck{Platforms: o.platforms, Keychain: s.keychain()}
			}
			return runPublish(cmd.Context(), s, g, po)
		},
	}
	o.dist.AddFlags(cmd, s.errOut, "version to publish when DIST holds several")
	f := cmd.Flags()
	f.StringVar(&o.repo, "repo", "", "GitHub repository OWNER/NAME")
	f.StringVar(&o.tag, "tag", "", "release tag (default: the version)")
	o.notes.AddFlags(cmd, "add "+publish.ProvenanceFile+", an in-toto statement (SLSA provenance v1) naming every asset with its sha256")
	o.notes.AddGitHubFlags(cmd, "")
	f.BoolVar(&o.replace, "replace", false, "replace assets whose content differs, and the title and notes of an existing release")
	f.IntVar(&o.concurrency, "concurrency", 4, "parallel uploads")
	o.targets.AddFlags(cmd, targetUsage{githubAPI: "GitHub API URL, e.g. https://github.example.com/api/v3/ (default: GITHUB_API_URL, else api.github.com)"})
	cli.DeprecatedAlias(s.errOut, f, "api-url", "github-api-url") // the name release uses; the old one stays for a release
	f.BoolVar(&o.images, "images", false, "first ask the registry for every image the components run, for every --platforms; a missing one stops the run before anything is uploaded or published (a draft made before its images were promoted)")
	f.StringSliceVar(&o.platforms, "platforms", verify.DefaultPlatforms, "platforms every image must have, for --images")
	o.configOut.AddFlags(cmd, configOutUsage)
	_ = cmd.MarkFlagRequired("repo")
	return cmd
}
