package main

import (
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
)

type publishGitLabOptions struct {
	dist      distOptions
	project   string
	pkg       string
	replace   bool
	notes     notesOptions
	targets   targetOptions
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
			if err := o.dist.arg(cmd, args); err != nil {
				return err
			}
			if err := checkGitLabURL(o.targets.gitlabURL); err != nil {
				return err
			}
			to, err := o.targets.Options(s)
			if err != nil {
				return err
			}
			if err := o.configOut.check(); err != nil {
				return err
			}
			to.Replace, to.GitLab.Package = o.replace, o.pkg
			if err := o.notes.apply(&to); err != nil {
				return err
			}
			po := pipeline.PublishOptions{TargetOptions: to, Dist: o.dist.dir, DistName: o.dist.what, Version: o.dist.version, ConfigOut: string(o.configOut)}
			if o.notes.gitlabRelease {
				po.NotesFile = o.notes.notesFile
			}
			// The target URL names the project; --gitlab-url is the instance.
			u, _ := url.Parse(o.targets.gitlabURL)
			po.Target = "gitlab://" + u.Host + "/" + strings.Trim(o.project, "/")
			return runPublish(cmd.Context(), s, g, po)
		},
	}
	o.dist.AddFlags(cmd, s.errOut, "version to publish when DIST holds several")
	f := cmd.Flags()
	f.StringVar(&o.project, "project", "", "project path GROUP/[SUBGROUP/]NAME or numeric id")
	f.StringVar(&o.pkg, "package", "", "package name (default: each provider's label; only for a single-provider release)")
	f.BoolVar(&o.replace, "replace", false, "replace files whose content differs")
	o.notes.AddFlags(cmd, "add "+publish.ProvenanceFile+" to each package, an in-toto statement (SLSA provenance v1) naming its files with their sha256")
	o.notes.AddGitLabFlags(cmd, "")
	o.targets.AddFlags(cmd, targetUsage{gitlabURL: "GitLab instance URL, e.g. https://gitlab.example.com (required)",
		tokenType: "token header: private (PRIVATE-TOKEN), bearer, or job (JOB-TOKEN from CI_JOB_TOKEN)"})
	// The names release uses; the old ones stay for a release.
	cli.DeprecatedAlias(s.errOut, f, "url", "gitlab-url")
	cli.DeprecatedAlias(s.errOut, f, "token-type", "gitlab-token-type")
	o.configOut.AddFlags(cmd, configOutUsage)
	_ = cmd.MarkFlagRequired("project")
	return cmd
}

// checkGitLabURL checks --gitlab-url before any token is looked for.
func checkGitLabURL(raw string) error {
	if raw == "" {
		return cli.Usagef("--gitlab-url is required: the GitLab instance, e.g. https://gitlab.example.com")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return cli.Usagef("--gitlab-url %q is not an http(s) URL of a GitLab instance, e.g. https://gitlab.example.com", raw)
	}
	return nil
}
