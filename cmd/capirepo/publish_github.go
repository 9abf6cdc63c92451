package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/publish"
)

type publishGitHubOptions struct {
	fromOptions
	repo        string
	tag         string
	target      string
	draft       bool
	replace     bool
	concurrency int
	apiURL      string
	timeout     time.Duration
}

func (o *publishGitHubOptions) validate() (owner, name string, err error) {
	owner, name, ok := strings.Cut(o.repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", usagef("--repo must be OWNER/NAME, not %q", o.repo)
	}
	if o.concurrency < 0 {
		return "", "", usagef("--concurrency must be positive")
	}
	return owner, name, nil
}

func newPublishGitHubCmd(s streams, g *globalOptions) *cobra.Command {
	o := &publishGitHubOptions{}
	cmd := &cobra.Command{
		Use:   "github --repo OWNER/NAME",
		Short: "Create or complete the GitHub release for the version and upload every asset",
		Long: `Publishes a built release as a GitHub release whose tag is the version.
The release is created as a draft, the assets are uploaded (unchanged ones are
skipped, changed ones are an error unless --replace), read back and checked,
then the release is published. A re-run resumes an interrupted publish.
The token comes from GITHUB_TOKEN; GITHUB_API_URL or --api-url select a
GitHub Enterprise server.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			owner, name, err := o.validate()
			if err != nil {
				return err
			}
			if err := checkWaits(map[string]time.Duration{"timeout": o.timeout}); err != nil {
				return err
			}
			token := s.getenv("GITHUB_TOKEN")
			if token == "" {
				return usagef("set GITHUB_TOKEN to a token that may write releases of %s", o.repo)
			}
			rel, err := o.load()
			if err != nil {
				return err
			}
			api := o.apiURL
			if api == "" {
				api = s.getenv("GITHUB_API_URL")
			}
			p, err := publish.NewGitHub(publish.GitHubOptions{
				Owner: owner, Repo: name, Tag: o.tag, Target: o.target,
				Draft: o.draft, Replace: o.replace, Concurrency: o.concurrency,
				APIURL: api, Token: token, HTTPClient: httpClient(s, o.timeout), Progress: s.errOut,
			})
			if err != nil {
				return usageError{err}
			}
			sum, err := p.Publish(cmd.Context(), rel)
			if err != nil {
				return err
			}
			return printSummary(s, g, sum)
		},
	}
	o.bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.repo, "repo", "", "GitHub repository OWNER/NAME")
	f.StringVar(&o.tag, "tag", "", "release tag (default: the version)")
	f.StringVar(&o.target, "target", "", "commitish the tag is created from when the release is published (default: the default branch)")
	f.BoolVar(&o.draft, "draft", false, "leave the release as a draft")
	f.BoolVar(&o.replace, "replace", false, "replace assets whose content differs")
	f.IntVar(&o.concurrency, "concurrency", 4, "parallel uploads")
	f.StringVar(&o.apiURL, "api-url", "", "GitHub API URL, e.g. https://github.example.com/api/v3/ (default: GITHUB_API_URL, else api.github.com)")
	bindTimeout(cmd, &o.timeout)
	_ = cmd.MarkFlagRequired("repo")
	return cmd
}
