package values

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
)

// widgetCRD serves Widget with fields of every kind a stand-in must fit.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              nodes: {type: integer, format: int32, minimum: 3}
              replicas: {type: integer}
              mode: {type: string, enum: [fast, slow]}
              tenant: {type: string, format: uuid}
              account: {type: string, pattern: '^[0-9]{12}$'}
              zone: {type: string, pattern: '^[a-z]{2}-[a-z]+-[0-9]$'}
              public: {type: boolean}
              note: {type: string}
              tags: {type: array, items: {type: string}}
              dnsServers: {type: array, minItems: 2, items: {type: string, format: ipv4}, x-kubernetes-list-type: set}
              podCIDRs: {type: array, minItems: 1, maxItems: 2, items: {type: string, format: cidr}}
              ports: {type: array, minItems: 2, items: {type: integer, minimum: 1024, maximum: 65535}}
              host: {type: string, format: hostname, maxLength: 30}
              addresses:
                type: array
                items: {type: string}
                x-kubernetes-validations: [{rule: self.size() > 0, message: addresses must not be empty}]
              failureDomains:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items: {type: object, required: [name], properties: {name: {type: string}}}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
              memory:
                anyOf: [{type: integer}, {type: string}]
                pattern: ^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$
                x-kubernetes-int-or-string: true
