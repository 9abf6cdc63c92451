package builder

import (
	"strings"
	"testing"

	"github.com/capirepo/capirepo/internal/testtree"
)

const k3sTemplate = `apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: ${CLUSTER_NAME}
spec:
  controlPlaneRef:
    apiGroup: controlplane.cluster.x-k8s.io
    kind: KThreesControlPlane
    name: ${CLUSTER_NAME}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KThreesControlPlane
metadata:
  name: ${CLUSTER_NAME}
spec:
  files:
  - path: ${CERTPATH}/etcd/ca.crt
    content: x
`

// TestBuild_TemplatePatchesApplyToTheFilesTheirGlobNames: a release patch
// with file: edits the templates it names, in place (object order kept),
// and no other file; the components are patched only by patches without
// file (issue 31).
func TestBuild_TemplatePatchesApplyToTheFilesTheirGlobNames(t *testing.T) {
	files := testtree.Minimal(map[string]string{
		"templates/cluster-template-k3s-etcd.yaml": k3sTemplate,
		"templates/cluster-template-kubeadm.yaml":  strings.ReplaceAll(k3sTemplate, "KThrees", "Kubeadm"),
		"hack/k3s-certpath.yaml":                   "- op: replace\n  path: /spec/files/0/path\n  value: /var/lib/rancher/k3s/server/tls/etcd/ca.crt\n",
		"capirepo.yaml": `providers:
- name: infrastructure-test
  patches:
  - path: hack/k3s-certpath.yaml
    file: cluster-template-k3s-*.yaml
    target: {kind: KThreesControlPlane}
  - patch: "- op: add\n  path: /metadata/annotations\n  value: {patched: \"yes\"}\n"
    target: {kind: Deployment}
  - patch: "- op: add\n  path: /metadata/annotations\n  value: {never: \"yes\"}\n"
    file: cluster-template-rke2-*.yaml
    target: {kind: Cluster}
  - patch: "- op: add\n  path: /metadata/labels\n  value: {everywhere: \"yes\"}\n"
    file: "*"
    target: {kind: Cluster}
  templates:
    files: {setup.sh: hack/setup.sh}
`,
		"hack/setup.sh": "#!/bin/sh\necho ${CERTPATH}\n",
	})
	res := mustBuild(t, testtree.Write(t, files), Options{})
	p := res.Release.Providers[0]
	k3s, _ := p.File("cluster-template-k3s-etcd.yaml")
	if !strings.Contains(string(k3s.Data), "path: /var/lib/rancher/k3s/server/tls/etcd/ca.crt") || strings.Contains(string(k3s.Data), "${CERTPATH}") {
		t.Errorf("the k3s template is not patched:\n%s", k3s.Data)
	}
	if strings.Index(string(k3s.Data), "kind: Cluster\n") > strings.Index(string(k3s.Data), "kind: KThreesControlPlane") {
		t.Errorf("the patched template's objects were reordered:\n%s", k3s.Data)
	}
	kubeadm, _ := p.File("cluster-template-kubeadm.yaml")
	if strings.Contains(string(kubeadm.Data), "/var/lib/rancher") {
		t.Errorf("a template the glob does not name got the k3s patch:\n%s", kubeadm.Data)
	}
	comps := string(p.Components().Data)
	if !strings.Contains(comps, "patched: \"yes\"") || strings.Contains(comps, "${CERTPATH}") || strings.Contains(string(k3s.Data), "patched:") {
		t.Errorf("the components patch reached the wrong files")
	}
	if sh, _ := p.File("setup.sh"); string(sh.Data) != files["hack/setup.sh"] {
		t.Errorf("a patch for every file changed the script: %q", sh.Data)
	}
	if !strings.Contains(string(kubeadm.Data), "everywhere") {
		t.Errorf("a patch for every file missed a template:\n%s", kubeadm.Data)
	}
	if !hasWarning(res.Warnings, `patches[2].file "cluster-template-rke2-*.yaml" matches no release file`) {
		t.Errorf("no warning for the patch that matches nothing: %v", res.Warnings)
	}
}
