package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/internal/dirlock"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/gitlab"
	"github.com/capirepo/capirepo/publish/oci"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/sign"
)

// The flag groups commands share, as cosign's cli/options: each is one type
// that binds its flags (AddFlags) and turns them into the options of the
// package that takes them. A command binds the groups it has, checks them
// and calls pipeline.

// targetOptions say how a command reaches its targets: GitHub's API, the
// GitLab instance and its token header, the bound on each wait. Options is
// the one place targets.Options are made.
type targetOptions struct {
	githubAPI, gitlabURL string
	// tokenType is private, bearer or job (CI_JOB_TOKEN); "" when the
	// command has no --gitlab-token-type.
	tokenType string
	timeout   time.Duration
}

// targetUsage is the help of each target flag a command has, in its own
// words; "" leaves the flag out.
type targetUsage struct{ githubAPI, gitlabURL, tokenType string }

func (o *targetOptions) AddFlags(cmd *cobra.Command, u targetUsage) {
	f := cmd.Flags()
	if u.githubAPI != "" {
		f.StringVar(&o.githubAPI, "github-api-url", "", u.githubAPI)
	}
	if u.gitlabURL != "" {
		f.StringVar(&o.gitlabURL, "gitlab-url", "", u.gitlabURL)
	}
	if u.tokenType != "" {
		f.StringVar(&o.tokenType, "gitlab-token-type", "private", u.tokenType)
	}
	bindTimeout(cmd, &o.timeout)
}

// Options are the targets' options of the flags: the environment's
// credentials (used when set), the bounded HTTP client, GitHub's API
// (--github-api-url, else $GITHUB_API_URL), the GitLab instance and token
// header. The caller adds what it does with the targets (Publish, Replace,
// Progress, a backend's own options, ...).
func (o *targetOptions) Options(s streams) (targets.Options, error) {
	var tt gitlab.TokenType
	if o.tokenType != "" {
		switch tt = gitlab.TokenType(o.tokenType); tt {
		case gitlab.PrivateToken, gitlab.BearerToken, gitlab.JobToken:
		default:
			return targets.Options{}, cli.Usagef("--gitlab-token-type must be private, bearer or job, not %q", o.tokenType)
		}
	}
	return targets.Options{Getenv: s.getenv, HTTPClient: o.httpClient(s), Progress: s.errOut,
		GitHub: github.Options{APIURL: gitHubAPI(s.getenv, o.githubAPI)}, GitLab: gitlab.Options{URL: o.gitlabURL, TokenType: tt}}, nil
}

// sources are the options to read upstream repositories with (cert-manager's,
// mirror's providers): the environment's tokens, GitHub's API and the HTTP
// client, none of the targets' own settings.
func (o *targetOptions) sources(s streams) targets.Options {
	to, _ := o.Options(s) // --gitlab-token-type is checked where the targets' own are made
	to.GitLab, to.Progress = gitlab.Options{}, nil
	return to
}

// httpClient is the client targets use: each wait bounded by --timeout,
// never the whole transfer; stalls are reported on stderr.
func (o *targetOptions) httpClient(s streams) *http.Client {
	return publish.NewHTTPClient(publish.HTTPOptions{Timeout: o.timeout, Progress: s.errOut})
}

// ociOptions are the flags of a command that talks to an OCI registry;
// prefix names them apart in a command with other targets (release:
// --oci-format, ...).
type ociOptions struct {
	plainHTTP bool
	format    string
	single    bool
}

// AddFlags binds --plain-http (its help plainUsage, "" for the operator's
// switch) and, for a command that writes artifacts, their layout.
func (o *ociOptions) AddFlags(cmd *cobra.Command, prefix, plainUsage string, write bool) {
	if plainUsage == "" {
		plainUsage = "talk plain HTTP to the registry (printed references then start with http://, the operator's plain-HTTP switch)"
	}
	cmd.Flags().BoolVar(&o.plainHTTP, prefix+"plain-http", false, plainUsage)
	cli.Prefixed(cmd, prefix, "plain-http")
	if !write {
		return
	}
	cmd.Flags().StringVar(&o.format, prefix+"format", string(oci.FormatOperator),
		"artifact layout: operator (what cluster-api-operator reads) or proposal (the Cluster API proposal's single tar+gzip layer, which the operator CANNOT read)")
	cmd.Flags().BoolVar(&o.single, prefix+"single-artifact", false, "one artifact at REGISTRY/PATH:<version> for all providers of a monorepo release, under the operator's versioned file names")
	cli.Prefixed(cmd, prefix, "format", "single-artifact")
}

