// Package versions is the one answer to "which version of a repository is
// the newest, and which came before", by clusterctl's rules, for every
// repository capirepo reads: a GitHub release list, GitLab packages, a
// folder tree, OCI tags, operator ConfigMaps, the versions a mirror copied.
//
// The rules are clusterctl's own (cmd/clusterctl/client/repository,
// repository_versions.go), mirrored here because they are not exported:
//
//   - a repository lists names; clusterctl takes every name
//     k8s.io/apimachinery's version.ParseSemantic accepts as a version, with
//     or without the leading v, pre-releases too (the local repository's
//     GetVersions, the GitHub reader's), and drops the others;
//   - the candidates are ordered releases before pre-releases, each newest
//     first (latestPatchRelease), and at most the first five are tried;
//   - a candidate is asked for as "v" and its semantic version, whatever its
//     listed name: a tag or folder 0.3.0 is looked for as v0.3.0. A
//     repository that holds no such version says so (ErrNotFound) and the
//     next is tried; any other failure stops the choice, as it stops
//     clusterctl (its local reader fails where capirepo's names the folder);
//   - latest is the first candidate that holds a release; if its
//     metadata.yaml maps the current contract to another release series,
//     the newest patch of that series (latestContractRelease).
//
// The release before a version is clusterctl's latestPatchRelease over the
// versions below it: what a user running latest had installed before that
// version existed, and so what it upgrades from (Before). A tree or list
// whose every version holds a release is ordered without reading: Newest
// (which leaves out latest's second look, at the contract's series).
//
// cluster-api-operator picks differently for a Provider without a version
// (phase_load.go getLatestVersion: the highest version, pre-releases
// included); Highest is that rule, for the ConfigMap reader.
//
// publish.Repository reads a publish.Source this way. The package reads
// nothing itself: callers hand it names, or a Repository.
package versions
