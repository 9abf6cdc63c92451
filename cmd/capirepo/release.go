package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/capirepo/capirepo/publish/targets"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
)

type releaseOptions struct {
	build     buildOptions
	publish   []string
	dryRun    bool
	skipImage bool
	// skipUpgrade is why the upgrade check is skipped (--skip-upgrade-check).
	skipUpgrade string
	// notesUpgrade adds the upgrade section to the release notes.
	notesUpgrade bool
	// against are the older releases of --against, for the upgrade check.
	against []string
	// configOut is where the clusterctl config is written (--config-out).
	configOut configOut
	replace   bool
	notes     releaseNotesOptions
	glRelease gitlabReleaseOptions
	targetFlags
	oci ociFlags
	// sign signs the release (--sign) with signing's flags (sign.go).
	sign    bool
	signing signFlags
	// uploads follows the bytes of GitHub and GitLab uploads (progress bars).
	uploads publish.UploadProgress
	install installFlags
	// rehearse rehearses the upgrade (--rehearse).
	rehearse rehearseFlags
}

func newReleaseCmd(s streams, g *globalOptions) *cobra.Command {
	o := &releaseOptions{}
	cmd := &cobra.Command{
		Use:   "release [PATH]",
		Short: "Build, lint, publish and verify a release in one run; stop at the first failure",
		Long: `release builds the provider tree (with --binaries and --image-push, the manager
binaries and image first), lints the release against the clusterctl and
provider contracts, checks what breaks when a management cluster upgrades
from the release published before this one (at the first --publish target
that has one, found as clusterctl orders versions; capirepo diff's rules),
publishes it to every --publish target and reads each back through
clusterctl. It stops at the first failure and prints what was and was not
done. --dry-run does everything except publishing: it still reads the
targets for the upgrade check, with the tokens that are set (none needed for
public repositories), and reports a target it cannot reach without failing;
--against OLD compares with OLD instead (a folder, or a target URL with
@VERSION); --skip-upgrade-check REASON skips that check and prints the reason.
--install-check applies the release to the API server of --kubeconfig
before anything is published (see verify --install); --rehearse rehearses
clusterctl upgrade from the release the upgrade check compared with on the
scratch cluster of --kubeconfig, with core Cluster API from --core (see verify
--upgrade-from), after the install check and before signing and publishing.
--notes-upgrade appends to the release notes (GitHub, and GitLab with
--gitlab-release) an "Upgrading from vX.Y.Z" section made from that upgrade
check: what changes for users, and how to verify the signatures of --sign.

Targets: github://OWNER/NAME (GITHUB_TOKEN), gitlab://HOST/PROJECT
(GITLAB_ACCESS_TOKEN), file://DIR (a local repository tree),
oci://REGISTRY/PATH (artifacts cluster-api-operator reads; see publish oci).

--sign signs the release after it is written, as capirepo sign does
(keyless in CI, or --key): Sigstore bundles for each provider's
checksums.txt and provenance, published with the files by every target; the
pushed manager image and the OCI artifacts as signature referrers.`,
		Example: `  # Everything but publishing, e.g. for a pull request
  capirepo release --version v1.4.0 --dry-run

  # Build the manager image, then publish to GitHub and read the release back
  GITHUB_TOKEN=... capirepo release --version v1.4.0 --binaries \
    --image ghcr.io/example/manager --image-push --publish github://my-org/cluster-api-provider-example

  # The same, signed keylessly in GitHub Actions (permissions: id-token: write)
  capirepo release --version v1.4.0 --sign --publish github://my-org/cluster-api-provider-example`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.build.validate(cmd, args); err != nil {
				return err
			}
			if cmd.Flags().Changed("skip-upgrade-check") && strings.TrimSpace(o.skipUpgrade) == "" {
				return usagef("--skip-upgrade-check needs a reason, which is printed: --skip-upgrade-check \"users reinstall, see the release notes\"")
			}
			if len(o.against) > 0 && cmd.Flags().Changed("skip-upgrade-check") {
				return usagef("--against and --skip-upgrade-check: give one")
			}
			if o.notesUpgrade && cmd.Flags().Changed("skip-upgrade-check") {
				return usagef("--notes-upgrade tells what the upgrade check found, which --skip-upgrade-check skips: give one")
			}
			return runRelease(cmd.Context(), s, g, o)
		},
	}
	o.build.bind(cmd, s.errOut)
	f := cmd.Flags()
	f.StringArrayVar(&o.publish, "publish", nil, "target: github://OWNER/NAME, gitlab://HOST/PROJECT, file://DIR or oci://REGISTRY/PATH (repeatable)")
	f.StringArrayVar(&o.against, "against", nil, "check the upgrade from this older release instead of the one before at the targets: a folder, or a target URL with an optional @VERSION (repeatable)")
	o.configOut.bind(cmd, "write the clusterctl config of the first target clusterctl reads to this file (atomically) instead of stdout; the clusterctl init line printed under next: reads it")
	f.BoolVar(&o.dryRun, "dry-run", false, "build, lint and verify the dist folder; publish nothing")
	f.BoolVar(&o.replace, "replace", false, "let published files that differ be replaced")
	f.BoolVar(&o.skipImage, "skip-image-check", false, "do not ask the registry for every image the components run (for every platform built) before publishing")
	f.BoolVar(&o.notesUpgrade, "notes-upgrade", false, "append to the GitHub (and --gitlab-release) release notes an \"Upgrading from\" section made from the upgrade check: contract, CRD versions, variables to set, flavors, ClusterClass variables, images, how to verify the signatures")
	f.StringVar(&o.skipUpgrade, "skip-upgrade-check", "", "do not compare with the release published before this one; the reason is printed (e.g. \"users reinstall, see the release notes\")")
	o.notes.bind(cmd, "github-", true)
	o.glRelease.bind(cmd, "gitlab-", false)
	o.glRelease.title, o.glRelease.notesFile, o.glRelease.provenance = &o.notes.title, &o.notes.notesFile, &o.notes.provenance
	o.bindGitHubAPI(cmd, "GitHub REST API base (default $GITHUB_API_URL, else https://api.github.com/)")
	o.bindGitLabURL(cmd, "GitLab instance URL for gitlab:// targets (default https://HOST)")
	o.bindTimeout(cmd)
	o.bindTokenType(cmd, "GitLab token header for gitlab:// targets: private or bearer (GITLAB_ACCESS_TOKEN), or job (CI_JOB_TOKEN)")
	o.oci.bind(cmd, true, "oci-")
	f.BoolVar(&o.sign, "sign", false, "sign the release: Sigstore bundles for checksums.txt and the provenance, the image and OCI artifacts as referrers (see capirepo sign)")
	o.signing.bind(cmd)
	o.install.rehearse = &o.rehearse
	o.rehearse.bind(cmd, false)
	o.install.bind(cmd, "install-check", "apply the release to a Kubernetes API server (--kubeconfig) before publishing, as clusterctl init and kubectl apply would; stop if it refuses anything")
	return cmd
}