// Options are the registry options of the flags; the artifacts' source is
// the repository CI builds, when it builds one (else the caller's tree's
// git origin).
func (o *ociOptions) Options(s streams) oci.Options {
	return oci.Options{Format: oci.Format(o.format), SingleArtifact: o.single, PlainHTTP: o.plainHTTP, Meta: oci.Meta{Source: ciRepository(s.getenv)}}
}

// notesOptions are the flags that shape a GitHub release besides its
// assets, and ask for a GitLab Release beside the packages: unprefixed in
// publish github and gitlab, --github-* and --gitlab-* in release.
type notesOptions struct {
	title, notesFile           string
	provenance                 bool
	generateNotes, prerelease  bool
	draft                      bool
	previousTag, target        string
	gitlabRelease              bool
	ref                        string
	githubPrefix, gitlabPrefix string
	prereleaseFlag             *pflag.Flag
}

// AddFlags binds what a GitHub release and a GitLab Release share: the
// title, the notes and the provenance (its help provenanceUsage).
func (o *notesOptions) AddFlags(cmd *cobra.Command, provenanceUsage string) {
	f := cmd.Flags()
	f.StringVar(&o.title, "title", "", "release title (default: the tag)")
	f.StringVar(&o.notesFile, "notes-file", "", "release notes (Markdown) from FILE; an existing release's notes change only with --replace")
	f.BoolVar(&o.provenance, "provenance", true, provenanceUsage)
}

func (o *notesOptions) AddGitHubFlags(cmd *cobra.Command, prefix string) {
	o.githubPrefix = prefix
	f := cmd.Flags()
	f.BoolVar(&o.generateNotes, prefix+"generate-notes", false, "append the notes GitHub generates for the changes since the previous release")
	f.StringVar(&o.previousTag, prefix+"previous-tag", "", "tag the generated notes start from (default: as GitHub finds it, the latest release)")
	f.BoolVar(&o.prerelease, prefix+"prerelease", false, "mark the release a prerelease (default: when the version is a semver prerelease, e.g. v1.2.0-rc.1)")
	f.BoolVar(&o.draft, prefix+"draft", false, "upload and check everything but leave the release a draft for a person to publish")
	f.StringVar(&o.target, prefix+"target", "", "COMMITISH the tag is created from when the release is published, if the tag does not exist yet (default: the default branch)")
	o.prereleaseFlag = f.Lookup(prefix + "prerelease")
	cli.Prefixed(cmd, prefix, "generate-notes", "previous-tag", "prerelease", "draft", "target")
}

func (o *notesOptions) AddGitLabFlags(cmd *cobra.Command, prefix string) {
	o.gitlabPrefix = prefix
	f := cmd.Flags()
	f.BoolVar(&o.gitlabRelease, prefix+"release", false, "also create a GitLab Release for the tag whose links point at the package files")
	f.StringVar(&o.ref, prefix+"ref", "", "branch or commit the tag is created from for the GitLab Release, if the tag does not exist yet")
	cli.Prefixed(cmd, prefix, "release", "ref")
}

// apply sets the GitHub and GitLab options of the flags; the notes file is
// pipeline's to read (PublishOptions.NotesFile).
func (o *notesOptions) apply(to *targets.Options) error {
	g := &to.GitHub
	g.Title, g.GenerateNotes, g.PreviousTag, g.Draft, g.Commitish, g.Provenance = o.title, o.generateNotes, o.previousTag, o.draft, o.target, o.provenance
	if o.prereleaseFlag != nil && o.prereleaseFlag.Changed {
		g.Prerelease = &o.prerelease
	}
	if o.previousTag != "" && !o.generateNotes {
		return cli.Usagef("--%sprevious-tag needs --%sgenerate-notes", o.githubPrefix, o.githubPrefix)
	}
	l := &to.GitLab
	l.Release, l.Ref, l.Provenance = o.gitlabRelease, o.ref, o.provenance
	if o.gitlabRelease {
		l.Title = o.title
	} else if o.ref != "" {
		return cli.Usagef("--%sref needs --%srelease", o.gitlabPrefix, o.gitlabPrefix)
	}
	return nil
}

// distOptions say which built release a command reads: the DIST argument
// (default dist; the deprecated --from says the same) and --version. The
// folder is checked where it is read (pipeline: after the target opens).
type distOptions struct {
	dir, version string
	what         string // how the user named the folder: DIST, or --from
}