`

// builtins is a piece of the server's OpenAPI v3 for core/v1: Secret data
// is base64 ("byte"), ConfigMap data a map of strings, both behind $refs.
const builtins = `{"components": {"schemas": {
  "io.k8s.api.core.v1.Secret": {"type": "object", "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "Secret"}],
    "properties": {"data": {"type": "object", "additionalProperties": {"type": "string", "format": "byte"}},
      "metadata": {"default": {}, "allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]}}},
  "io.k8s.api.core.v1.ConfigMap": {"type": "object", "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "ConfigMap"}],
    "properties": {"data": {"type": "object", "additionalProperties": {"type": "string", "default": ""}}}},
  "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"type": "object", "properties": {"name": {"type": "string"}}}
}}}`

func testSchemas(t *testing.T) *schemaSet {
	t.Helper()
	crds, err := utilyaml.ToUnstructured([]byte(widgetCRD))
	if err != nil {
		t.Fatal(err)
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal([]byte(builtins), &doc); err != nil {
		t.Fatal(err)
	}
	s := &schemaSet{openAPI: func(gv schema.GroupVersion) (*spec3.OpenAPI, error) {
		if gv.Group == "" && gv.Version == "v1" {
			return &doc, nil
		}
		return nil, nil
	}}
	s.addCRD(&crds[0])
	classes, err := utilyaml.ToUnstructured([]byte(quickStart))
	if err != nil {
		t.Fatal(err)
	}
	s.classes.add("clusterclass-quick-start.yaml", classes)
	return s
}

// quickStart is a ClusterClass whose variables have schemas.
const quickStart = `apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata: {name: quick-start}
spec:
  variables:
  - name: podCIDR
    required: true
    schema: {openAPIV3Schema: {type: string, format: cidr}}
  - name: workers
    required: false
    schema: {openAPIV3Schema: {type: integer, minimum: 3, maximum: 10}}
  - name: dns
    required: false
    schema: {openAPIV3Schema: {type: object, properties: {servers: {type: array, minItems: 1, items: {type: string, format: ipv4}}}}}
`

// topologyCluster is a topology Cluster of a class given by a variable.
const topologyCluster = `apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: c}
spec:
  topology:
    class: ${CLASS}
    version: v1.33.0
    variables:
    - name: podCIDR
      value: ${POD_CIDR}
    - name: workers
      value: ${WORKERS}
    - name: dns
      value:
        servers: ${SERVERS}
`

func TestStandIns_FitTheFieldSchemas(t *testing.T) {
	cases := []struct {
		name     string
		template string
		given    map[string]string
		want     map[string]string
	}{
		{name: "an integer with a minimum", template: "spec:\n  nodes: ${NODES}\n", want: map[string]string{"NODES": "3"}},
		{name: "a count the name guesses, in range", template: "spec:\n  nodes: ${NODE_COUNT}\n", want: map[string]string{"NODE_COUNT": "3"}},
		{name: "an enum", template: "spec:\n  mode: ${MODE}\n", want: map[string]string{"MODE": "fast"}},
		{name: "a UUID format", template: "spec:\n  tenant: ${TENANT}\n", want: map[string]string{"TENANT": standInUUID}},
		{name: "a pattern", template: "spec:\n  account: \"${ACCOUNT}\"\n  zone: ${ZONE}\n", want: map[string]string{"ACCOUNT": "000000000000", "ZONE": "aa-a-0"}},
		// Unquoted, YAML reads the 12 digits as a number, which the string
		// field refuses whatever digits a user gives: nothing fits.
		{name: "a pattern of digits, unquoted", template: "spec:\n  account: ${ACCOUNT}\n", want: map[string]string{"ACCOUNT": "capirepo-account"}},
		// A CRD's resource.Quantity: an integer or a string of its pattern.
		{name: "a quantity", template: "spec:\n  memory: ${VM_MEMORY}\n", want: map[string]string{"VM_MEMORY": "0"}},
		{name: "a quantity, quoted", template: "spec:\n  memory: \"${VM_MEMORY}\"\n", want: map[string]string{"VM_MEMORY": "0"}},
		{name: "a boolean", template: "spec:\n  public: ${PUBLIC}\n", want: map[string]string{"PUBLIC": "false"}},
		{name: "a quoted boolean stays a string", template: "spec:\n  note: \"${PUBLIC}\"\n", want: map[string]string{"PUBLIC": "capirepo-public"}},
		{name: "a string: the name's guess", template: "spec:\n  note: ${IMAGE_TAG}\n", want: map[string]string{"IMAGE_TAG": "v0.0.0"}},
		{name: "a list: one item, for rules on its size", template: "spec:\n  tags: ${TAGS}\n", want: map[string]string{"TAGS": "[capirepo-placeholder-0]"}},
		{name: "a list of IPv4 addresses with minItems, a set", template: "spec:\n  dnsServers: ${DNS_SERVERS}\n",
			want: map[string]string{"DNS_SERVERS": "[192.0.2.1, 192.0.2.2]"}},
		{name: "a list of CIDRs", template: "spec:\n  podCIDRs: ${POD_CIDRS}\n", want: map[string]string{"POD_CIDRS": "[10.0.0.0/16]"}},
		{name: "a list of integers in a range", template: "spec:\n  ports: ${PORTS}\n", want: map[string]string{"PORTS": "[1024, 1025]"}},
		// The server's hostname format takes one dash in a single label:
		// the format's own stand-in.
		{name: "a hostname", template: "spec:\n  host: ${API_HOST}\n", want: map[string]string{"API_HOST": "placeholder.capirepo.invalid"}},
		{name: "a list a CEL rule wants non-empty", template: "spec:\n  addresses: ${ADDRESSES}\n", want: map[string]string{"ADDRESSES": "[capirepo-placeholder-0]"}},
		{name: "distinct names in a list keyed by name", template: "spec:\n  failureDomains:\n  - name: ${FD_1}\n  - name: ${FD_2}\n  - name: ${FD_3}\n",
			want: map[string]string{"FD_1": "capirepo-fd-1", "FD_2": "capirepo-fd-2", "FD_3": "capirepo-fd-3"}},
		{name: "a YAML fragment alone on its line", template: "spec:\n  note: n\n${EXTRA_SPEC}\n  nodes: ${NODES}\n",
			want: map[string]string{"EXTRA_SPEC": "", "NODES": "3"}},
		{name: "no schema to fit", template: "spec:\n  extra: {size: ${SIZE_X}}\n", want: map[string]string{"SIZE_X": "capirepo-size-x"}},
		{name: "inside a longer string, with a given value", template: "spec:\n  zone: ${REGION}-${SUFFIX}\n",
			given: map[string]string{"REGION": "eu-west"}, want: map[string]string{"SUFFIX": "1"}},
		{name: "the same variable in two fields", template: "spec:\n  nodes: ${N}\n  note: \"${N}\"\n", want: map[string]string{"N": "3"}},
		{name: "no value fits everywhere: the most places", template: "spec:\n  nodes: ${N}\n  replicas: ${N}\n  note: ${N}\n", want: map[string]string{"N": "3"}},
		{name: "base64 in Secret data", template: "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  key: ${CREDENTIALS}\n",
			want: map[string]string{"CREDENTIALS": standInBase64}},
		{name: "a whole ConfigMap data map", template: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: ${CNI_RESOURCES}\n",
			want: map[string]string{"CNI_RESOURCES": "{}"}},
		// metadata's maps as a whole: a string there is refused by the
		// server (and breaks clusterctl's conversion of a Cluster).
		{name: "a whole labels map", template: "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: c\n  labels:\n    ${CLUSTER_LABELS}\n",
			want: map[string]string{"CLUSTER_LABELS": "{}"}},
		{name: "a whole annotations map", template: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations: ${EXTRA_ANNOTATIONS}\n",
			want: map[string]string{"EXTRA_ANNOTATIONS": "{}"}},
		{name: "an object name", template: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '${NAME_PREFIX}'}\n",
			want: map[string]string{"NAME_PREFIX": "capirepo-name-prefix"}},
		{name: "a kind nobody knows", template: "apiVersion: other.example.com/v1\nkind: Gadget\nspec: {nodes: ${NODES}}\n",
			want: map[string]string{"NODES": "capirepo-nodes"}},
		{name: "a topology Cluster: a class the release ships, variables fitting the class's schemas", template: topologyCluster,
			want: map[string]string{"CLASS": "quick-start", "POD_CIDR": "10.0.0.0/16", "WORKERS": "3", "SERVERS": "[192.0.2.1]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := c.template
			if !regexp.MustCompile(`(?m)^kind:`).MatchString(raw) {
				raw = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n" + raw
			}
			var required []string
			for name := range c.want {
				required = append(required, name)
			}
			got := standIns([]byte(raw), c.given, required, testSchemas(t))
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("stand-ins (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRegexExample(t *testing.T) {
	for _, pattern := range []string{
		`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`,
		`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`,
		`^(ami|AMI)-[A-F0-9]+$`,
		`^arn:aws:iam::[0-9]{12}:role/.+$`,
		`^projects/[^/]+/zones/[^/]+$`,
		`\d+(ms|s|m)`,
	} {
		got, ok := regexExample(pattern)
		if !ok || !regexp.MustCompile(pattern).MatchString(got) {
			t.Errorf("%s: %q (ok=%v) does not match", pattern, got, ok)
		}
	}
	if got, ok := regexExample(`[`); ok {
		t.Errorf("an invalid pattern gave %q", got)
	}
}
