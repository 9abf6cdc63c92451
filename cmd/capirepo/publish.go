package main

import (
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
)

// fromOptions say which built release to publish.
type fromOptions struct {
	from    string
	version string
}

func (o *fromOptions) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.from, "from", "dist", "built release folder (capirepo build --out)")
	cmd.Flags().StringVar(&o.version, "version", "", "version to publish when --from holds several")
}

func (o *fromOptions) load() (*release.Release, error) { return release.Load(o.from, o.version) }

// httpClient is the client publishers use: each wait bounded by timeout
// (--timeout), never the whole transfer; stalls are reported on stderr.
func httpClient(s streams, timeout time.Duration) *http.Client {
	return publish.NewHTTPClient(publish.HTTPOptions{Timeout: timeout, Progress: s.errOut})
}

// printSummary writes a publish summary: JSON on stdout, or text on stderr.
func printSummary(s streams, g *globalOptions, sum *publish.Summary) error {
	if g.output == "json" {
		return printJSON(s.out, sum)
	}
	return sum.WriteText(s.errOut)
}

func newPublishCmd(s streams, g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "publish",
		Short: "Publish a built release: to GitHub, GitLab generic packages or a local folder tree",
	}
	cmd.AddCommand(
		newPublishGitHubCmd(s, g),
		newPublishGitLabCmd(s, g),
		newPublishLocalCmd(s, g),
	)
	return cmd
}