// AddFlags binds --version and the deprecated --from; w gets its notice.
func (o *distOptions) AddFlags(cmd *cobra.Command, w io.Writer, versionUsage string) {
	cmd.Flags().StringVar(&o.dir, "from", "dist", "built release folder (capirepo build --out)")
	cli.DeprecatedFlag(w, cmd.Flags(), "from", "pass the built release folder as DIST")
	cmd.Flags().StringVar(&o.version, "version", "", versionUsage)
}

// arg takes the folder from DIST, as every command takes what it reads
// from its argument.
func (o *distOptions) arg(cmd *cobra.Command, args []string) error {
	o.what = cli.ArgName(cmd, "from", "DIST")
	return cli.Arg(cmd, args, "from", "DIST", "the dist folder", &o.dir)
}

// configOut is --config-out of the commands that publish where clusterctl
// reads: the file the clusterctl config is written to, atomically, instead
// of stdout.
type configOut string

const configOutUsage = "write the clusterctl config to this file (atomically) instead of stdout; the clusterctl init line printed under next: reads it"

func (c *configOut) AddFlags(cmd *cobra.Command, usage string) {
	cmd.Flags().StringVar((*string)(c), "config-out", "", usage)
}

// check refuses a --config-out that names a folder or lies in a folder that
// does not exist, before anything is published.
func (c configOut) check() error { return pipeline.CheckConfigOut(context.Background(), string(c)) }

// instanceOptions name the Sigstore instance: cosign v3's --signing-config
// and --trusted-root; without them, the public instance's (TUF).
type instanceOptions struct{ signingConfig, trustedRoot string }

func (o *instanceOptions) AddFlags(cmd *cobra.Command, signing bool) {
	if signing {
		cmd.Flags().StringVar(&o.signingConfig, "signing-config", "", "Sigstore signing config (cosign v3's): the Fulcio, Rekor and timestamp authorities to use (default: the public Sigstore instance's, from its TUF repository)")
	}
	cmd.Flags().StringVar(&o.trustedRoot, "trusted-root", "", "Sigstore trusted root (cosign v3's): what certificates, log entries and timestamps are checked against (default: the public Sigstore instance's, from its TUF repository)")
}

func (o *instanceOptions) Options(s streams, timeout time.Duration) sign.InstanceOptions {
	return sign.InstanceOptions{SigningConfig: o.signingConfig, TrustedRoot: o.trustedRoot,
		CacheDir: sigstoreCache(s.getenv), HTTPClient: publish.NewHTTPClient(publish.HTTPOptions{Timeout: timeout, Progress: s.errOut}), Log: s.errOut}
}

// signOptions are the flags of every command that signs.
type signOptions struct {
	instanceOptions
	key        string
	tlogUpload bool
}

func (o *signOptions) AddFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.key, "key", "", "sign with this cosign-format private key: a FILE, or env://VAR for a variable that holds it; its password in "+envPassword+
		" (default: keyless, with the CI's OIDC token: "+envIDToken+", or GitHub Actions' with id-token: write)")
	fl.BoolVar(&o.tlogUpload, "tlog-upload", false, "with --key, also record each signature in the transparency log (Rekor) of the signing config (keyless signing always does)")
	o.instanceOptions.AddFlags(cmd, true)
}

// unused refuses signing flags given without the switch that signs.
func (o *signOptions) unused(sw string) error {
	if o.key != "" || o.tlogUpload || o.signingConfig != "" || o.trustedRoot != "" {
		return cli.Usagef("--key, --tlog-upload, --signing-config and --trusted-root go with --%s", sw)
	}
	return nil
}

// signer makes the signer the flags and the environment ask for (Options
// reads the key and the tokens: env.go) when on; else the signing flags
// are refused.
func (o *signOptions) signer(ctx context.Context, s streams, timeout time.Duration, on bool) (*sign.Signer, error) {
	if !on {
		return nil, o.unused("sign")
	}
	so, err := o.Options(s, timeout)
	if err != nil {
		return nil, err
	}
	return sign.NewSigner(ctx, so)
}

// signatureOptions say whose signatures are accepted, with cosign's names;
// what names the switch that turns the check on (--signatures,
// --require-signatures).
type signatureOptions struct {
	instanceOptions
	on                            bool
	what                          string
	key, identity, identityRegexp string
	issuer, issuerRegexp          string
	requireTlog, allowNoProv      bool
}

