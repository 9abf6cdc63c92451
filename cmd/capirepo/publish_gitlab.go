package main

import (
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/publish"
)

type publishGitLabOptions struct {
	fromOptions
	url       string
	project   string
	pkg       string
	replace   bool
	tokenType string
	timeout   time.Duration
}

func newPublishGitLabCmd(s streams, g *globalOptions) *cobra.Command {
	o := &publishGitLabOptions{}
	cmd := &cobra.Command{
		Use:   "gitlab --url https://gitlab.HOST --project GROUP/PROJECT|ID",
		Short: "Upload every provider of a built release to GitLab generic packages",
		Long: `Uploads each provider as a generic package (name = provider label unless
--package, version = the exact tag) and prints the clusterctl provider URL.
Unchanged files are skipped; changed files are an error unless --replace,
which leaves exactly one copy of each. The token comes from
GITLAB_ACCESS_TOKEN (the variable clusterctl reads), or CI_JOB_TOKEN with
--token-type job inside GitLab CI.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tt, token, err := gitlabToken(s.getenv, o.tokenType)
			if err != nil {
				return err
			}
			if err := checkWaits(map[string]time.Duration{"timeout": o.timeout}); err != nil {
				return err
			}
			rel, err := o.load()
			if err != nil {
				return err
			}
			p, err := publish.NewGitLab(publish.GitLabOptions{
				URL: o.url, Project: o.project, Package: o.pkg, Token: token, TokenType: tt,
				Replace: o.replace, HTTPClient: httpClient(s, o.timeout), Progress: s.errOut,
			})
			if err != nil {
				return usageError{err}
			}
			sum, err := p.Publish(cmd.Context(), rel)
			if err != nil {
				return err
			}
			if err := printSummary(s, g, sum); err != nil || g.output == "json" {
				return err
			}
			// A ready entry for clusterctl.yaml's providers list.
			_, err = io.WriteString(s.errOut, publish.ClusterctlProvidersYAML(sum.Providers))
			return err
		},
	}
	o.bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.url, "url", "", "GitLab instance URL, e.g. https://gitlab.example.com")
	f.StringVar(&o.project, "project", "", "project path GROUP/[SUBGROUP/]NAME or numeric id")
	f.StringVar(&o.pkg, "package", "", "package name (default: each provider's label; only for a single-provider release)")
	f.BoolVar(&o.replace, "replace", false, "replace files whose content differs")
	f.StringVar(&o.tokenType, "token-type", "private", "token header: private (PRIVATE-TOKEN), bearer, or job (JOB-TOKEN from CI_JOB_TOKEN)")
	bindTimeout(cmd, &o.timeout)
	_ = cmd.MarkFlagRequired("url")
	_ = cmd.MarkFlagRequired("project")
	return cmd
}

// gitlabToken picks the token for a --token-type: GITLAB_ACCESS_TOKEN (the
// variable clusterctl reads) for private and bearer, CI_JOB_TOKEN for job.
func gitlabToken(getenv env, tokenType string) (publish.GitLabTokenType, string, error) {
	tt := publish.GitLabTokenType(tokenType)
	switch tt {
	case publish.GitLabPrivateToken, publish.GitLabBearerToken:
		if t := getenv("GITLAB_ACCESS_TOKEN"); t != "" {
			return tt, t, nil
		}
		return tt, "", usagef("set GITLAB_ACCESS_TOKEN (or use --token-type job with CI_JOB_TOKEN)")
	case publish.GitLabJobToken:
		if t := getenv("CI_JOB_TOKEN"); t != "" {
			return tt, t, nil
		}
		return tt, "", usagef("--token-type job needs CI_JOB_TOKEN, which GitLab CI sets in a job")
	}
	return tt, "", usagef("--token-type must be private, bearer or job, not %q", tokenType)
}
