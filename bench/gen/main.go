// Command gen writes a large synthetic Cluster API provider tree for the
// render benchmarks: the bundled example's RBAC, manager, webhook and
// cert-manager config, plus generated CRDs with large OpenAPI schemas, a
// conversion-webhook patch per CRD, a config/default kustomization shaped like
// cluster-api's (namespace, namePrefix, labels, patches, replacements) and
// generated flavors under templates/flavors/<name>/.
//
// At -scale 1 it writes 80 CRDs and 20 flavors, about 10 MB of components,
// the size of the largest real providers; -scale N multiplies both.
//
//	go run ./bench/gen -example examples/infrastructure-example -out bench/out/large -scale 1
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	example := flag.String("example", "examples/infrastructure-example", "example provider whose config is copied")
	out := flag.String("out", "bench/out/large", "output tree (replaced)")
	scale := flag.Int("scale", 1, "multiplies the number of CRDs (80) and flavors (20)")
	flag.Parse()
	if *scale < 1 {
		log.Fatal("-scale must be at least 1")
	}
	if err := generate(*example, *out, 80**scale, 20**scale); err != nil {
		log.Fatal(err)
	}
}

func generate(example, out string, crds, flavors int) error {
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	// Copied as they are: a real provider's RBAC, manager, webhook and
	// cert-manager config, its metadata and its flavor base.
	for _, d := range []string{"config/rbac", "config/manager", "config/webhook", "config/certmanager", "templates/flavors/base"} {
		if err := copyTree(filepath.Join(example, d), filepath.Join(out, d)); err != nil {
			return err
		}
	}
	for _, f := range []string{"metadata.yaml", "config/default/manager_webhook_patch.yaml", "config/default/webhookcainjection_patch.yaml"} {
		if err := copyFile(filepath.Join(example, f), filepath.Join(out, f)); err != nil {
			return err
		}
	}
	w := writer{root: out}

	var res, patches strings.Builder
	for i := range crds {
		k := kind(i)
		file := fmt.Sprintf("bases/infrastructure.cluster.x-k8s.io_%ss.yaml", strings.ToLower(k))
		fmt.Fprintf(&res, "- %s\n", file)
		fmt.Fprintf(&patches, "- path: patches/webhook_in_%ss.yaml\n", strings.ToLower(k))
		w.write("config/crd/"+file, crd(i))
		w.write(fmt.Sprintf("config/crd/patches/webhook_in_%ss.yaml", strings.ToLower(k)), conversionPatch(k))
	}
	w.write("config/crd/kustomization.yaml", "labels:\n- pairs:\n    cluster.x-k8s.io/v1beta2: v1beta1_v1beta2\n\nresources:\n"+res.String()+
		"\npatches:\n"+patches.String()+"\nconfigurations:\n- kustomizeconfig.yaml\n")
	w.write("config/crd/kustomizeconfig.yaml", crdKustomizeConfig)
	w.write("config/default/kustomization.yaml", defaultKustomization)

	for i := range flavors {
		name := fmt.Sprintf("flavor-%02d", i)
		w.write("templates/flavors/"+name+"/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../base\n- machine-health-check.yaml\npatches:\n- path: patches/cluster.yaml\n")
		w.write("templates/flavors/"+name+"/machine-health-check.yaml", fmt.Sprintf(mhc, i))
		w.write("templates/flavors/"+name+"/patches/cluster.yaml", fmt.Sprintf(clusterPatch, i%4+1))
	}
	return w.err
}

type writer struct {
	root string
	err  error
}

func (w *writer) write(rel, data string) {
	if w.err != nil {
		return
	}
	p := filepath.Join(w.root, filepath.FromSlash(rel))
	if w.err = os.MkdirAll(filepath.Dir(p), 0o755); w.err == nil {
		w.err = os.WriteFile(p, []byte(data), 0o644)
	}
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		return copyFile(p, filepath.Join(dst, rel))
	})
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

var words = strings.Fields(`machine cluster provider network subnet zone region volume disk image
	template bootstrap control plane worker node pool replica instance address gateway route
	security group identity secret credential endpoint port balancer tag label annotation
	condition phase status reason message version failure domain placement affinity`)

func kind(i int) string {
	w := words[i%len(words)]
	return fmt.Sprintf("Large%s%s%02d", strings.ToUpper(w[:1]), w[1:], i)
}