func (o *signatureOptions) AddFlags(cmd *cobra.Command, what, usage string) {
	fl := cmd.Flags()
	o.what = what
	fl.BoolVar(&o.on, what, false, usage)
	fl.StringVar(&o.key, "key", "", "accept signatures made with this public key (cosign.pub), PEM")
	fl.StringVar(&o.identity, "certificate-identity", "", "accept keyless signatures of this identity: the certificate's subject (e-mail, or a workflow URI such as https://github.com/OWNER/REPO/.github/workflows/release.yaml@refs/tags/v1.4.0)")
	fl.StringVar(&o.identityRegexp, "certificate-identity-regexp", "", "as --certificate-identity, a regular expression")
	fl.StringVar(&o.issuer, "certificate-oidc-issuer", "", "the OIDC issuer of --certificate-identity: https://token.actions.githubusercontent.com (GitHub Actions), https://gitlab.com (GitLab.com)")
	fl.StringVar(&o.issuerRegexp, "certificate-oidc-issuer-regexp", "", "as --certificate-oidc-issuer, a regular expression")
	fl.BoolVar(&o.requireTlog, "require-tlog", false, "with --key, refuse signatures without a transparency-log entry (keyless ones always need one)")
	fl.BoolVar(&o.allowNoProv, "allow-missing-provenance", false, "accept a signed version without provenance.intoto.json: then nothing signed names its version, so an older signed release renamed to it passes (capirepo sign writes one unless --provenance=false)")
	o.instanceOptions.AddFlags(cmd, false)
}

// verifier makes the verifier the flags ask for (sign.LoadVerifier); nil
// when the check is off.
func (o *signatureOptions) verifier(ctx context.Context, s streams, timeout time.Duration) (*sign.Verifier, error) {
	if !o.on {
		if o.key != "" || o.identity != "" || o.identityRegexp != "" || o.issuer != "" || o.issuerRegexp != "" || o.requireTlog || o.allowNoProv || o.trustedRoot != "" {
			return nil, cli.Usagef("--key, --certificate-identity, --certificate-oidc-issuer, --require-tlog, --allow-missing-provenance and --trusted-root go with --%s", o.what)
		}
		return nil, nil
	}
	if o.key == "" && (o.identity == "" && o.identityRegexp == "" || o.issuer == "" && o.issuerRegexp == "") {
		return nil, cli.Usagef("--%s needs --key, or --certificate-identity with --certificate-oidc-issuer (or their -regexp forms)", o.what)
	}
	return sign.LoadVerifier(ctx, sign.VerifyOptions{Identity: o.identity, IdentityRegexp: o.identityRegexp, Issuer: o.issuer, IssuerRegexp: o.issuerRegexp,
		RequireLog: o.requireTlog, AllowMissingProvenance: o.allowNoProv}, o.key, o.Options(s, timeout))
}

// installOptions are the install check's flags, the same on verify
// (--install) and release (--install-check); with rehearse set, the upgrade
// rehearsal shares --kubeconfig, --clusterctl-config, --var, --values and
// --core with the check.
type installOptions struct {
	name             string // the flag that turns the check on
	on               bool
	rehearse         *rehearseOptions
	kubeconfig       string
	dryRunOnly       bool
	force            bool
	clusterctlConfig string
	vars             []string // NAME=VALUE
	values           []string // [FLAVOR=]FILE
	// readBack says the command's read-back takes --var and --values too
	// (verify), not only the check.
	readBack bool
}

func (o *installOptions) AddFlags(cmd *cobra.Command, name, usage string) {
	o.name = name
	fl := cmd.Flags()
	fl.BoolVar(&o.on, name, false, usage)
	fl.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the API server for --"+o.users("and")+
		" (its current context): a scratch cluster such as kind, where CRDs and namespaces are created for real and removed at the end")
	fl.BoolVar(&o.dryRunOnly, "dry-run-only", false, "--"+name+" creates nothing and sends every object with dryRun=All; objects of the release's own kinds are then not checked")
	fl.BoolVar(&o.force, "force", false, "--"+name+" on a cluster that already has the release's CRDs: replace them for the check and put them back after")
	fl.StringVar(&o.clusterctlConfig, "clusterctl-config", "", "clusterctl config whose cert-manager: names the cert-manager --"+o.users("and")+
		" "+o.verb("takes", "take")+" CRDs from, and whose variables (as the environment's) are real values for the templates (default clusterctl's own)")
	what := "the templates --" + o.users("and") + " " + o.verb("applies", "apply")
	if o.readBack {
		what = "the templates, read back and, with --" + o.users("or") + ", applied"
	}
	fl.StringArrayVar(&o.vars, "var", nil, "NAME=VALUE: a real value for a variable of "+what+" (repeatable; wins over the environment and --values)")
	fl.StringArrayVar(&o.values, "values", nil, "[FLAVOR=]FILE: a YAML map of variable names to real values, for every flavor or for one (default=FILE for cluster-template.yaml); repeatable")
}

