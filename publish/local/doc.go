// Package local is the file:// target: the semver folder tree behind a
// file:// provider URL (<root>/<label>/<version>/<files>), which is also the
// layout of clusterctl's overrides folder. Target publishes releases into a
// tree and reads them back as clusterctl's local repository does; Env and
// OverridesFolder find clusterctl's folders as clusterctl finds them (and
// DevRepository, the dev loop's default); Folder and TargetURL take a
// folder from and to its file:// form.
//
// Every version folder is staged beside its target under a name clusterctl's
// version listing skips (.<version>.tmp-*) and renamed into place, so a
// reader sees a whole folder or none; leftovers of an interrupted run are
// cleaned (or, for a folder moved aside during a replace, restored) by the
// next run, under the root's lock (internal/dirlock). A version folder with
// other content is refused unless the target replaces.
//
// It builds nothing (the dev loop in pipeline/ builds and writes here) and
// reads no environment: callers pass XDG_CONFIG_HOME and HOME in Env.
package local
