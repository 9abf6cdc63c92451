#!/usr/bin/env bash
# capirepo against the pipeline maintainers use today (one `kustomize build`
# process per provider and per flavor, then cp), plus the publish and growth
# benchmarks. Everything runs locally; the only network use is the Go module
# proxy for the kustomize CLI on the first run. Bounded: every command has a
# timeout and the whole run takes well under 15 minutes on 2 cores.
#
#   bash bench/run.sh            # or: make bench
#   ROUNDS=7 bash bench/run.sh   # more rounds
#   SKIP_GROWTH=1 SKIP_PUBLISH=1 SKIP_GOBENCH=1 SKIP_REALTREES=1 SKIP_REALPAIRS=1 SKIP_INSTALL=1 bash bench/run.sh
#   SETS=cluster-api ROUNDS=11 SKIP_GROWTH=1 SKIP_PUBLISH=1 SKIP_GOBENCH=1 bash bench/run.sh
#
# Results: bench/out/results-<UTC date>.txt (and the raw samples beside it).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/bench/out
BIN=$OUT/bin
ROUNDS=${ROUNDS:-5}
GROWTH_ROUNDS=${GROWTH_ROUNDS:-3}
SETS=${SETS:-example cluster-api large} # render sets to run
KUSTOMIZE_VERSION=v5.8.2
CAPI=${CAPI:-$(go env GOMODCACHE)/sigs.k8s.io/cluster-api@v1.14.2}
EXAMPLE=$ROOT/examples/infrastructure-example
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RESULTS=$OUT/results-$STAMP.txt
RAW=$OUT/raw-$STAMP.txt
T=${CMD_TIMEOUT:-600} # seconds, per command

mkdir -p "$BIN" "$OUT/tmp"
: >"$RAW"
exec > >(tee "$RESULTS") 2>&1

if [ ! -x /usr/bin/time ]; then
	echo "installing GNU time (peak memory)"
	apt-get update -qq && apt-get install -y -qq time >/dev/null
fi

echo "# capirepo benchmarks $STAMP"
echo "machine: $(nproc) cores, $(free -h | awk '/^Mem:/{print $2}') memory, $(uname -sr), $(go version | cut -d' ' -f3-)"
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg) (the machine may be shared)"
echo "rounds: $ROUNDS (contenders alternate, start rotates each round); growth rounds: $GROWTH_ROUNDS"
echo

echo "## setup"
timeout "$T" go build -o "$BIN/capirepo" ./cmd/capirepo
if [ ! -x "$BIN/kustomize" ] || ! "$BIN/kustomize" version 2>/dev/null | grep -q "${KUSTOMIZE_VERSION#v}"; then
	GOBIN=$BIN timeout "$T" go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
fi
echo "kustomize $("$BIN/kustomize" version)"
# capirepo-kyaml: the same capirepo linked against kyaml v0.21.2 with
# bench/patches/kyaml-v0.21.2-deanchor-skip-merge.diff applied, through a
# scratch go.mod (-modfile) whose replace points at a patched copy of the
# module cache's kyaml under bench/out. Nothing in the repository's go.mod
# changes: this measures the patch end to end so the team can decide on it.
if [ -z "${SKIP_KYAML_PATCH:-}" ]; then
	KYAML_SRC=$(go env GOMODCACHE)/sigs.k8s.io/kustomize/kyaml@v0.21.2
	[ -d "$KYAML_SRC" ] || timeout "$T" go mod download sigs.k8s.io/kustomize/kyaml@v0.21.2
	rm -rf "$OUT/kyaml-patched"
	cp -r "$KYAML_SRC" "$OUT/kyaml-patched"
	chmod -R u+w "$OUT/kyaml-patched"
	(cd "$OUT/kyaml-patched" && git apply -p2 "$ROOT/bench/patches/kyaml-v0.21.2-deanchor-skip-merge.diff")
	grep -q hasDuplicateKeys "$OUT/kyaml-patched/yaml/rnode.go" || {
		echo "the kyaml patch did not apply" >&2
		exit 1
	}
	cp go.mod "$OUT/kyaml-patched.mod"
	cp go.sum "$OUT/kyaml-patched.sum"
	go mod edit -modfile="$OUT/kyaml-patched.mod" -replace "sigs.k8s.io/kustomize/kyaml=$OUT/kyaml-patched"
	timeout "$T" go build -modfile="$OUT/kyaml-patched.mod" -o "$BIN/capirepo-kyaml" ./cmd/capirepo
	echo "capirepo-kyaml: built with the kyaml DeAnchor patch (scratch -modfile, not the repository's go.mod)"
