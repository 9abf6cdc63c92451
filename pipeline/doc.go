// Package pipeline runs the commands that take several steps: `capirepo
// release` (Release: build, lint, upgrade, images, write, install check,
// sign, publish to each target and
// read it back, stopping at the first failure), the build behind `capirepo
// build` (Build: the config's before: commands, manager binaries, image,
// rendering), `capirepo mirror` (Mirror: upstream providers from their
// provider URLs into a target) and `capirepo dev` (Dev: builds with the
// next version into a local repository and a clusterctl config).
//
// Each step is another package's job (builder, image, contract, release,
// publish and its targets, verify); this package runs them in order,
// records what each did, and says which steps were not run after a
// failure. It knows no kind of target: it opens them through
// publish/targets and asks each how clusterctl reads it.
//
// It is not a command: it parses no flags and reads no environment. Tokens,
// the go command's environment and registry credentials arrive as values in
// the options (targets.Options.Getenv is the caller's), so the caller decides
// where credentials come from. Secrets are never printed.
package pipeline
