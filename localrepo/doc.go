// Package localrepo writes provider repositories to local folders the way
// clusterctl reads them: the semver folder tree behind a file:// provider URL
// (<root>/<label>/<version>/<files>), the same tree as clusterctl's overrides
// folder, and the dev repository of `capirepo dev` with the clusterctl config
// and `clusterctl init` line that use it.
//
// Every version folder is staged beside its target under a name clusterctl's
// version listing skips (.<version>.tmp-*) and renamed into place, so a
// reader sees a whole folder or none; leftovers of an interrupted run are
// cleaned (or, for a folder moved aside during a replace, restored) by the
// next run. Publisher implements publish.Publisher; it refuses to change a
// version folder unless told to replace it. Dev renders a provider only
// when its inputs changed: the content of its whole source tree (without
// .git, bin and dist output), its configuration, the version and capirepo's
// build, kept as a key in the dev repository's cache file.
//
// It builds nothing itself (builder does) and reads no environment: callers
// pass the XDG_CONFIG_HOME and HOME values in Env.
package localrepo