func runRelease(ctx context.Context, s streams, g *globalOptions, o *releaseOptions) error {
	if err := o.build.validateArtifacts(); err != nil {
		return err
	}
	if err := o.rehearse.validate(o.install.on); err != nil {
		return err
	}
	if err := o.install.validate(); err != nil {
		return err
	}
	if o.rehearse.on && o.skipUpgrade != "" {
		return usagef("--rehearse upgrades from the release the upgrade check compares with: it cannot go with --skip-upgrade-check")
	}
	if err := o.configOut.check(); err != nil {
		return err
	}
	against, err := pipeline.ParseSides("--against", o.against)
	if err != nil {
		return err
	}
	var locs []targets.Location
	for _, raw := range o.publish {
		loc, err := targets.Parse(raw)
		if err != nil {
			return usagef("--publish %v", err)
		}
		locs = append(locs, loc)
	}
	if len(locs) == 0 && !o.dryRun {
		return usagef("release needs at least one --publish target, or --dry-run")
	}

	// On a terminal, a bar per upload, with the run's lines above the bars.
	bars := newUploadBars(s, g)
	defer bars.Close()
	o.uploads = bars.hook()
	rs := bars.streams(s)
	to, err := o.targetOptions(ctx, rs)
	if err != nil {
		return err
	}
	signOpts, err := o.signOptions(ctx, rs)
	if err != nil {
		return err
	}
	rehearse, err := o.rehearse.options(rs, &o.install, o.gitHubAPI(s), o.timeout)
	if err != nil {
		return err
	}
	sum, err := pipeline.Release(ctx, pipeline.ReleaseOptions{
		Sign:             signOpts,
		Build:            o.build.pipelineOptions(rs),
		Targets:          locs,
		TargetOptions:    to,
		DryRun:           o.dryRun,
		SkipImageCheck:   o.skipImage,
		SkipUpgradeCheck: o.skipUpgrade,
		Against:          against,
		ConfigOut:        string(o.configOut),
		NotesUpgrade:     o.notesUpgrade,
		InstallCheck:     o.install.options(rs, o.gitHubAPI(s), o.timeout),
		Rehearse:         rehearse,
		Variables:        tokenVariables(s.getenv),
		Log:              rs.errOut,
		Progress:         pipeline.StatusLines(rs.errOut, isTerminal(rs.errOut)), // the table below says the details
	})
	bars.Close()
	if sum == nil { // a target could not be opened
		return fmt.Errorf("--publish %w", err)
	}
	if perr := printReport(s, g, sum, s.errOut); perr != nil && g.output != outputText {
		return perr
	}
	if g.output == outputText {
		// Each target's providers: entry on stdout, one YAML document per
		// target, unless --config-out wrote it.
		docs := 0
		for i, p := range sum.Published {
			if sum.Targets[i].Reader != "" || p.ConfigFile != "" { // the operator's (printed below), or in --config-out
				continue
			}
			if docs++; docs > 1 {
				fmt.Fprintln(s.out, "---")
			}
			_ = printConfig(s.out, p, fmt.Sprintf("# %s %s\n", p.Kind, p.URL))
		}
		if err == nil {
			err = printReleaseResources(s, sum, o.oci.format)
		}
		writeNext(s.errOut, sum.Next)
	}
	return err
}