fi
timeout "$T" go run ./bench/gen -example "$EXAMPLE" -out "$OUT/large" -scale 1
echo "identity: the builder's fast render and variable scan against plain krusty + AsYaml and clusterctl, on the example, cluster-api and large"
CAPIREPO_TEST_LARGE=1 timeout "$T" go test ./builder/ -run 'TestRender_FastPathSameBytesAsKrusty|TestVariableMap_SameAsClusterctl' -count 1
echo "large provider: $(find "$OUT/large/config/crd/bases" -name '*.yaml' | wc -l) CRDs, $(find "$OUT/large/templates/flavors" -mindepth 1 -maxdepth 1 -type d | grep -cv /base$) flavors"
echo

# pipeline DIR VERSION OUT JOBS LABEL=KUSTOMIZE=COMPONENTS... : the usual
# release-manifests job. JOBS=1 runs one kustomize process after another as
# Makefiles do; JOBS=par starts them all and waits.
pipeline() {
	local dir=$1 version=$2 out=$3 jobs=$4
	shift 4
	rm -rf "$out"
	local spec label kdir file dest f name
	for spec in "$@"; do
		IFS='=' read -r label kdir file <<<"$spec"
		dest=$out/$label/$version
		mkdir -p "$dest"
		if [ "$jobs" = par ]; then
			"$BIN/kustomize" build "$dir/$kdir" >"$dest/$file" &
		else
			"$BIN/kustomize" build "$dir/$kdir" >"$dest/$file"
		fi
		cp "$dir/metadata.yaml" "$dest/"
		if [ -d "$dir/templates" ]; then
			for f in "$dir"/templates/*.yaml; do
				[ -e "$f" ] && cp "$f" "$dest/"
			done
			for f in "$dir"/templates/flavors/*/; do
				name=$(basename "$f")
				[ "$name" = base ] && continue
				if [ "$jobs" = par ]; then
					"$BIN/kustomize" build "$f" >"$dest/cluster-template-$name.yaml" &
				else
					"$BIN/kustomize" build "$f" >"$dest/cluster-template-$name.yaml"
				fi
			done
		fi
	done
	wait
}
export -f pipeline
export BIN

# sample SET NAME CMD...: one timed run; appends "SET NAME wall_s maxrss_kb cpu_s"
# (cpu = user + system of the process and its children: less sensitive than
# wall time to other load on a shared machine).
sample() {
	local set=$1 name=$2
	shift 2
	local tf=$OUT/tmp/time
	if ! timeout "$T" /usr/bin/time -f '%e %M %U %S' -o "$tf" "$@" >/dev/null 2>"$OUT/tmp/stderr"; then
		echo "FAILED: $set $name: $*" >&2
		cat "$OUT/tmp/stderr" >&2
		exit 1
	fi
	read -r wall rss usr sys <"$tf"
	echo "$set $name $wall $rss $(awk -v u="$usr" -v s="$sys" 'BEGIN{printf "%.2f", u + s}')" >>"$RAW"
}

