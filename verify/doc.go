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
// what they uploaded. ReadBack reads a published target back the way its
// readers will: by its provider URLs, or through its Source by its reader's
// rules (an OCI registry, which the operator reads) and then from memory;
// release's verify steps and mirror read back there.
//
// It is not a linter: rules clusterctl does not enforce belong to contract/.
// Reading a repository never talks to a management cluster and needs no
// kubeconfig: the ClusterClass merge that clusterctl does during `generate
// cluster` is replayed offline, as if the management cluster had none of the
// classes but those the release ships only inside another flavor, which its
// users apply first (values.Topology): a flavor needing one is read as after
// that flavor, and the report names both (TemplateReport.After).
//
// The install check, which applies a release to a real API server, is
// package install; it opens clusterctl sessions with NewSession.
//
// Every file's variables get the values package values chooses for the
// bytes clusterctl fetched (real values in Options, else stand-ins: a class
// the release ships for a topology Cluster's class, empty for a YAML
// fragment alone on its line); the report marks the stand-ins.
//
// Configuration is held in clusterctl's in-memory config reader, so neither a
// clusterctl.yaml nor the process environment supplies variables, and the
// overrides folder points at an empty temporary folder. What clusterctl's
// library still reads from the process is left to the caller: provider URLs
// and the overrides folder path are expanded with envsubst against the
// environment (so a path holding "${" fails and "$HOME" expands), GitHub
// version listing reads GOPROXY, the default overrides folder is looked up
// under XDG_CONFIG_HOME/HOME (creating the config folder if missing) before
// the configured one replaces it, and every HTTP request goes through
// http.DefaultTransport. For the duration of a Repository call that reads
// over HTTP that is capirepo's transport over the one there before: waits
// bounded as publishing bounds them (Options.HTTPClient), credentials sent
// only to the provider URLs' hosts (transport.go). Tokens are config
// values: pass github-token or gitlab-access-token in Options.Variables.
package verify
