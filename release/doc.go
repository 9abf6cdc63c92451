// Package release holds a built provider release in memory (every provider's
// files with their sha256) and moves it to and from a dist folder:
// dist/<provider-label>/<version>/<files>, with a checksums.txt per folder
// (Write, Load). Read takes a release from any folder clusterctl reads one
// from (a repository tree, a version folder, a flat folder of assets), for
// the lint and the diff of releases capirepo did not build. ScanTree and
// ScanLabel list the version folders clusterctl reads; Latest is the one it
// installs for latest (package versions' rule), which Read takes when no
// version is given.
//
// It knows nothing of how the files were rendered nor where they are
// published: builder makes a Release, the lint and diff check one,
// publishers and verify consume one. It does not judge the files it holds
// (contract does) and reads no network.
package release
