package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
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

// publishOut says how a publish command prints its report besides the
// summary: the header above the providers: entry, for publish local --overrides
// the clusterctl config the init line reads, for an OCI target the
// artifacts' --format.
type publishOut struct {
	configHeader     string
	clusterctlConfig string
	format           string
}

// runPublish publishes through pipeline.Publish, the one flow of release
// and every publish command, with the credentials the target needs from
// the environment and upload bars on a terminal, then prints the report.
func runPublish(ctx context.Context, s streams, g *globalOptions, o pipeline.PublishOptions, out publishOut) error {
	bars := newUploadBars(s, g)
	defer bars.Close()
	bs := bars.streams(s)
	o.TargetOptions.Getenv, o.TargetOptions.Progress, o.TargetOptions.UploadProgress, o.Log = s.getenv, bs.errOut, bars.hook(), bs.errOut
	p, err := pipeline.Publish(ctx, o)
	bars.Close()
	if err != nil {
		return err
	}
	return printPublished(s, g, p, out)
}

// printPublished writes what a publish did: JSON on stdout; or what was done
// on stderr and the result on stdout: clusterctl's providers: entry ready to
// paste (unless --config-out wrote it), the operator's Provider resources
// for a target it installs from, or for clusterctl's overrides folder the
// clusterctl init line that uses it; then what to do next on stderr.
func printPublished(s streams, g *globalOptions, p *pipeline.Published, out publishOut) error {
	sum := p.Summary
	if g.output == "json" {
		return printJSON(s.out, sum)
	}
	text := *sum
	if p.Overrides {
		text.Providers = nil // they are not URLs to give clusterctl: see printOverrides
	}
	if err := text.WriteText(s.errOut); err != nil {
		return err
	}
	switch {
	case p.Overrides:
		return printOverrides(s, sum, out.clusterctlConfig)
	case p.Operator:
		return printResources(s, p.Resources, out.format)
	case p.Reader != "":
		return nil
	}
	if err := printConfig(s.out, sum, out.configHeader); err != nil {
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