# summarise SET BASELINE: medians, min-max and ratios against BASELINE.
summarise() {
	local set=$1 base=$2
	awk -v set="$set" -v base="$base" '
	function median(a, n,   i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	$1 == set {
		n[$2]++; w[$2, n[$2]] = $3; m[$2, n[$2]] = $4 / 1024; u[$2, n[$2]] = $5
		if (!($2 in seen)) { seen[$2] = 1; order[++k] = $2 }
	}
	END {
		for (c = 1; c <= k; c++) {
			name = order[c]
			for (i = 1; i <= n[name]; i++) { ww[i] = w[name, i]; mm[i] = m[name, i]; uu[i] = u[name, i] }
			mu[name] = median(uu, n[name])
			mw[name] = median(ww, n[name]); lo[name] = ww[1]; hi[name] = ww[n[name]]
			mr[name] = median(mm, n[name]); rlo[name] = mm[1]; rhi[name] = mm[n[name]]
		}
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", "contender", "n", "wall median", "wall min-max", "wall / " base, "CPU median", "CPU / " base, "peak MiB", "MiB min-max", "MiB / " base
		printf "|%s|\n", "----------------|----|-------------|-----------------|---------|-----------|---------|----------|-------------|---------"
		for (c = 1; c <= k; c++) {
			name = order[c]
			printf "| %-14s | %2d | %9.2f s | %6.2f - %6.2f | %6.2fx | %7.2f s | %6.2fx | %8.0f | %4.0f - %4.0f | %6.2fx |\n", name, n[name], mw[name], lo[name], hi[name], mw[name] / mw[base], mu[name], mu[name] / mu[base], mr[name], rlo[name], rhi[name], mr[name] / mr[base]
		}
	}' "$RAW"
}

# compare SET CONTENDER... : ROUNDS rounds, each running every contender once;
# the first contender of a round rotates. A contender is "name:command".
compare() {
	local set=$1
	shift
	local cs=("$@") n=$# r i j
	# One untimed run each: page cache and the binaries warm, as in CI on a second job.
	for ((i = 0; i < n; i++)); do bash -c "${cs[i]#*:}" >/dev/null 2>&1 || true; done
	for ((r = 0; r < ROUNDS; r++)); do
		for ((j = 0; j < n; j++)); do
			i=$(((r + j) % n))
			sample "$set" "${cs[i]%%:*}" bash -c "${cs[i]#*:}"
		done
	done
}

CORE="cluster-api=core/config/default=core-components.yaml"
BOOT="bootstrap-kubeadm=bootstrap/kubeadm/config/default=bootstrap-components.yaml"
CP="control-plane-kubeadm=controlplane/kubeadm/config/default=control-plane-components.yaml"
EX="infrastructure-example=config/default=infrastructure-components.yaml"
LG="infrastructure-large=config/default=infrastructure-components.yaml"

echo "## render"
echo "contenders: capirepo = \`capirepo build D --version V --out O\` (one process, every provider and flavor);"
echo "pipeline-seq = one \`kustomize build\` process per provider and per flavor, one after another, then cp metadata.yaml and templates/*.yaml;"
echo "pipeline-par = the same processes all started at once, then wait; kustomize = a single \`kustomize build\` of the largest provider's config/default (the memory yardstick)."
echo
for set in $SETS; do
	case $set in
	example) dir=$EXAMPLE ver=v0.1.0 specs=("$EX") one=$EXAMPLE/config/default ;;
	cluster-api) dir=$CAPI ver=v1.14.2 specs=("$CORE" "$BOOT" "$CP") one=$CAPI/core/config/default ;;
	large) dir=$OUT/large ver=v0.1.0 specs=("$LG") one=$OUT/large/config/default ;;
	esac
	extra=()
	[ -x "$BIN/capirepo-kyaml" ] && [ -z "${SKIP_KYAML_PATCH:-}" ] &&
		extra=("capirepo-kyaml:$BIN/capirepo-kyaml build $dir --version $ver --out $OUT/tmp/capirepo-kyaml-$set")
	compare "$set" \
		"capirepo:$BIN/capirepo build $dir --version $ver --out $OUT/tmp/capirepo-$set" \
		"${extra[@]}" \
		"pipeline-seq:pipeline $dir $ver $OUT/tmp/seq-$set 1 ${specs[*]}" \
		"pipeline-par:pipeline $dir $ver $OUT/tmp/par-$set par ${specs[*]}" \
		"kustomize:$BIN/kustomize build $one"
	echo "### $set"
	summarise "$set" pipeline-seq
	if [ -n "${extra[*]}" ]; then
		if diff -r "$OUT/tmp/capirepo-$set" "$OUT/tmp/capirepo-kyaml-$set" >/dev/null; then
			echo "capirepo-kyaml output: identical to capirepo's (diff -r of the dist folders)"
		else
			echo "capirepo-kyaml output: DIFFERS from capirepo's" >&2
			exit 1
		fi
	fi
	echo
