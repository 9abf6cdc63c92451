package builder

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/internal/clusterctlvars"
	"github.com/capirepo/capirepo/internal/testtree"
)

// k3sEtcdTemplate has what a k3s release script fills with sed: etcd
// certificate paths inside a ConfigMap's embedded manifest, where a JSON 6902
// patch reaches them only by replacing the whole manifest.
const k3sEtcdTemplate = `apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: ${CLUSTER_NAME}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${CLUSTER_NAME}-etcd-backup
data:
  backup.yaml: |
    apiVersion: batch/v1
    kind: CronJob
    spec:
      jobTemplate:
        spec:
          template:
            spec:
              containers:
              - name: backup
                args:
                - --cacert=${CERTPATH}/${CACERTFILE:=etcd/server-ca.crt}
                - --cert=${CERTPATH}/${CERTFILE}
                - --key=${CERTPATH}/${KEYFILE}
                - --literal=$${CERTPATH}
`

// TestBuild_TemplatesSetFillsVariablesAfterRendering: templates.set fills the
// named variables in the files its pattern matches, inside embedded strings
// too, defaults and all, after the flavor renders; the filled variables are
// no longer variables of the file (clusterctl generate cluster does not ask
// for them), an escaped one stays, other files keep theirs, and an entry
// that matches nothing or a value nothing uses is a warning.
func TestBuild_TemplatesSetFillsVariablesAfterRendering(t *testing.T) {
	files := testtree.Minimal(map[string]string{
		"templates/flavors/k3s-etcd/kustomization.yaml": "resources: [cluster.yaml]\n",
		"templates/flavors/k3s-etcd/cluster.yaml":       k3sEtcdTemplate,
		"templates/cluster-template-rke2.yaml":          k3sEtcdTemplate,
		"capirepo.yaml": `providers:
- name: infrastructure-test
  templates:
    dir: templates
    set:
    - file: cluster-template-k3s-*.yaml
      values: {CERTPATH: /var/lib/rancher/k3s/server/tls, CACERTFILE: etcd/server-ca.crt, CERTFILE: etcd/client.crt, KEYFILE: etcd/client.key, UNUSED: x}
    - file: cluster-template-eks-*.yaml
      values: {CERTPATH: /etc/eks}
`,
	})
	res := mustBuild(t, testtree.Write(t, files), Options{})
	p := res.Release.Providers[0]
	k3s, ok := p.File("cluster-template-k3s-etcd.yaml")
	if !ok {
		t.Fatalf("no k3s flavor: %v", p.Files)
	}
	for _, want := range []string{
		"--cacert=/var/lib/rancher/k3s/server/tls/etcd/server-ca.crt",
		"--cert=/var/lib/rancher/k3s/server/tls/etcd/client.crt",
		"--key=/var/lib/rancher/k3s/server/tls/etcd/client.key",
		"--literal=$${CERTPATH}",
	} {
		if !strings.Contains(string(k3s.Data), want) {
			t.Errorf("the k3s flavor lacks %q:\n%s", want, k3s.Data)
		}
	}
	vars, err := clusterctlvars.Map(k3s.Data)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(func(yield func(string) bool) {
		for k := range vars {
			if !yield(k) {
				return
			}
		}
	}); !slices.Equal(got, []string{"CLUSTER_NAME"}) {
		t.Errorf("variables of the filled flavor: %v, want only CLUSTER_NAME", got)
	}
	rke2, _ := p.File("cluster-template-rke2.yaml")
	if string(rke2.Data) != k3sEtcdTemplate {
		t.Errorf("a file the pattern does not match was filled:\n%s", rke2.Data)
	}
	want := []string{
		`infrastructure-test: templates.set[0] fills UNUSED, which no file "cluster-template-k3s-*.yaml" matches uses; remove it or fix the name`,
		`infrastructure-test: templates.set[1].file "cluster-template-eks-*.yaml" matches no release file; fix the pattern or remove the entry`,
	}
	var got []string
	for _, w := range res.Warnings {
		if strings.Contains(w, "templates.set") {
			got = append(got, w)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
