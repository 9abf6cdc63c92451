#!/usr/bin/env bash
# Prints `go mod edit` flags that replace k8s.io/kubernetes' staging modules
# with their published versions: k8s.io/kubernetes vX.Y.Z -> k8s.io/<name> v0.Y.Z.
# Only the staging modules that kubernetes' go.mod requires are replaced
# (it also replaces sample-cli-plugin and sample-controller, which it does not
# require; sample-cli-plugin v0.36.3 is not on the proxy).
# usage: go mod edit $(./gen-replaces.sh v1.36.3)
set -euo pipefail
kver=${1:?kubernetes version, e.g. v1.36.3}
sver=v0.${kver#v1.}
mod=$(go mod download -json "k8s.io/kubernetes@$kver" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
awk -v v="$sver" '
  /^require[[:space:]]*\(/ { inreq = 1; next }
  /^replace[[:space:]]*\(/ { inrep = 1; next }
  /^\)/ { inreq = 0; inrep = 0; next }
  inreq && $2 == "v0.0.0" { req[$1] = 1 }
  inrep && $3 ~ /^\.\/staging\/src\// && ($1 in req) { printf "-replace=%s=%s@%s\n", $1, $1, v }
' "$mod"
