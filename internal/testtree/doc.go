// Package testtree writes small provider trees for tests: a map of
// slash-separated paths to file contents, plus a minimal valid provider to
// start from.
//
// It is for tests only: test files and test helpers (builder/buildtest)
// import it, never a command.
package testtree
