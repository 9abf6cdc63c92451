#!/usr/bin/env bash
# Fails, saying what to do, when this module and capirepo's own go.mod are
# out of step. k8s.io/kubernetes v1.Y.Z goes with its staging modules
# published as k8s.io/<name> v0.Y.Z, which the replace directives here pin;
# a staging module capirepo (or a dependency) requires at another version
# would be compiled at the replaced one without a word, and capirepo's own
# k8s.io versions must be the ones this module tests with. Prints nothing
# when all is in step.
set -euo pipefail
cd "$(dirname "$0")"
kube=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
staging="v0.${kube#v1.}"
fail=0
# Each replaced module: required at what, replaced by what.
while read -r path required replaced; do
	if [[ "$replaced" != "$staging" ]]; then
		echo "test/apiserver/go.mod replaces $path with $replaced, but k8s.io/kubernetes $kube needs $staging" >&2
		fail=1
	fi
	if [[ "$required" != "v0.0.0" && "$required" != "$replaced" ]]; then
		echo "$path is required at $required (by capirepo or a dependency) but test/apiserver/go.mod replaces it with $replaced" >&2
		fail=1
	fi
done < <(go list -m -f '{{with .Replace}}{{if .Version}}{{$.Path}} {{$.Version}} {{.Version}}{{end}}{{end}}' all)
for m in k8s.io/apimachinery k8s.io/apiextensions-apiserver k8s.io/client-go k8s.io/api; do
	own=$(cd ../.. && go list -m -f '{{.Version}}' "$m")
	if [[ "$own" != "$staging" ]]; then
		echo "capirepo's go.mod has $m $own, but test/apiserver tests with k8s.io/kubernetes $kube ($staging)" >&2
		fail=1
	fi
done
if [[ $fail != 0 ]]; then
	echo "bump k8s.io/kubernetes in test/apiserver to v1.${own#v0.} with its staging replaces: go mod edit -require=k8s.io/kubernetes@v1.${own#v0.} \$(./gen-replaces.sh v1.${own#v0.}) && go mod tidy" >&2
	exit 1
fi
