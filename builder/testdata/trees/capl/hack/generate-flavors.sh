#!/bin/bash
# The maintainers' flavor generation, as the fixture test reproduces it.
set -euo pipefail
FLAVORS_DIR=templates/flavors
for distro in kubeadm k3s; do
  for name in $(find "${FLAVORS_DIR}/${distro}/"* -maxdepth 0 -type d -print0 | xargs -0 -I {} basename {}); do
    if [[ ${name} == "default" ]]; then
      kustomize build "${FLAVORS_DIR}/${distro}/${name}" > "templates/cluster-template-${distro}.yaml"
    else
      kustomize build "${FLAVORS_DIR}/${distro}/${name}" > "templates/cluster-template-${distro}-${name}.yaml"
    fi
  done
done
sed -i -e "s|\${CERTPATH}|/var/lib/rancher/k3s/server/tls|g" templates/cluster-template-k3s-etcd-backup.yaml
kustomize build "${FLAVORS_DIR}/dual-stack" > templates/cluster-template-dual-stack.yaml
mv templates/cluster-template-kubeadm.yaml templates/cluster-template.yaml
