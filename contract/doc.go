// Package contract checks a built provider release against what clusterctl,
// the API server and core Cluster API controllers expect of it: the clusterctl
// provider contract (metadata.yaml, components YAML, cluster templates,
// ClusterClass files) and the infrastructure provider contracts (InfraCluster,
// InfraMachine, InfraMachinePool and their templates, as CRD schemas).
//
// Every check is a rule with a stable ID (Rules lists them; docs/lint-rules.md
// explains each). Lint and LintFiles return a Report of findings, each naming
// the file, the object (Kind/name) and the field; a rule can be waived with a
// reason, and waived findings are kept and printed with it. The Report is the
// lint's one report type, and the findings of capirepo diff and the release's
// upgrade step too; its renderers are text, JSON, SARIF (code scanning),
// Markdown (CI job summaries, embedded by the diff and release reports) and
// GitLab Code Quality (merge request widgets).
//
// The checks are static: they read YAML bytes in memory, never a cluster, the
// network, the environment or a folder (release.Read reads a release folder
// that capirepo did not build). They do not render, build or publish anything,
// and they do not replay clusterctl (package verify does that); they catch
// what clusterctl would reject, or accept and then fail on, before a release
// is published.
package contract
