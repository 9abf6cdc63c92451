#!/usr/bin/env bash
# The four real module trees (cluster-api v1.14.2's core trio, CAPD, CAPA
# v2.13.0, CAPG v1.13.1), each built twice: by the maintainers' own release
# pipeline with the real kustomize CLI (their Makefile's sed / gojq steps,
# kustomize build, cp) and by `capirepo build` with the config documented in
# docs/configs/. Every components file, metadata.yaml and copied template
# must be byte-identical; the wall time of both is printed.
#
#   bash bench/realtrees.sh          # run.sh calls it unless SKIP_REALTREES=1
#
# The trees come from the Go module cache (go mod download). The pipeline
# edits files in place, so each tree is copied under bench/out/realtrees first.
# capirepo runs with lint waivers for the findings build's lint still raises
# on these trees (listed below, each with its reason); CAPA's templates/ is
# left out of the copy (see docs/providers.md).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/bench/out/realtrees
BIN=${BIN:-$ROOT/bench/out/bin}
T=${CMD_TIMEOUT:-600}
KUSTOMIZE_VERSION=v5.8.2
mkdir -p "$BIN" "$OUT"

timeout "$T" go build -o "$BIN/capirepo" ./cmd/capirepo
if [ ! -x "$BIN/kustomize" ] || ! "$BIN/kustomize" version 2>/dev/null | grep -q "${KUSTOMIZE_VERSION#v}"; then
	GOBIN=$BIN timeout "$T" go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
fi
K=$BIN/kustomize

