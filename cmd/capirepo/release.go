package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
)

type releaseOptions struct {
	build     buildOptions
	publish   []string
	against   []string // older releases to check the upgrade from (--against)
	dryRun    bool
	replace   bool
	skipImage bool
	// skipUpgrade is why the upgrade check is skipped (--skip-upgrade-check).
	skipUpgrade string
	// notesUpgrade adds the upgrade section to the release notes.
	notesUpgrade bool
	configOut    configOut
	notes        notesOptions
	targets      targetOptions
	oci          ociOptions
	sign         bool // --sign, with signing's flags
	signing      signOptions
	install      installOptions
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
without --sign it also fails where a target would refuse the release (a
version it holds with other files);
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
			if err := o.build.validate(cmd, args, s); err != nil {
				return err
			}
			if cmd.Flags().Changed("skip-upgrade-check") && strings.TrimSpace(o.skipUpgrade) == "" {
				return cli.Usagef("--skip-upgrade-check needs a reason, which is printed: --skip-upgrade-check \"users reinstall, see the release notes\"")
			}
			if len(o.against) > 0 && cmd.Flags().Changed("skip-upgrade-check") {
				return cli.Usagef("--against and --skip-upgrade-check: give one")
			}
			if o.notesUpgrade && cmd.Flags().Changed("skip-upgrade-check") {
				return cli.Usagef("--notes-upgrade tells what the upgrade check found, which --skip-upgrade-check skips: give one")
			}
			return runRelease(cmd.Context(), s, g, o)
		},
	}
	o.build.AddFlags(cmd, s.errOut)
	f := cmd.Flags()
	f.StringArrayVar(&o.publish, "publish", nil, "target: github://OWNER/NAME, gitlab://HOST/PROJECT, file://DIR or oci://REGISTRY/PATH (repeatable)")
	f.StringArrayVar(&o.against, "against", nil, "check the upgrade from this older release instead of the one before at the targets: a folder, or a target URL with an optional @VERSION (repeatable)")
	o.configOut.AddFlags(cmd, "write the clusterctl config of the first target clusterctl reads to this file (atomically) instead of stdout; the clusterctl init line printed under next: reads it")
	f.BoolVar(&o.dryRun, "dry-run", false, "build, lint and verify the dist folder; publish nothing")
	f.BoolVar(&o.replace, "replace", false, "let published files that differ be replaced")
	f.BoolVar(&o.skipImage, "skip-image-check", false, "do not ask the registry for every image the components run (for every platform built) before publishing")
	f.BoolVar(&o.notesUpgrade, "notes-upgrade", false, "append to the GitHub (and --gitlab-release) release notes an \"Upgrading from\" section made from the upgrade check: contract, CRD versions, variables to set, flavors, ClusterClass variables, images, how to verify the signatures")
	f.StringVar(&o.skipUpgrade, "skip-upgrade-check", "", "do not compare with the release published before this one; the reason is printed (e.g. \"users reinstall, see the release notes\")")
	o.notes.AddFlags(cmd, "add "+publish.ProvenanceFile+", an in-toto statement (SLSA provenance v1) naming every asset with its sha256")
	o.notes.AddGitHubFlags(cmd, "github-")
	o.notes.AddGitLabFlags(cmd, "gitlab-")
	o.targets.AddFlags(cmd, targetUsage{githubAPI: "GitHub REST API base (default $GITHUB_API_URL, else https://api.github.com/)",
		gitlabURL: "GitLab instance URL for gitlab:// targets (default https://HOST)",
		tokenType: "GitLab token header for gitlab:// targets: private or bearer (GITLAB_ACCESS_TOKEN), or job (CI_JOB_TOKEN)"})
	o.oci.AddFlags(cmd, "oci-", "", true)
	f.BoolVar(&o.sign, "sign", false, "sign the release: Sigstore bundles for checksums.txt and the provenance, the image and OCI artifacts as referrers (see capirepo sign)")
	o.signing.AddFlags(cmd)
	o.install.rehearse = &rehearseOptions{}
	o.install.rehearse.AddFlags(cmd, false)
	o.install.AddFlags(cmd, "install-check", "apply the release to a Kubernetes API server (--kubeconfig) before publishing, as clusterctl init and kubectl apply would; stop if it refuses anything")
	return cmd
}

func runRelease(ctx context.Context, s streams, g *globalOptions, o *releaseOptions) error {
	// On a terminal, a bar per upload, with the run's lines above the bars.
	bars, rs := uploadBars(s, g)
	defer bars.Close()
	inst, rehearsal, err := o.install.Options(ctx, rs, &o.targets)
	if err != nil {
		return err
	}
	if rehearsal != nil && o.skipUpgrade != "" {
		return cli.Usagef("--rehearse upgrades from the release the upgrade check compares with: it cannot go with --skip-upgrade-check")
	}
	if err := o.configOut.check(); err != nil {
		return err
	}
	against, err := pipeline.ParseSides("--against", o.against)
	if err != nil {
		return err
	}
	locs, err := pipeline.ParseTargets("--publish", o.publish)
	if err != nil {
		return err
	}
	if len(locs) == 0 && !o.dryRun {
		return cli.Usagef("release needs at least one --publish target, or --dry-run")
	}
	to, err := o.targets.Options(rs)
	if err != nil {
		return err
	}
	to.Publish, to.Replace, to.UploadProgress, to.LockTimeout, to.OCI = true, o.replace, bars.Hook(), o.build.LockTimeout, o.oci.Options(s)
	if err := o.notes.apply(&to); err != nil {
		return err
	}
	// The signer of --sign is made before anything is built, so a missing
	// token or key fails first; a dry run signs nothing and needs neither.
	var signOpts *pipeline.SignOptions
	if o.sign {
		signOpts = &pipeline.SignOptions{Provenance: o.notes.provenance}
	}
	if !o.dryRun || !o.sign {
		signer, err := o.signing.signer(ctx, rs, o.targets.timeout, o.sign)
		if err != nil {
			return err
		}
		if o.sign {
			signOpts.Signer = signer
		}
	}
	sum, err := pipeline.Release(ctx, pipeline.ReleaseOptions{
		Sign: signOpts, Build: o.build.BuildOptions, Targets: locs, TargetOptions: to, NotesFile: o.notes.notesFile,
		DryRun: o.dryRun, SkipImageCheck: o.skipImage, SkipUpgradeCheck: o.skipUpgrade, Against: against,
		ConfigOut: string(o.configOut), NotesUpgrade: o.notesUpgrade, InstallCheck: inst, Rehearse: rehearsal, Variables: tokenVariables(s.getenv), Log: rs.errOut,
		Progress: pipeline.StatusLines(rs.errOut, cli.IsTerminal(rs.errOut)), // the table below says the details
	})
	bars.Close()
	if sum == nil { // a target could not be opened
		return fmt.Errorf("--publish %w", err)
	}
	if perr := printReport(s, g, sum, s.errOut); perr != nil && g.output != cli.Text {
		return perr
	}
	if g.output == cli.Text {
		if werr := sum.WriteResults(s.out, s.errOut); err == nil {
			err = werr
		}
	}
	return err
}
