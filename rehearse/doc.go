// Package rehearse is capirepo's upgrade rehearsal: Rehearse upgrades a
// provider from an old release to a new one on a scratch cluster the way
// `clusterctl init` and `clusterctl upgrade apply` do, through clusterctl's
// client library in process, and reports in clusterctl's and the API
// server's words what failed and the state it left (Report, as text, JSON
// or Markdown; verify's and release's reports carry it).
//
// It publishes core Cluster API, the old and the new release into a
// temporary file:// repository (publish/local) with their webhook
// configurations, APIServices and conversion webhooks taken out and their
// workloads running no Pod (Deployments at 0 replicas, Jobs suspended,
// DaemonSets on no node): nothing serves a webhook or runs a controller
// on a scratch cluster, and clusterctl's own steps would otherwise make
// the API server call them. clusterctl installs the old release from
// there; the objects of its flavors and ClusterClasses are created for
// real with the install check's values (install.Prepare, which asks
// package values); clusterctl upgrade plan must offer the new release;
// its CRDs are sent as clusterctl will patch them with dryRun=All first (a
// refused CRD is reported before clusterctl deletes anything, rather than
// after minutes of its retries and a half-upgraded provider); clusterctl
// upgrade apply installs it;
// every object is read back (same uid) and applied server-side unchanged
// in its storage version, so CEL transition rules and ratcheting run.
//
// The files split it by job: rehearse.go runs it (options, the layout of
// the releases, the values), serve.go is what the repository serves
// differently, repository.go the repository and clusterctl's config,
// claim.go what clusterctl installs and the refusal of a cluster that
// already holds any of it, steps.go clusterctl's steps and the objects,
// state.go the words for what a failure left, cleanup.go the removal,
// log.go clusterctl's log, cluster.go the API server, report.go the report
// and its text, report_markdown.go its Markdown.
//
// It is not the install check (package install: one release applied, every
// object dry-run) and not the static upgrade check (package diff: two
// releases' files compared). It judges clusterctl's upgrade and the API
// server's validation, not the provider's controllers or conversion code,
// which never run. Its tests against a real kube-apiserver are in
// test/apiserver (`make test-install`).
package rehearse
