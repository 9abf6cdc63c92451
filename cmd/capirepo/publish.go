package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
)

// fromOptions say which built release to publish: the DIST argument.
type fromOptions struct {
	from    string
	version string
	what    string // DIST, or --from when the deprecated flag was used
}

// bind binds --version and the deprecated --from (DIST says the same); w
// gets the deprecation notice.
func (o *fromOptions) bind(cmd *cobra.Command, w io.Writer) {
	cmd.Flags().StringVar(&o.from, "from", "dist", "built release folder (capirepo build --out)")
	deprecatedFlag(w, cmd.Flags(), "from", "pass the built release folder as DIST")
	cmd.Flags().StringVar(&o.version, "version", "", "version to publish when DIST holds several")
}

// fromArg takes the dist folder from the optional DIST argument (default
// dist), as every command takes what it reads from its argument; the
// deprecated --from says the same.
func (o *fromOptions) fromArg(cmd *cobra.Command, args []string) error {
	o.what = argName(cmd, "from", "DIST")
	if len(args) == 0 {
		return nil
	}
	if cmd.Flags().Changed("from") && o.from != args[0] {
		return usagef("the dist folder is given twice, as DIST %s and --from %s: pass one", args[0], o.from)
	}
	o.from = args[0]
	return nil
}

func (o *fromOptions) load() (*release.Release, error) {
	if o.what == "" {
		o.what = "DIST"
	}
	if err := checkDirFlag(o.what, o.from); err != nil {
		return nil, err
	}
	if err := checkVersionFlag(o.version); err != nil {
		return nil, err
	}
	return release.Load(o.from, o.version)
}

// httpClient is the client publishers use: each wait bounded by timeout
// (--timeout), never the whole transfer; stalls are reported on stderr.
func httpClient(s streams, timeout time.Duration) *http.Client {
	return publish.NewHTTPClient(publish.HTTPOptions{Timeout: timeout, Progress: s.errOut})
}

// configOut is --config-out of the commands that publish where clusterctl
// reads: the file the clusterctl config is written to, atomically, instead
// of stdout. Every such command prints on stderr where it went, and uses it
// in the clusterctl init line under next:.
type configOut string

const configOutUsage = "write the clusterctl config to this file (atomically) instead of stdout; the clusterctl init line printed under next: reads it"

func (c *configOut) bind(cmd *cobra.Command, usage string) {
	cmd.Flags().StringVar((*string)(c), "config-out", "", usage)
}

// check refuses, before anything is published, a --config-out that names a
// folder or lies in a folder that does not exist.
func (c configOut) check() error {
	if c == "" {
		return nil
	}
	if fi, err := os.Stat(string(c)); err == nil && fi.IsDir() {
		return usagef("--config-out %s is a folder: name the file to write, e.g. %s", c, filepath.Join(string(c), "clusterctl.yaml"))
	}
	if err := checkDirFlag("--config-out's folder", filepath.Dir(string(c))); err != nil {
		return err
	}
	return nil
}

// next writes the clusterctl config of sum to --config-out when given and
// says what a maintainer does next in sum.Next (publish.NextSteps, as
// release says it).
func (c configOut) next(sum *publish.Summary) error {
	next, err := publish.NextSteps(sum, string(c))
	sum.Next = next
	return err
}

// publishTo opens the target at raw to publish (the credentials it needs
// come from the environment), loads the built release, publishes it and
// prints what was done, with upload bars on a terminal; for a target
// clusterctl reads, the clusterctl config goes to cfg (--config-out) when
// set and the summary says what to do next. printed, when set, prints the
// result instead of printSummary.
func publishTo(ctx context.Context, s streams, g *globalOptions, raw string, o targets.Options, cfg configOut, load func() (*release.Release, error),
	printed func(t publish.Target, rel *release.Release, sum *publish.Summary) error) error {
	bars := newUploadBars(s, g)
	defer bars.Close()
	o.Publish, o.Getenv, o.Progress, o.UploadProgress = true, s.getenv, bars.streams(s).errOut, bars.hook()
	t, err := targets.Open(ctx, raw, o)
	if err != nil {
		return err
	}
	rel, err := load()
	if err != nil {
		return err
	}
	sum, err := t.Publish(ctx, rel)
	bars.Close()
	if err != nil {
		return err
	}
	if printed != nil {
		return printed(t, rel, sum)
	}
	if t.Clusterctl().Reader == "" {
		if err := cfg.next(sum); err != nil {
			return err
		}
	}
	return printSummary(s, g, sum, t.Clusterctl())
}

// printSummary writes a publish summary: JSON on stdout; or what was done
// on stderr and the result, clusterctl's providers: entry ready to paste,
// on stdout (unless --config-out wrote it, or another reader reads the
// target: an OCI registry, the operator, whose resources publish oci
// prints instead), then what to do next on stderr.
func printSummary(s streams, g *globalOptions, sum *publish.Summary, reach publish.Reach) error {
	if g.output == "json" {
		return printJSON(s.out, sum)
	}
	if err := sum.WriteText(s.errOut); err != nil {
		return err
	}
	if reach.Reader != "" {
		return nil
	}
	if err := printConfig(s.out, sum, ""); err != nil {
		return err
	}
	writeNext(s.errOut, sum.Next)
	return nil
}

// printConfig prints the clusterctl config of a publish on stdout after the
// header line, unless --config-out wrote it to a file: the one rule of
// every command with --config-out.
func printConfig(w io.Writer, sum *publish.Summary, header string) error {
	if sum.ConfigFile != "" {
		return nil
	}
	_, err := io.WriteString(w, header+publish.ClusterctlConfig{Providers: sum.Providers}.YAML())
	return err
}

func newPublishCmd(s streams, g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "publish",
		Short: "Publish a built release: to GitHub, GitLab generic packages, a local folder tree, an OCI registry or operator ConfigMaps",
		Long: `Publishes what capirepo build wrote (DIST, default dist) to one target.
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
