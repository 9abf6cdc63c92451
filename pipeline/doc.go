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
//     each target and read it back as its readers do; it stops at the
//     first failure.
//   - `capirepo publish <target>` (Publish): the one publish flow, which
//     release's publish steps run too (publish.go: the image check, signing
//     what a target pushed, the operator's Provider resources, the
//     clusterctl config and next steps); a published target is read back
//     one way, for release and mirror (readback.go).
//   - the build behind `capirepo build` (Build: the config's before:
//     commands, manager binaries, image, rendering) and its lint (Lint);
//   - `capirepo diff` and lint --against (Diff, Against: an older release,
//     from a folder or a target, against a newer one);
//   - `capirepo mirror` (Mirror: upstream providers from their provider URLs
//     into a target);
//   - `capirepo dev` (Dev: builds with the next version into a local
//     repository and a clusterctl config).
//
// Each step is another package's job (builder, image, contract, diff,
// release, verify, install, rehearse, sign, publish and its targets); this
// package runs them in order, records what each did, and says which steps
// were not run after a failure. It knows no kind of target: it opens them through
// publish/targets, asks each how clusterctl reads it (publish.Reach) and
// what else it can do through publish's optional interfaces (Signable,
// Operator, Drafting, Planner, Noted), never by its scheme or concrete type.
//
// Each command's result is its one report type, with a renderer per format
// (ReleaseSummary, DiffSummary, VerifyReport: text, JSON, Markdown; diff's
// also SARIF and Code Quality through contract.Report); the command picks
// the format. release --notes-upgrade renders the upgrade step's own
// comparison into the release notes (notes.go), never a second one.
//
// It is not a command: it parses no flags and reads no environment. Tokens,
// the go command's environment, registry credentials and signing keys
// arrive as values in the options (targets.Options.Getenv is the caller's),
// so the caller decides where credentials come from. Secrets are never
// printed. Nor does it hold the logic of a step: a rule, a render or an
// upload added here belongs in the step's package.
package pipeline
