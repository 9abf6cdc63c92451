// Package release holds a built provider release in memory (every provider's
// files with their sha256) and moves it to and from a dist folder:
// dist/<provider-label>/<version>/<files>, with a checksums.txt per folder.
//
// It knows nothing of how the files were rendered nor where they are
// published; builder makes a Release, publishers and verify consume one.
package release
