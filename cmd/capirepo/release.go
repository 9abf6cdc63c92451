package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/localrepo"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
)

type releaseOptions struct {
	build     buildOptions
	publish   []string
	dryRun    bool
	replace   bool
	githubAPI string
	gitlabURL string
	// gitlabTokenType is private, bearer or job (CI_JOB_TOKEN).
	gitlabTokenType string
	timeout         time.Duration
}

func newReleaseCmd(s streams, g *globalOptions) *cobra.Command {
	o := &releaseOptions{}
	cmd := &cobra.Command{
		Use:   "release",
		Short: "Build, lint, publish and verify a release in one run; stop at the first failure",
		Long: `release builds the provider tree (with --binaries and --image-push, the manager
binaries and image first), lints the release against the clusterctl and
provider contracts, publishes it to every --publish target and reads each
back through clusterctl. It stops at the first failure and prints what was
and was not done. --dry-run does everything except publishing.

Targets: github://OWNER/NAME (GITHUB_TOKEN), gitlab://HOST/PROJECT
(GITLAB_ACCESS_TOKEN), file://DIR (a local repository tree).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRelease(cmd.Context(), s, g, o)
		},
	}
	o.build.bind(cmd)
	f := cmd.Flags()
	f.StringArrayVar(&o.publish, "publish", nil, "target: github://OWNER/NAME, gitlab://HOST/PROJECT or file://DIR (repeatable)")
	f.BoolVar(&o.dryRun, "dry-run", false, "build, lint and verify the dist folder; publish nothing")
	f.BoolVar(&o.replace, "replace", false, "let published files that differ be replaced")
	f.StringVar(&o.githubAPI, "github-api-url", "", "GitHub REST API base (default $GITHUB_API_URL, else https://api.github.com/)")
	f.StringVar(&o.gitlabURL, "gitlab-url", "", "GitLab instance URL for gitlab:// targets (default https://HOST)")
	bindTimeout(cmd, &o.timeout)
	f.StringVar(&o.gitlabTokenType, "gitlab-token-type", "private", "GitLab token header for gitlab:// targets: private or bearer (GITLAB_ACCESS_TOKEN), or job (CI_JOB_TOKEN)")
	return cmd
}

func runRelease(ctx context.Context, s streams, g *globalOptions, o *releaseOptions) error {
	if err := o.build.validateArtifacts(); err != nil {
		return err
	}
	if err := checkWaits(map[string]time.Duration{"timeout": o.timeout}); err != nil {
		return err
	}
	var targets []pipeline.Target
	for _, raw := range o.publish {
		t, err := pipeline.ParseTarget(raw)
		if err != nil {
			return usagef("--publish %v", err)
		}
		targets = append(targets, t)
	}
	if len(targets) == 0 && !o.dryRun {
		return usagef("release needs at least one --publish target, or --dry-run")
	}
	if o.githubAPI == "" {
		o.githubAPI = s.getenv("GITHUB_API_URL")
	}
	sum, err := pipeline.Run(ctx, pipeline.Options{
		Build:        o.build.pipelineOptions(s),
		Targets:      targets,
		NewPublisher: func(t pipeline.Target) (publish.Publisher, error) { return o.publisher(s, t) },
		DryRun:       o.dryRun,
		GitHubAPI:    o.githubAPI,
		GitLabURL:    o.gitlabURL,
		Variables:    tokenVariables(s.getenv),
		Log:          s.errOut,
		Progress:     pipeline.Lines(s.errOut, isTerminal(s.errOut)),
	})
	if sum == nil {
		return err
	}
	if g.output == "json" {
		if perr := printJSON(s.out, sum); perr != nil {
			return perr
		}
	} else {
		writeSteps(s.errOut, sum.Steps)
		for _, p := range sum.Published {
			_ = p.WriteText(s.out)
		}
	}
	return err
}

// publisher makes the publisher of one --publish target from the flags and
// the token in the environment.
func (o *releaseOptions) publisher(s streams, t pipeline.Target) (publish.Publisher, error) {
	switch t.Kind {
	case pipeline.GitHub:
		token := s.getenv("GITHUB_TOKEN")
		if token == "" {
			return nil, usagef("--publish %s: set GITHUB_TOKEN", t.Raw)
		}
		return publish.NewGitHub(publish.GitHubOptions{Owner: t.Owner, Repo: t.Name, Replace: o.replace,
			APIURL: o.githubAPI, Token: token, HTTPClient: httpClient(s, o.timeout), Progress: s.errOut})
	case pipeline.GitLab:
		tt, token, err := gitlabToken(s.getenv, o.gitlabTokenType)
		if err != nil {
			return nil, fmt.Errorf("--publish %s: %w", t.Raw, err)
		}
		return publish.NewGitLab(publish.GitLabOptions{URL: t.GitLabURL(o.gitlabURL), Project: t.Project, Replace: o.replace,
			Token: token, TokenType: tt, HTTPClient: httpClient(s, o.timeout), Progress: s.errOut})
	case pipeline.File:
		return &localrepo.Publisher{Root: t.Dir, Replace: o.replace, LockTimeout: o.build.lockTimeout, Progress: s.errOut}, nil
	}
	return nil, usagef("--publish %s: unknown target", t.Raw)
}

func writeSteps(w io.Writer, steps []pipeline.StepResult) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tSTATUS\tDETAIL")
	for _, r := range steps {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Step, r.Status, r.Detail)
	}
	_ = tw.Flush()
}

// isTerminal says whether w is a terminal, where progress rewrites one line.
func isTerminal(w io.Writer) bool {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok { // the secrets mask
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