// users names the flags that use the shared flags: install, or install
// and (or or) upgrade-from; verb is one or other, as it names one or two.
func (o *installOptions) users(conjunction string) string {
	if o.rehearse == nil {
		return o.name
	}
	return o.name + " " + conjunction + " --" + o.rehearse.name
}

func (o *installOptions) verb(one, other string) string {
	if o.rehearse == nil {
		return one
	}
	return other
}

// Options are the check's and the rehearsal's options, each nil when off,
// once the flags are checked: --kubeconfig and --clusterctl-config serve
// the check and the rehearsal, --var and --values also the read-back
// (readBack), --dry-run-only and --force only the check.
func (o *installOptions) Options(ctx context.Context, s streams, t *targetOptions) (*pipeline.InstallCheckOptions, *pipeline.RehearseOptions, error) {
	r := o.rehearse
	if r == nil {
		r = &rehearseOptions{}
	}
	var core []pipeline.Side
	var err error
	switch {
	case !r.enabled() && r.withCertManager:
		return nil, nil, cli.Usagef("--with-cert-manager belongs to --%s", r.name)
	case !r.enabled() && !o.on && r.core != "":
		return nil, nil, cli.Usagef("--core belongs to the install check and --%s", r.name)
	case r.core != "":
		if core, err = pipeline.ParseSides("--core", []string{r.core}); err != nil {
			return nil, nil, err
		}
	}
	vars, err := o.variables(s.getenv)
	if err != nil {
		return nil, nil, err
	}
	if !o.on {
		if o.dryRunOnly || o.force {
			return nil, nil, cli.Usagef("--dry-run-only and --force belong to --%s", o.name)
		}
		if !r.enabled() {
			if o.kubeconfig != "" || o.clusterctlConfig != "" {
				return nil, nil, cli.Usagef("--kubeconfig and --clusterctl-config belong to --%s", o.users("and"))
			}
			if !o.readBack && (len(o.vars) > 0 || len(o.values) > 0) {
				return nil, nil, cli.Usagef("--var and --values belong to --%s", o.users("and"))
			}
			return nil, nil, nil
		}
	}
	switch _, err := os.Stat(o.kubeconfig); {
	case o.kubeconfig == "" && o.on:
		return nil, nil, cli.Usagef("--%s needs --kubeconfig FILE: the API server to apply the release to (a scratch cluster such as kind, or any cluster with --dry-run-only)", o.name)
	case o.kubeconfig == "":
		return nil, nil, cli.Usagef("--%s needs --kubeconfig FILE: a scratch cluster (kind create cluster) where clusterctl installs and upgrades the providers for real", r.name)
	case o.dryRunOnly && o.force:
		return nil, nil, cli.Usagef("--force replaces CRDs for the check; --dry-run-only creates nothing: give one of them")
	case err != nil:
		return nil, nil, cli.Usagef("--kubeconfig %v", err)
	}
	cc, err := clusterctlConfig(ctx, o.clusterctlConfig)
	if err != nil {
		return nil, nil, err
	}
	shared := pipeline.InstallCheckOptions{Kubeconfig: o.kubeconfig, DryRunOnly: o.dryRunOnly, Force: o.force, Clusterctl: cc,
		Sources: t.sources(s), Variables: vars, ValuesFiles: o.values, Log: s.errOut}
	if len(core) == 1 {
		shared.Core = &core[0]
	}
	var check *pipeline.InstallCheckOptions
	if o.on {
		check = &shared
	}
	if !r.enabled() {
		return check, nil, nil
	}
	rehearsal := &pipeline.RehearseOptions{InstallCheckOptions: shared, WithCertManager: r.withCertManager}
	if r.from != "" {
		from, err := pipeline.ParseSides("--upgrade-from", []string{r.from})
		if err != nil {
			return nil, nil, err
		}
		rehearsal.From = &from[0]
	}
	return check, rehearsal, nil
}

