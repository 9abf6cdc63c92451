package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/publish/oci"
	"github.com/capirepo/capirepo/publish/targets"
)

// targetFlags are the flags that say how a command reaches its targets
// (GitHub's API, the GitLab instance and its token header, a plain-HTTP
// registry, the bound on each wait); options turns them, with the
// environment, into the targets' options. Each command binds the ones it
// has, with its own help text.
type targetFlags struct {
	githubAPI string
	gitlabURL string
	// tokenType is private, bearer or job (CI_JOB_TOKEN); "" when the
	// command has no --gitlab-token-type.
	tokenType string
	plainHTTP bool
	timeout   time.Duration
}

func (f *targetFlags) bindGitHubAPI(cmd *cobra.Command, usage string) {
	cmd.Flags().StringVar(&f.githubAPI, "github-api-url", "", usage)
}

func (f *targetFlags) bindGitLabURL(cmd *cobra.Command, usage string) {
	cmd.Flags().StringVar(&f.gitlabURL, "gitlab-url", "", usage)
}

func (f *targetFlags) bindTokenType(cmd *cobra.Command, usage string) {
	cmd.Flags().StringVar(&f.tokenType, "gitlab-token-type", "private", usage)
}

func (f *targetFlags) bindPlainHTTP(cmd *cobra.Command, usage string) {
	cmd.Flags().BoolVar(&f.plainHTTP, "plain-http", false, usage)
}

func (f *targetFlags) bindTimeout(cmd *cobra.Command) { bindTimeout(cmd, &f.timeout) }

// options are the targets' options of the flags: the environment's
// credentials (used when set), the bounded HTTP client, GitHub's API
// ($GITHUB_API_URL unless --github-api-url), the GitLab instance and token
// header, plain HTTP for a registry. The caller adds what it does with the
// targets (Publish, Replace, Progress, ...).
func (f *targetFlags) options(s streams) (targets.Options, error) {
	var tt gitlab.TokenType
	if f.tokenType != "" {
		var err error
		if tt, err = checkTokenType(f.tokenType); err != nil {
			return targets.Options{}, err
		}
	}
	return targets.Options{Getenv: s.getenv, HTTPClient: httpClient(s, f.timeout),
		GitHub: github.Options{APIURL: f.gitHubAPI(s)}, GitLab: gitlab.Options{URL: f.gitlabURL, TokenType: tt},
		OCI: oci.Options{PlainHTTP: f.plainHTTP}}, nil
}

// gitHubAPI is --github-api-url, else $GITHUB_API_URL (GitHub Actions sets
// it on GitHub Enterprise), else "": api.github.com.
func (f *targetFlags) gitHubAPI(s streams) string { return gitHubAPI(s, f.githubAPI) }

// gitHubAPI is the GitHub API a command's flag names, else $GITHUB_API_URL,
// else "": api.github.com. Every command takes its default here.
func gitHubAPI(s streams, flag string) string {
	if flag != "" {
		return flag
	}
	return s.getenv("GITHUB_API_URL")
}