done

# Peak RSS counts the file-backed pages of the binary that the process maps.
# On kernels that keep a binary's page cache in large folios, they are mapped
# whole (FilePmdMapped in /proc/PID/smaps_rollup), so a 94 MB binary costs
# its full text and rodata even for `capirepo version`. Running copies of
# both binaries from a tmpfs without huge pages maps only what is touched
# (plus fault-around) for every contender alike: the second memory table.
SHM=/dev/shm/capirepo-bench
if [ -z "${SKIP_SHM:-}" ] && [ -d /dev/shm ] && ! grep -q '\[always\]\|\[within_size\]\|\[force\]' /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null; then
	echo "## peak memory, binaries run from $SHM (tmpfs, small pages)"
	rm -rf "$SHM" && mkdir -p "$SHM"
	cp "$BIN/capirepo" "$BIN/kustomize" "$SHM/"
	[ -x "$BIN/capirepo-kyaml" ] && cp "$BIN/capirepo-kyaml" "$SHM/"
	for set in $SETS; do
		case $set in
		example) dir=$EXAMPLE ver=v0.1.0 one=$EXAMPLE/config/default ;;
		cluster-api) dir=$CAPI ver=v1.14.2 one=$CAPI/core/config/default ;;
		large) dir=$OUT/large ver=v0.1.0 one=$OUT/large/config/default ;;
		esac
		extra=()
		[ -x "$SHM/capirepo-kyaml" ] && extra=("capirepo-kyaml:$SHM/capirepo-kyaml build $dir --version $ver --out $OUT/tmp/shm-kyaml-$set")
		compare "shm-$set" \
			"capirepo:$SHM/capirepo build $dir --version $ver --out $OUT/tmp/shm-$set" \
			"${extra[@]}" \
			"kustomize:$SHM/kustomize build $one"
		echo "### $set (small pages)"
		summarise "shm-$set" kustomize
		echo
	done
	rm -rf "$SHM"
fi

if [ -z "${SKIP_REALTREES:-}" ]; then
	# The real trees against their maintainers' pipelines (kustomize CLI): same bytes, and the time of each.
	BIN=$BIN bash bench/realtrees.sh
	echo
fi

