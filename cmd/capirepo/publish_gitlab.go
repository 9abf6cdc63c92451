package main

import (
	"net/url"
	"strings"
	"time"

	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/publish/targets"

	"github.com/spf13/cobra"
)

type publishGitLabOptions struct {
	fromOptions
	url       string
	project   string
	pkg       string
	replace   bool
	tokenType string
	release   gitlabReleaseOptions
	timeout   time.Duration
	configOut configOut
}

func newPublishGitLabCmd(s streams, g *globalOptions) *cobra.Command {
	o := &publishGitLabOptions{}
	cmd := &cobra.Command{
		Use:   "gitlab --gitlab-url https://gitlab.HOST --project GROUP/PROJECT|ID [DIST]",
		Short: "Upload every provider of a built release to GitLab generic packages",
		Long: `Uploads each provider of the built release DIST (default dist) as a
generic package (name = provider label unless --package, version = the
exact tag) and prints the clusterctl provider URL.
Unchanged files are skipped; changed files are an error unless --replace,
which leaves exactly one copy of each. The token comes from
GITLAB_ACCESS_TOKEN (the variable clusterctl reads), or CI_JOB_TOKEN with
--gitlab-token-type job inside GitLab CI.`,
		Example: `  # From a workstation, with a personal or project access token
  GITLAB_ACCESS_TOKEN=... capirepo publish gitlab --gitlab-url https://gitlab.example.com --project infra/capi-mirror

  # Inside a GitLab CI job, with the job's token
  capirepo publish gitlab --gitlab-url "$CI_SERVER_URL" --project "$CI_PROJECT_ID" --gitlab-token-type job`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.fromArg(cmd, args); err != nil {
				return err
			}
			if err := checkGitLabURL(o.url); err != nil {
				return err
			}
			tt, err := checkTokenType(o.tokenType)
			if err != nil {
				return err
			}
			if err := o.configOut.check(); err != nil {
				return err
			}
			glo := gitlab.Options{URL: o.url, Package: o.pkg, TokenType: tt}
			if err := o.release.apply(&glo); err != nil {
				return err
			}
			// The target URL names the project; --gitlab-url is the instance.
			u, _ := url.Parse(o.url)
			return runPublish(cmd.Context(), s, g, pipeline.PublishOptions{Target: "gitlab://" + u.Host + "/" + strings.Trim(o.project, "/"), Load: o.load,
				ConfigOut: string(o.configOut), TargetOptions: targets.Options{Replace: o.replace, HTTPClient: httpClient(s, o.timeout), GitLab: glo}}, publishOut{})
		},
	}
	o.bind(cmd, s.errOut)
	f := cmd.Flags()
	f.StringVar(&o.url, "gitlab-url", "", "GitLab instance URL, e.g. https://gitlab.example.com (required)")
	f.StringVar(&o.project, "project", "", "project path GROUP/[SUBGROUP/]NAME or numeric id")
	f.StringVar(&o.pkg, "package", "", "package name (default: each provider's label; only for a single-provider release)")
	f.BoolVar(&o.replace, "replace", false, "replace files whose content differs")
	o.release.bind(cmd, "", true)
	f.StringVar(&o.tokenType, "gitlab-token-type", "private", "token header: private (PRIVATE-TOKEN), bearer, or job (JOB-TOKEN from CI_JOB_TOKEN)")
	// The names release uses; the old ones stay for a release.
	deprecatedAlias(s.errOut, f, "url", "gitlab-url")
	deprecatedAlias(s.errOut, f, "token-type", "gitlab-token-type")
	bindTimeout(cmd, &o.timeout)
	o.configOut.bind(cmd, configOutUsage)
	_ = cmd.MarkFlagRequired("project")
	return cmd
}

// checkGitLabURL checks --gitlab-url before any token is looked for.
func checkGitLabURL(raw string) error {
	if raw == "" {
		return usagef("--gitlab-url is required: the GitLab instance, e.g. https://gitlab.example.com")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return usagef("--gitlab-url %q is not an http(s) URL of a GitLab instance, e.g. https://gitlab.example.com", raw)
	}
	return nil
}

// checkTokenType checks --gitlab-token-type: private or bearer send
// GITLAB_ACCESS_TOKEN (the variable clusterctl reads), job sends CI_JOB_TOKEN.
func checkTokenType(tokenType string) (gitlab.TokenType, error) {
	switch tt := gitlab.TokenType(tokenType); tt {
	case gitlab.PrivateToken, gitlab.BearerToken, gitlab.JobToken:
		return tt, nil
	}
	return "", usagef("--gitlab-token-type must be private, bearer or job, not %q", tokenType)
}