// crd is one CustomResourceDefinition in controller-gen's layout with two
// served versions, each with a schema of about 60 KB.
func crd(i int) string {
	k := kind(i)
	plural := strings.ToLower(k) + "s"
	var b strings.Builder
	fmt.Fprintf(&b, `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    controller-gen.kubebuilder.io/version: v0.21.0
  name: %s.infrastructure.cluster.x-k8s.io
spec:
  group: infrastructure.cluster.x-k8s.io
  names:
    categories:
    - cluster-api
    kind: %s
    listKind: %sList
    plural: %s
    singular: %s
  scope: Namespaced
  versions:
`, plural, k, k, plural, strings.ToLower(k))
	for v, name := range []string{"v1beta1", "v1beta2"} {
		fmt.Fprintf(&b, `  - additionalPrinterColumns:
    - description: Cluster to which this %s belongs
      jsonPath: .metadata.labels['cluster\.x-k8s\.io/cluster-name']
      name: Cluster
      type: string
    - description: Time duration since creation of %s
      jsonPath: .metadata.creationTimestamp
      name: Age
      type: date
    name: %s
    schema:
      openAPIV3Schema:
        description: %s is the Schema for the %s API.
        properties:
          apiVersion:
            description: |-
              APIVersion defines the versioned schema of this representation of an object.
              Servers should convert recognized schemas to the latest internal value, and
              may reject unrecognized values.
              More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources
            type: string
          kind:
            description: |-
              Kind is a string value representing the REST resource this object represents.
              Servers may infer this from the endpoint the client submits requests to.
              Cannot be updated.
              In CamelCase.
              More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
            type: string
          metadata:
            type: object
          spec:
            description: spec defines the desired state of %s.
`, k, k, name, k, plural, k)
		object(&b, 12, 0, i*7+v)
		b.WriteString(`          status:
            description: status defines the observed state.
            properties:
              conditions:
                description: conditions represents the observations of the current state.
                items:
                  description: Condition contains details for one aspect of the current
                    state of this API Resource.
                  properties:
                    lastTransitionTime:
                      description: |-
                        lastTransitionTime is the last time the condition transitioned from one status to another.
                        This should be when the underlying condition changed.
                      format: date-time
                      type: string
                    message:
                      maxLength: 32768
                      type: string
                    reason:
                      maxLength: 1024
                      minLength: 1
                      pattern: ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$
                      type: string
                    status:
                      enum:
                      - "True"
                      - "False"
                      - Unknown
                      type: string
                    type:
                      maxLength: 316
                      pattern: ^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$
                      type: string
                  required:
                  - lastTransitionTime
                  - status
                  - type
                  type: object
                maxItems: 32
                type: array
                x-kubernetes-list-map-keys:
                - type
                x-kubernetes-list-type: map
              ready:
                description: ready is true when the provider resource is ready.
                type: boolean
            type: object
        type: object
`)
		fmt.Fprintf(&b, "    served: true\n    storage: %v\n    subresources:\n      status: {}\n", v == 1)
	}
	return b.String()
}

// object writes the properties of a nested object schema at the given
// indentation: five levels of fields, each with a documentation comment as
// controller-gen writes them.
func object(b *strings.Builder, indent, depth, seed int) {
	pad := strings.Repeat(" ", indent)
	fmt.Fprintf(b, "%sproperties:\n", pad)
	n := []int{6, 5, 4, 3}[depth]
	for j := range n {
		s := seed*31 + depth*7 + j
		field := words[s%len(words)] + strings.ToUpper(words[(s/3)%len(words)][:1]) + words[(s/3)%len(words)][1:]
		fmt.Fprintf(b, "%s  %s:\n", pad, field)
		fmt.Fprintf(b, "%s    description: |-\n", pad)
		fmt.Fprintf(b, "%s      %s is the %s of the %s, set by the %s controller when it reconciles.\n", pad, field, words[(s+1)%len(words)], words[(s+2)%len(words)], words[(s+3)%len(words)])
		fmt.Fprintf(b, "%s      It must match the %s's \"%s\" or be empty: see https://example.com/docs#%s.\n", pad, words[(s+4)%len(words)], words[(s+5)%len(words)], field)
		switch {
		case depth < 3 && j%2 == 0:
			object(b, indent+4, depth+1, s)
			fmt.Fprintf(b, "%s    type: object\n", pad)
		case j%3 == 0:
			fmt.Fprintf(b, "%s    items:\n%s      maxLength: 253\n%s      type: string\n%s    maxItems: 16\n%s    type: array\n%s    x-kubernetes-list-type: set\n", pad, pad, pad, pad, pad, pad)
		case j%3 == 1:
			fmt.Fprintf(b, "%s    format: int32\n%s    maximum: 65535\n%s    minimum: 1\n%s    type: integer\n", pad, pad, pad, pad)
		default:
			fmt.Fprintf(b, "%s    enum:\n%s    - \"\"\n%s    - Auto\n%s    - \"On\"\n%s    - \"Off\"\n%s    type: string\n%s    x-kubernetes-validations:\n%s    - message: %s is immutable\n%s      rule: self == oldSelf\n",
				pad, pad, pad, pad, pad, pad, pad, pad, field, pad)
		}
	}
	if depth == 0 {
		fmt.Fprintf(b, "%srequired:\n%s- %s\n", pad, pad, words[(seed*31)%len(words)]+strings.ToUpper(words[(seed*31/3)%len(words)][:1])+words[(seed*31/3)%len(words)][1:])
	}
}