if [ -z "${SKIP_GROWTH:-}" ]; then
	echo "## growth (capirepo build of the large provider at 1x, 2x, 4x, 8x: CRDs and flavors multiplied)"
	for s in 1 2 4 8; do
		timeout "$T" go run ./bench/gen -example "$EXAMPLE" -out "$OUT/large-x$s" -scale "$s"
	done
	for ((r = 0; r < GROWTH_ROUNDS; r++)); do
		for s in 1 2 4 8; do
			sample growth "x$s" "$BIN/capirepo" build "$OUT/large-x$s" --version v0.1.0 --out "$OUT/tmp/growth-x$s"
		done
	done
	for s in 1 2 4 8; do
		bytes=$(stat -c %s "$OUT/tmp/growth-x$s/infrastructure-large/v0.1.0/infrastructure-components.yaml")
		echo "growth-size x$s $bytes" >>"$RAW"
	done
	summarise growth x1
	awk '
	$1 == "growth" { n[$2]++; w[$2, n[$2]] = $3; m[$2, n[$2]] = $4 / 1024 }
	$1 == "growth-size" { sz[$2] = $3 / 1048576 }
	function median(a, n,   i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		# least-squares line through (MB, median) for time and memory; r^2 says how linear.
		split("x1 x2 x4 x8", xs, " ")
		for (i = 1; i <= 4; i++) {
			s = xs[i]
			for (j = 1; j <= n[s]; j++) { a[j] = w[s, j]; b[j] = m[s, j] }
			x[i] = sz[s]; yt[i] = median(a, n[s]); ym[i] = median(b, n[s])
			printf "%s: %.1f MB of components, %.2f s, %.0f MiB, %.3f s/MB, %.1f MiB/MB\n", s, x[i], yt[i], ym[i], yt[i] / x[i], ym[i] / x[i]
		}
		fit("time s", x, yt); fit("peak MiB", x, ym)
	}
	function fit(name, x, y,   i, sx, sy, sxx, sxy, syy, k, c, r2) {
		for (i = 1; i <= 4; i++) { sx += x[i]; sy += y[i]; sxx += x[i] * x[i]; sxy += x[i] * y[i]; syy += y[i] * y[i] }
		k = (4 * sxy - sx * sy) / (4 * sxx - sx * sx); c = (sy - k * sx) / 4
		r2 = (4 * sxy - sx * sy) ^ 2 / ((4 * sxx - sx * sx) * (4 * syy - sy * sy))
		printf "fit %s = %.3f * MB + %.2f, r^2 = %.4f\n", name, k, c, r2
	}' "$RAW"
	echo
fi

if [ -z "${SKIP_PUBLISH:-}" ]; then
	echo "## publish (fake GitHub and GitLab on 127.0.0.1, 100 ms per request)"
	CAPIREPO_BENCH_PUBLISH=1 ROUNDS=$ROUNDS timeout "$T" go test ./bench/publish -run 'TestPublishTimes|TestRepublish' -v -count 1 |
		grep -v '^=== RUN'
	echo
fi

if [ -z "${SKIP_MIRROR:-}" ]; then
	echo "## mirror (clusterctl's providers x 3 versions from the fake GitHub, 100 ms per request, into a folder)"
	CAPIREPO_BENCH_MIRROR=1 timeout "$T" go test ./bench/mirror -run 'TestMirrorTimes' -v -count 1 |
		grep -v '^=== RUN'
	echo
fi

if [ -z "${SKIP_GOBENCH:-}" ]; then
	echo "## go test -bench (builder hot paths)"
	CAPIREPO_BENCH_LARGE=$OUT/large timeout "$T" go test ./builder/ -run '^$' -bench . -benchtime 2x -count 3
	echo
	echo "## go test -bench (diff of two cluster-api core releases, v1.13.0 to v1.14.2)"
	timeout "$T" go test ./diff/ -run '^$' -bench Compare_ClusterAPI -benchtime 5x -count 5
	echo
fi

if [ -z "${SKIP_REALPAIRS:-}" ]; then
	echo "## upgrade check on real release pairs (cluster-api, CAPA, CAPG; go test -tags realpairs)"
	timeout "$T" go test -tags realpairs ./diff/ -run 'TestCompare_RealPairs' -v -count 1 | grep -E '^(---|ok|FAIL|\s+---)'
	echo
fi

if [ -z "${SKIP_INSTALL:-}" ]; then
	echo "## install check against a warm in-process API server (example, cluster-api's trio, CAPA; test/apiserver)"
	(cd test/apiserver && timeout "$T" go test -run '^$' -bench InstallCheck -benchtime 3x -count 1 \
		-ldflags "-X k8s.io/component-base/version.gitVersion=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)" .) |
		grep -E '^(Benchmark|ok|FAIL|---)'
	echo
	echo "## upgrade rehearsal against a warm in-process API server (example v0.1.0 -> v0.1.1, clean and failing; test/apiserver)"
	(cd test/apiserver && timeout "$T" go test -run '^$' -bench Rehearsal -benchtime 2x -count 1 \
		-ldflags "-X k8s.io/component-base/version.gitVersion=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)" .) |
		grep -E '^(Benchmark|ok|FAIL|---)'
	echo
fi

echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "raw samples: $RAW"
echo "results: $RESULTS"
