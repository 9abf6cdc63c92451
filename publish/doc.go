// Package publish is what every target shares: a target is one place
// releases are published to and read from (Target: a Publisher and a
// Source, and how clusterctl reads it), and what clusterctl reads of a
// provider version is chosen here, once for every backend (Files, Read; and
// ReleaseFiles, ReadRelease for what a copy of the release holds). Which
// version is the newest, and which came before, is package versions'
// answer; Repository hands it a Source's versions.
// A target's optional abilities are one-method interfaces (Planner,
// Checker, Signable, Operator, Drafting, Noted, Flat) that callers find with a type
// check; an Operator that holds nothing its reader installs from says why
// (NotInstallable). ReadCertManager reads the one file clusterctl reads of
// cert-manager's release; Site renders what a mirror's site installs from
// (its clusterctl config, or the operator's Provider resources).
// The backends are one folder each: github/ (a GitHub release), gitlab/
// (GitLab generic packages), local/ (the semver folder tree of a file://
// URL), oci/ (artifacts cluster-api-operator reads), configmap/ (a file of
// the operator's ConfigMaps). targets/ turns a URL into a target.
//
// Every publisher follows the same rules: it compares what the target holds
// with the release before it writes (size and sha256, Compare), uploads only
// what is missing, refuses to change a published version unless told to
// replace, and sends every network call through the one retry policy
// (Retry), which retries transient failures with capped exponential backoff
// and honours the waits a server asks for, over an HTTP client whose every
// wait is bounded and whose credentials never follow a redirect to another
// host (NewHTTPClient, GuardCredentials). What it printed or wrote of a
// provider's clusterctl config is ClusterctlConfig.
//
// It is not for building assets (builder), checking them (contract) nor
// reading them back through clusterctl (verify). It never reads the
// environment: tokens come through targets.Options.Getenv from cmd/.
//
// # Adding a target
//
// A new kind of target (S3, Gitea, a plain HTTPS server) is one folder and
// one case in the factory; nothing in pipeline/ or cmd/ changes:
//
//  1. publish/<name>/: a type that implements Target.
//     - Publish(ctx, rel) writes every provider of the release: list what
//     the target holds, Compare, refuse Changed files unless Replace,
//     write Missing (and Changed) files, and return a Summary (Kind, URL,
//     Uploaded/Skipped/Replaced, the Providers' URLs). Set Summary.Logged
//     when Progress already got a line per upload. Stage and rename, or
//     upload under a temporary name, so a reader never sees half a
//     version.
//     - Versions, List and Fetch read it back by a Ref (provider, version,
//     components file). List reports the sha256 where the target knows
//     it, without downloading; Read checks every download against it.
//     Wrap ErrNotFound for a provider, version or file that is not there.
//     - Clusterctl() says how clusterctl reads it: Reach.ProviderURL (the
//     URL for a clusterctl config), or Why it cannot and which Reader
//     reads the target instead; verify, release and mirror read it back
//     that way (verify.ReadBack).
//     - What else it can do is one of the optional interfaces, each asserted
//     with var _ publish.X = (*Target)(nil): Planner (the files Publish
//     would write, for a dry run's count: implement it whenever the target
//     adds files of its own or names them its own way), Checker (whether
//     Publish would refuse a release, a Refusal, asked of every target
//     before a run with several writes to any and by a dry run: implement
//     it whenever Publish refuses anything, and return its refusals as
//     Refusals from both), Signable (its
//     pushed artifacts are signed where they are, by digest), Operator
//     (cluster-api-operator installs from it: its Provider resources),
//     Drafting (it may leave a release a draft nobody reads yet), Noted
//     (its release carries notes: a section can be appended), Flat (one
//     release per version holds every provider). pipeline asks for these
//     with a type check; a caller never asks for a concrete type or a URL
//     scheme.
//     - Network calls go through Retry and the HTTP client the options
//     hand in; credentials arrive as values, never from the process.
//  2. publish/targets: one Backend in the table: its Scheme, the Form of
//     its URL, Parse (check the URL without network or credentials) and an
//     Opener that fills the backend's options from targets.Options (read
//     credentials through Options.Getenv, required only when Publish is
//     set), and FromProviderURL when clusterctl has provider URLs of it.
//  3. Tests: a stateful fake of the service's API (or its real server in
//     process), the backend's own table tests, and the round trip through
//     release and mirror that pipeline/memtarget_test.go runs for an
//     in-memory target.
package publish
