// Package release holds a built provider release in memory (every provider's
// files with their sha256) and moves it to and from a dist folder:
// dist/<provider-label>/<version>/<files>, with a checksums.txt per folder
// (Write, Load). Read takes a release from any folder clusterctl reads one
// from (a repository tree, a version folder, a flat folder of assets), for
// the lint and the diff of releases capirepo did not build; CheckFolder
// checks a folder's files against its checksums.txt. ScanTree and
// ScanLabel list the version folders clusterctl reads; Latest is the one it
// installs for latest (package versions' rule), which Read takes when no
// version is given.
//
// Images and Containers answer which images a release runs: every
// container, init and ephemeral container of every pod-bearing kind
// (Deployment, DaemonSet, StatefulSet, ReplicaSet, Job, CronJob, Pod), and
// which of them clusterctl reads (ClusterctlReads). The builder's image edit,
// the lint, verify --images and mirror --images all ask it.
//
// It knows nothing of how the files were rendered nor where they are
// published: builder makes a Release, the lint and diff check one,
// publishers and verify consume one. It does not judge the files it holds
// (contract does) and reads no network.
package release