func conversionPatch(k string) string {
	return fmt.Sprintf(`# The following patch enables a conversion webhook for the CRD
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %ss.infrastructure.cluster.x-k8s.io
spec:
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: ["v1", "v1beta1"]
      clientConfig:
        service:
          namespace: system
          name: webhook-service
          path: /convert
`, strings.ToLower(k))
}

const crdKustomizeConfig = `# This file is for teaching kustomize how to substitute name and namespace reference in CRD
nameReference:
- kind: Service
  version: v1
  fieldSpecs:
  - kind: CustomResourceDefinition
    group: apiextensions.k8s.io
    path: spec/conversion/webhook/clientConfig/service/name

namespace:
- kind: CustomResourceDefinition
  group: apiextensions.k8s.io
  path: spec/conversion/webhook/clientConfig/service/namespace
  create: false
`

const defaultKustomization = `namespace: capi-large-system

namePrefix: capi-large-

labels:
- includeSelectors: true
  pairs:
    cluster.x-k8s.io/provider: infrastructure-large

resources:
- ../crd
- ../rbac
- ../manager
- ../webhook
- ../certmanager

patches:
- path: manager_webhook_patch.yaml
- path: webhookcainjection_patch.yaml

replacements:
- source:
    fieldPath: .metadata.namespace
    group: cert-manager.io
    kind: Certificate
    name: serving-cert
    version: v1
  targets:
  - fieldPaths:
    - .metadata.annotations.[cert-manager.io/inject-ca-from]
    options:
      create: true
      delimiter: /
    select:
      kind: ValidatingWebhookConfiguration
  - fieldPaths:
    - .metadata.annotations.[cert-manager.io/inject-ca-from]
    options:
      create: true
      delimiter: /
    select:
      kind: MutatingWebhookConfiguration
  - fieldPaths:
    - .metadata.annotations.[cert-manager.io/inject-ca-from]
    options:
      create: true
      delimiter: /
    select:
      kind: CustomResourceDefinition
- source:
    fieldPath: .metadata.name
    group: cert-manager.io
    kind: Certificate
    name: serving-cert
    version: v1
  targets:
  - fieldPaths:
    - .metadata.annotations.[cert-manager.io/inject-ca-from]
    options:
      create: true
      delimiter: /
      index: 1
    select:
      kind: ValidatingWebhookConfiguration
  - fieldPaths:
    - .metadata.annotations.[cert-manager.io/inject-ca-from]
    options:
      create: true
      delimiter: /
      index: 1
    select:
      kind: MutatingWebhookConfiguration
  - fieldPaths:
    - .metadata.annotations.[cert-manager.io/inject-ca-from]
    options:
      create: true
      delimiter: /
      index: 1
    select:
      kind: CustomResourceDefinition
- source:
    fieldPath: .metadata.name
    kind: Service
    name: webhook-service
    version: v1
  targets:
  - fieldPaths:
    - .spec.dnsNames.0
    - .spec.dnsNames.1
    options:
      create: true
      delimiter: .
    select:
      group: cert-manager.io
      kind: Certificate
      version: v1
- source:
    fieldPath: .metadata.namespace
    kind: Service
    name: webhook-service
    version: v1
  targets:
  - fieldPaths:
    - .spec.dnsNames.0
    - .spec.dnsNames.1
    options:
      create: true
      delimiter: .
      index: 1
    select:
      group: cert-manager.io
      kind: Certificate
      version: v1
`

const mhc = `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineHealthCheck
metadata:
  name: ${CLUSTER_NAME}-md-0-unhealthy
spec:
  clusterName: ${CLUSTER_NAME}
  selector:
    matchLabels:
      cluster.x-k8s.io/deployment-name: ${CLUSTER_NAME}-md-0
  checks:
    nodeStartupTimeoutSeconds: %d00
    unhealthyNodeConditions:
    - type: Ready
      status: Unknown
      timeoutSeconds: 300
`

const clusterPatch = `apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: ${CLUSTER_NAME}
spec:
  clusterNetwork:
    pods:
      cidrBlocks:
      - 10.%d.0.0/16
`
