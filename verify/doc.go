// Package verify reads a published provider repository back the way
// clusterctl does, through clusterctl's own client library
// (sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository): the version
// listing, metadata.yaml and its release series, the components with a target
// namespace and without one, the CRD names `clusterctl init` checks, every
// cluster-template flavor with the ClusterClasses its topology Clusters use,
// and every clusterclass file on its own. Whatever clusterctl would refuse
// fails here with clusterctl's own message, prefixed by provider, version and
// file; what was read is returned as a Report.
//
// A repository is addressed by the URLs clusterctl accepts: a local folder
// tree (file:///base/<label>/<version>/<components>), a GitHub release or a
// GitLab generic package. Dir builds the targets for a dist folder or a local
// repository tree; Repository takes any targets, so publishers can read back
// what they uploaded.
//
// It is not a linter: rules clusterctl does not enforce belong to contract/.
// It never talks to a management cluster and needs no kubeconfig: the
// ClusterClass merge that clusterctl does during `generate cluster` is
// replayed offline, as if the management cluster had none of the classes.
//
// Configuration is held in clusterctl's in-memory config reader, so neither a
// clusterctl.yaml nor the process environment supplies variables, and the
// overrides folder points at an empty temporary folder. What clusterctl's
// library still reads from the process (GOPROXY for GitHub version listing,
// the XDG/HOME lookup of the default overrides folder before the configured
// one replaces it, http.DefaultTransport) is left to the caller.
package verify
