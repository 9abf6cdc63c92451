// Package publish puts a built release.Release where clusterctl can install
// it from: a GitHub release (github.go) and, beside it, the other targets
// (GitLab generic packages, the local folder tree) behind one small
// Publisher interface.
//
// Every publisher follows the same rules: it compares what the target holds
// with the release before it writes (size and sha256, compare.go), uploads
// only what is missing, refuses to change a published version unless told to
// replace, and sends every network call through the one retry policy of
// retry.go, which retries transient failures with capped exponential backoff
// and honours the waits a server asks for.
//
// It is not for building assets (builder), checking them (contract) nor
// reading them back through clusterctl (verify). It never reads the
// environment: tokens, URLs and clients are handed in by cmd/.
package publish
