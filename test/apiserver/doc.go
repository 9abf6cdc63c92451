// Package apiserver tests capirepo's install check (install.Check, and
// release's install check step) and upgrade rehearsal (rehearse.Rehearse,
// and release's rehearsal step) against a real kube-apiserver and etcd
// started in process, with a service resolver that refuses every address
// (and, for the rehearsal, Kubernetes' own namespace controller).
//
// It is a Go module of its own: importing k8s.io/kubernetes needs replace
// directives for its staging modules, which must never reach capirepo's own
// go.mod (go install module@version would break). Run it with
// `make test-install` from the checkout's root; check-versions.sh fails when
// this module's Kubernetes and capirepo's k8s.io versions drift apart. To
// move to Kubernetes v1.Y.Z (with capirepo's k8s.io at v0.Y.Z):
//
//	go mod edit -require=k8s.io/kubernetes@v1.Y.Z $(./gen-replaces.sh v1.Y.Z) && go mod tidy
//
// Servers may overlap in time but are started one after the other: no test
// that starts one runs in parallel.
package apiserver
