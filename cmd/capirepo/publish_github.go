package main

import (
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/redact"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/verify"
)

type publishGitHubOptions struct {
	fromOptions
	repo        string
	tag         string
	notes       releaseNotesOptions
	replace     bool
	concurrency int
	apiURL      string
	timeout     time.Duration
	images      bool
	platforms   []string
	configOut   configOut
}

func (o *publishGitHubOptions) validate() (owner, name string, err error) {
	owner, name, ok := strings.Cut(o.repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", usagef("--repo must be OWNER/NAME, not %q", o.repo)
	}
	if o.concurrency < 0 {
		return "", "", usagef("--concurrency must be positive")
	}
	return owner, name, o.configOut.check()
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
			if err := o.fromArg(cmd, args); err != nil {
				return err
			}
			owner, name, err := o.validate()
			if err != nil {
				return err
			}
			gho := github.Options{Tag: o.tag, Concurrency: o.concurrency, APIURL: gitHubAPI(s, o.apiURL)}
			if err := o.notes.apply(&gho); err != nil {
				return err
			}
			po := pipeline.PublishOptions{Target: "github://" + owner + "/" + name, Load: o.load, ConfigOut: string(o.configOut),
				TargetOptions: targets.Options{Replace: o.replace, HTTPClient: httpClient(s, o.timeout), GitHub: gho}}
			if o.images {
				// Publishing a draft made before its images were promoted
				// (release --github-draft only reports them) is when the
				// release becomes installable: the images are checked first.
				po.Images = &pipeline.ImageCheck{Platforms: o.platforms, Keychain: redact.Keychain(authn.DefaultKeychain, s.secrets)}
			}
			return runPublish(cmd.Context(), s, g, po, publishOut{})
		},
	}
	o.bind(cmd, s.errOut)
	f := cmd.Flags()
	f.StringVar(&o.repo, "repo", "", "GitHub repository OWNER/NAME")
	f.StringVar(&o.tag, "tag", "", "release tag (default: the version)")
	o.notes.bind(cmd, "", true)
	f.BoolVar(&o.replace, "replace", false, "replace assets whose content differs, and the title and notes of an existing release")
	f.IntVar(&o.concurrency, "concurrency", 4, "parallel uploads")
	f.StringVar(&o.apiURL, "github-api-url", "", "GitHub API URL, e.g. https://github.example.com/api/v3/ (default: GITHUB_API_URL, else api.github.com)")
	deprecatedAlias(s.errOut, f, "api-url", "github-api-url") // the name release uses; the old one stays for a release
	bindTimeout(cmd, &o.timeout)
	f.BoolVar(&o.images, "images", false, "first ask the registry for every image the components run, for every --platforms; a missing one stops the run before anything is uploaded or published (a draft made before its images were promoted)")
	f.StringSliceVar(&o.platforms, "platforms", verify.DefaultPlatforms, "platforms every image must have, for --images")
	o.configOut.bind(cmd, configOutUsage)
	_ = cmd.MarkFlagRequired("repo")
	return cmd
}
