// Package install is capirepo's install check: Check applies a release to a
// Kubernetes API server given by a client config, the way `clusterctl init`
// and `clusterctl generate cluster | kubectl apply` would, and reports every
// object the server refuses by file, object and field (Report, as text or
// JSON).
//
// On a scratch cluster (kind, say) it creates the release's CRDs (and
// cert-manager's when the release needs them and the cluster lacks them) and
// one namespace per provider for real, dry-runs every other object with
// fieldValidation=Warn, and removes what it created, also when interrupted;
// with Options.DryRunOnly it creates nothing; with Options.Force it replaces
// CRDs the cluster already has for the check and puts them back after.
//
// Prepare processes a release as Check does and sends nothing: the values
// of the components' variables and each template file's objects, which
// the upgrade rehearsal (package rehearse) installs and creates for real.
//
// The files split the check by job: check.go runs it (staging, order,
// providers' components through clusterctl), prepare.go is Prepare,
// crds.go creates CRDs and cert-manager's, apply.go sends the other
// objects and judges the answers, cleanup.go removes what the run created,
// topology.go judges a topology Cluster's variables against its class's
// schemas (the class of the flavor it needs applied first, for a class the
// release ships only inside another flavor: values.Topology; that flavor
// is checked first), cluster.go talks to the API server, report.go is the
// report. The variables' values (real ones,
// else stand-ins the fields' schemas accept) are package values' answer,
// asked with the release's CRDs, ClusterClasses and the server's OpenAPI.
//
// It is not the read-back: reading a repository through clusterctl needs no
// cluster and is package verify, whose clusterctl session (verify.Session)
// this package uses. It talks to the one API server it is
// given and to nothing else; it never installs controllers or webhooks
// (webhook configurations and Services are only dry-run) and never judges
// behaviour at run time. Its tests against a real kube-apiserver are in
// test/apiserver, a module of its own (`make test-install`).
package install
