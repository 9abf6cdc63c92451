// Package pipeline runs the commands that take several steps:
//
//   - `capirepo release` (Release): build, lint, upgrade (the release before
//     this one at the first target that has one, against this one), images
//     (every image the components run exists for every platform built),
//     write the dist folder, read it back through clusterctl's client
//     (nothing is public before it reads), install check (applied to a
//     Kubernetes API server, when asked), upgrade rehearsal (clusterctl
//     upgrade from the release the upgrade step compared with, on a scratch
//     cluster, when asked: Rehearse), sign (when asked), then publish to
//     each target and read it back as its readers do (verify.ReadBack); it
//     stops at the first failure.
//   - `capirepo publish <target>` (Publish): the one publish flow, which
//     release's publish steps run too (publish.go: the read-back of the
//     dist before anything is published, the image check, signing
//     what a target pushed, the operator's Provider resources, the
//     clusterctl config and next steps); publish configmap
//     (PublishConfigMap) renders a file, with no target to open.
//   - the build behind `capirepo build` (Build: the config's before:
//     commands, manager binaries, image, SBOMs, rendering) and its lint
//     (Lint, LintPath);
//   - `capirepo diff` and lint --against (Diff, Against: an older release,
//     from a folder or a target, against a newer one);
//   - `capirepo verify` (Verify), `capirepo sign` (Sign);
//   - `capirepo mirror` (Mirror: upstream providers from their provider URLs
//     into a target) and `capirepo dev` (Dev, DevWatch: builds with the next
//     version into a local repository and a clusterctl config). They stay
//     files of this package (mirror*.go, dev*.go) since they run steps as
//     release does, with its step runner, lint options, before: commands and
//     read-back; what they do besides is in the steps' packages.
//
// Each step is another package's job (builder, image, contract, diff,
// release, verify, install, rehearse, sign, publish and its targets); this
// package runs them in order, records what each did, and says which steps
// were not run after a failure. It knows no kind of target: it opens them through
// publish/targets, asks each how clusterctl reads it (publish.Reach) and
// what else it can do through publish's optional interfaces (Signable,
// Operator, Drafting, Planner, Checker, Noted), never by its scheme or concrete type.
//
// Each command's result is its one report type, with a renderer per format
// (ReleaseSummary, Published, DiffSummary, VerifyReport, MirrorSummary,
// DevResult, BuildReport, SignReport, ConfigMapReport; Failure for a
// command that failed before it printed one); the command picks the
// format. release --notes-upgrade renders the upgrade step's own
// comparison into the release notes (notes.go), never a second one.
//
// It is not a command: it parses no flags and reads no environment and no
// working directory. Tokens, the go command's environment, registry
// credentials, signing keys, the user's clusterctl config (Clusterctl) and
// the folder a command runs in (WorkDir) arrive as values in the options
// (targets.Options.Getenv is the caller's), so the caller decides where
// they come from. Nor does it name a flag: a message that tells the user
// which option to give names it by meaning (internal/option), in the words
// of the command that runs. The checks of what is asked for (check.go:
// Validate, CheckFolder, ParseWaivers, DiffSides, ParseTargets) return
// publish.UsageErrors, which IsUsage tells apart for the exit code.
// Secrets are never printed. Nor does it hold the logic of a step: a rule,
// a render, a walk or an upload added here belongs in the step's package.
package pipeline