moddir() { timeout "$T" go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'; }

# copy MODULE NAME: a writable copy of a module tree.
copy() {
	rm -rf "${OUT:?}/$2"
	cp -r "$(moddir "$1")" "$OUT/$2"
	chmod -R u+w "$OUT/$2"
}

# sedimage DIR IMAGE POLICY: the set-manifest-image and set-manifest-pull-policy targets.
sedimage() {
	sed -i'' -e 's@image: .*@image: '"$2"'@' "$1/manager_image_patch.yaml"
	sed -i'' -e 's@imagePullPolicy: .*@imagePullPolicy: '"$3"'@' "$1/manager_pull_policy.yaml"
}

# waive CONFIG [RULE=REASON...]: the documented config plus lint waivers (none are
# needed now: the configs' own waivers cover the true findings, docs/providers.md).
waive() {
	local cfg=$1
	shift
	cat "$ROOT/docs/configs/$cfg"
	[ $# -gt 0 ] && echo "lint:" && echo "  disable:"
	for w in "$@"; do
		echo "  - rule: ${w%%=*}"
		echo "    reason: \"${w#*=}\""
	done
}

# timed NAME LOG CMD...: run (stdout discarded, stderr to LOG) and print the wall time.
timed() {
	local name=$1 log=$2 start end
	shift 2
	start=$(date +%s.%N)
	if ! "$@" >/dev/null 2>"$log"; then
		echo "FAILED: $name: $* (see $log)" >&2
		exit 1
	fi
	end=$(date +%s.%N)
	awk -v n="$name" -v s="$start" -v e="$end" 'BEGIN{printf "  %-10s %6.2f s\n", n, e - s}'
}

fail=0
# same A B: byte-compare two files.
same() {
	if cmp -s "$1" "$2"; then
		echo "  same: ${2#"$OUT"/}"
	else
		echo "  DIFFERENT: ${2#"$OUT"/} (pipeline: $1)"
		fail=1
	fi
}

echo "## real trees: maintainers' pipeline (kustomize $("$K" version)) against capirepo build"

echo "### cluster-api v1.14.2 (make release-manifests-all, core trio)"
copy sigs.k8s.io/cluster-api@v1.14.2 capi-src
copy sigs.k8s.io/cluster-api@v1.14.2 capi-pipe
P=$OUT/capi-pipe
capi_pipeline() {
	sedimage "$P/core/config/default" registry.k8s.io/cluster-api/cluster-api-controller:v1.14.2 IfNotPresent
	sedimage "$P/bootstrap/kubeadm/config/default" registry.k8s.io/cluster-api/kubeadm-bootstrap-controller:v1.14.2 IfNotPresent
	sedimage "$P/controlplane/kubeadm/config/default" registry.k8s.io/cluster-api/kubeadm-control-plane-controller:v1.14.2 IfNotPresent
	mkdir -p "$P/out"
	"$K" build "$P/core/config/default" >"$P/out/core-components.yaml"
	"$K" build "$P/bootstrap/kubeadm/config/default" >"$P/out/bootstrap-components.yaml"
	"$K" build "$P/controlplane/kubeadm/config/default" >"$P/out/control-plane-components.yaml"
	cp "$P/metadata.yaml" "$P/out/"
}
timed pipeline "$OUT/capi_pipeline.log" capi_pipeline
timed capirepo "$OUT/capi.log" timeout "$T" "$BIN/capirepo" build "$OUT/capi-src" --config "$ROOT/docs/configs/cluster-api.capirepo.yaml" --version v1.14.2 --out "$OUT/capi-dist"
for f in cluster-api/core-components.yaml bootstrap-kubeadm/bootstrap-components.yaml control-plane-kubeadm/control-plane-components.yaml; do
	same "$P/out/${f#*/}" "$OUT/capi-dist/${f%%/*}/v1.14.2/${f#*/}"
done
same "$P/out/metadata.yaml" "$OUT/capi-dist/cluster-api/v1.14.2/metadata.yaml"

echo "### CAPD v1.14.2 (make release-manifests-all: manifest-modification-dev, release-manifests-dev)"
copy sigs.k8s.io/cluster-api/test@v1.14.2 capd-src
copy sigs.k8s.io/cluster-api/test@v1.14.2 capd-pipe
P=$OUT/capd-pipe
capd_pipeline() {
	sedimage "$P/infrastructure/docker/config/default" gcr.io/k8s-staging-cluster-api/capd-manager:v1.14.2 IfNotPresent
	mkdir -p "$P/out"
	(cd "$P/infrastructure/docker" && "$K" build config/default >"$P/out/infrastructure-components-development.yaml")
	cp "$P"/infrastructure/docker/templates/* "$P/out/"
}
timed pipeline "$OUT/capd_pipeline.log" capd_pipeline
waive capd.capirepo.yaml >"$OUT/capd.capirepo.yaml"
timed capirepo "$OUT/capd.log" timeout "$T" "$BIN/capirepo" build "$OUT/capd-src" --config "$OUT/capd.capirepo.yaml" --version v1.14.2 --out "$OUT/capd-dist"
for f in "$P"/out/*; do
	same "$f" "$OUT/capd-dist/infrastructure-docker/v1.14.2/$(basename "$f")"
done

echo "### CAPA v2.13.0 (make release-manifests: compiled-manifest)"
copy sigs.k8s.io/cluster-api-provider-aws/v2@v2.13.0 capa-src
copy sigs.k8s.io/cluster-api-provider-aws/v2@v2.13.0 capa-pipe
P=$OUT/capa-pipe
capa_pipeline() {
	mkdir -p "$P/_artifacts/image-patch/infrastructure-components" "$P/out"
	D=$P/_artifacts/image-patch/infrastructure-components
	"$K" build "$P/config/default" >"$D/source-manifest.yaml"
	# What the two gojq steps write.
	cat >"$D/pull-policy-patch.yaml" <<-EOF
		- op: replace
		  path: /spec/template/spec/containers/0/imagePullPolicy
		  value: IfNotPresent
	EOF
	cat >"$D/kustomization.yaml" <<-EOF
		apiVersion: kustomize.config.k8s.io/v1beta1
		images:
		  - name: gcr.io/k8s-staging-cluster-api-aws/cluster-api-aws-controller
		    newName: registry.k8s.io/cluster-api-aws/cluster-api-aws-controller
		    newTag: v2.13.0
		kind: Kustomization
		patchesJson6902:
		  - path: pull-policy-patch.yaml
		    target:
		      group: apps
		      kind: Deployment
		      name: capa-controller-manager
		      namespace: capa-system
		      version: v1
		resources:
		  - source-manifest.yaml
	EOF
	"$K" build "$D" >"$P/out/infrastructure-components.yaml"
	cp "$P/metadata.yaml" "$P/out/"
	cp "$P"/templates/*.yaml "$P/out/" # goreleaser's extra_files: ./templates/*.yaml
}
timed pipeline "$OUT/capa_pipeline.log" capa_pipeline
waive capa.capirepo.yaml >"$OUT/capa.capirepo.yaml"
timed capirepo "$OUT/capa.log" timeout "$T" "$BIN/capirepo" build "$OUT/capa-src" --config "$OUT/capa.capirepo.yaml" --version v2.13.0 --out "$OUT/capa-dist"
for f in "$P"/out/*; do
	same "$f" "$OUT/capa-dist/infrastructure-aws/v2.13.0/$(basename "$f")"
done

echo "### CAPG v1.13.1 (make release: set-manifest-image, set-manifest-pull-policy, release-manifests, release-templates)"
copy sigs.k8s.io/cluster-api-provider-gcp@v1.13.1 capg-src
copy sigs.k8s.io/cluster-api-provider-gcp@v1.13.1 capg-pipe
P=$OUT/capg-pipe
capg_pipeline() {
	sedimage "$P/config/default" registry.k8s.io/cluster-api-gcp/cluster-api-gcp-controller:v1.13.1 IfNotPresent
	mkdir -p "$P/out"
	"$K" build "$P/config/default" >"$P/out/infrastructure-components.yaml"
	cp "$P/metadata.yaml" "$P/out/"
	cp "$P"/templates/cluster-template* "$P/out/"
}
timed pipeline "$OUT/capg_pipeline.log" capg_pipeline
waive capg.capirepo.yaml >"$OUT/capg.capirepo.yaml"
timed capirepo "$OUT/capg.log" timeout "$T" "$BIN/capirepo" build "$OUT/capg-src" --config "$OUT/capg.capirepo.yaml" --version v1.13.1 --out "$OUT/capg-dist"
for f in "$P"/out/*; do
	same "$f" "$OUT/capg-dist/infrastructure-gcp/v1.13.1/$(basename "$f")"
done

if [ "$fail" != 0 ]; then
	echo "real trees: capirepo's release DIFFERS from the maintainers' pipeline" >&2
	exit 1
fi
echo "real trees: every file the maintainers' pipeline writes is byte-identical in capirepo's release"