// targetOptions are what the --publish targets are opened with: the
// flags, the environment's credentials and the bounded HTTP client.
func (o *releaseOptions) targetOptions(ctx context.Context, s streams) (targets.Options, error) {
	to, err := o.options(s)
	if err != nil {
		return targets.Options{}, err
	}
	to.Publish, to.Replace, to.Progress, to.UploadProgress, to.LockTimeout = true, o.replace, s.errOut, o.uploads, o.build.lockTimeout
	if err := o.notes.apply(&to.GitHub); err != nil {
		return targets.Options{}, err
	}
	if err := o.glRelease.apply(&to.GitLab); err != nil {
		return targets.Options{}, err
	}
	if to.OCI, err = o.oci.options(ctx, s, o.build.dir); err != nil {
		return targets.Options{}, err
	}
	return to, nil
}

// signOptions make the signer of --sign, before anything is built, so a
// missing token or key fails first; a dry run signs nothing and needs
// neither.
func (o *releaseOptions) signOptions(ctx context.Context, s streams) (*pipeline.SignOptions, error) {
	if !o.sign {
		return nil, o.signing.unused("sign")
	}
	if o.dryRun {
		return &pipeline.SignOptions{Provenance: o.notes.provenance}, nil
	}
	signer, err := o.signing.signer(ctx, s, o.timeout)
	if err != nil {
		return nil, err
	}
	return &pipeline.SignOptions{Signer: signer, Provenance: o.notes.provenance}, nil
}

// printReleaseResources prints the operator's Provider resources for each
// target it reads (oci://), which the run made from the dist it read back.
func printReleaseResources(s streams, sum *pipeline.ReleaseSummary, format string) error {
	for _, t := range sum.Targets {
		if !t.Operator {
			continue
		}
		if err := printResources(s, t.Resources, format); err != nil {
			return err
		}
	}
	return nil
}