// rehearseOptions are the upgrade rehearsal's flags: verify's
// --upgrade-from OLD and release's --rehearse turn it on; it shares the
// install check's cluster and values (installOptions.rehearse).
type rehearseOptions struct {
	name string // the flag that turns the rehearsal on
	// from is verify's --upgrade-from; on is release's --rehearse.
	from string
	on   bool
	// core is --core; withCertManager --with-cert-manager.
	core            string
	withCertManager bool
}

// AddFlags binds --upgrade-from OLD on verify (from), --rehearse on release.
func (o *rehearseOptions) AddFlags(cmd *cobra.Command, from bool) {
	fl := cmd.Flags()
	if from {
		o.name = "upgrade-from"
		fl.StringVar(&o.from, o.name, "", "rehearse the upgrade from OLD (a folder, or a target URL with an optional @VERSION: the release before without) to this release "+
			"with clusterctl's client on the scratch cluster of --kubeconfig")
	} else {
		o.name = "rehearse"
		fl.BoolVar(&o.on, o.name, false, "rehearse the upgrade from the release the upgrade check compared with on the scratch cluster of --kubeconfig before publishing, "+
			"with clusterctl's client; stop if it fails")
	}
	fl.StringVar(&o.core, "core", "", "the core Cluster API release (with the kubeadm providers it holds) the install check creates the CRDs of first and --"+o.name+"'s clusterctl init installs first: a folder, "+
		"or a target URL with @VERSION (github://kubernetes-sigs/cluster-api@v1.14.2); not needed for cluster-api's own releases")
	fl.BoolVar(&o.withCertManager, "with-cert-manager", false, "--"+o.name+" on a cluster without cert-manager's CRDs: let clusterctl install cert-manager "+
		"(its webhooks taken out, nothing running), read from where --clusterctl-config says (GitHub by default)")
}

func (o *rehearseOptions) enabled() bool { return o.on || o.from != "" }

// readOptions are how the commands that read published releases (diff,
// lint --against) reach them: credentials when the environment has them
// (GITHUB_TOKEN, GITLAB_ACCESS_TOKEN, OCI_*), none required.
type readOptions struct {
	targets targetOptions
	oci     ociOptions
}

func (o *readOptions) AddFlags(cmd *cobra.Command) {
	o.targets.AddFlags(cmd, targetUsage{githubAPI: "GitHub REST API base for github:// releases (default $GITHUB_API_URL, else https://api.github.com/)",
		gitlabURL: "GitLab instance URL for gitlab:// releases (default https://HOST)"})
	o.oci.AddFlags(cmd, "", "talk plain HTTP to an oci:// registry", false)
}

func (o *readOptions) Options(s streams) targets.Options {
	to, _ := o.targets.Options(s) // no --gitlab-token-type to refuse
	to.OCI.PlainHTTP = o.oci.plainHTTP
	return to
}

// bindTimeout adds --timeout, the bound on each network wait.
func bindTimeout(cmd *cobra.Command, d *time.Duration) {
	cli.BindWait(cmd, d, "timeout", publish.DefaultTimeout,
		"longest wait for a server: connecting (at most 30s), its reply, or any pause in a transfer; a request and its retries wait at most twice this in all; not a limit on a whole upload")
}

// bindLockTimeout adds --lock-timeout, the bound on waiting for another
// capirepo writing into the same output folder.
func bindLockTimeout(cmd *cobra.Command, d *time.Duration) {
	cli.BindWait(cmd, d, "lock-timeout", dirlock.DefaultTimeout,
		"longest wait for another capirepo writing into the same output folder")
}

// checkVersionFlag checks a version flag up front ("" means the default),
// suggesting the full form of a short one.
func checkVersionFlag(flag, v string) error {
	if err := pipeline.CheckVersion(v); err != nil {
		return cli.Usagef("%s: %v", flag, err)
	}
	return nil
}

// uploadBars are a command's upload bars on a terminal (none in a CI log
// or with --output json), and its streams with stderr above them.
func uploadBars(s streams, g *globalOptions) (*cli.UploadBars, streams) {
	bars := cli.NewUploadBars(s.errOut, g.output == "text")
	s.errOut = bars.Writer(s.errOut)
	return bars, s
}

// variables are the tokens' variables and --var's, which win.
func (o *installOptions) variables(getenv env) (map[string]string, error) {
	vars := tokenVariables(getenv)
	for _, v := range o.vars {
		name, value, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			return nil, cli.Usagef("--var %q: give NAME=VALUE", v)
		}
		vars[name] = value
	}
	return vars, nil
}
