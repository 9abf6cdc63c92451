// Package pipeline builds, lints, publishes and verifies one release in one
// run, stopping at the first failure: the orchestration behind `capirepo
// release`, and the build (manager binaries, image, rendering) behind
// `capirepo build`.
//
// Each step is another package's job (builder, image, contract, release,
// publish, localrepo, verify); this package only runs them in order, records
// what each did, and says which steps were not run after a failure.
//
// It is not a command: it parses no flags and reads no environment. Tokens,
// the go command's environment and registry credentials arrive as values in
// the options, and publishers are made by a function the caller supplies, so
// the caller decides where credentials come from. Secrets are never printed.
package pipeline
