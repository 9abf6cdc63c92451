#!/bin/bash
# Prepares a node for kubeadm init/join; the release uploads it beside the templates.
set -euo pipefail
K8S_VERSION=$1
echo "installing kubeadm ${K8S_VERSION}"
