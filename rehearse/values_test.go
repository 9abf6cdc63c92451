package rehearse

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/values"
)

// newComponents is a components file of the example's next release that
// uses variables the old one did not: one a stand-in must fit its CRD's
// schema for (EXAMPLE_SIZE), one found where clusterctl looks
// (EXAMPLE_LOOKED_UP), one with a default, and one the old release's
// values already set (EXAMPLE_OLD) or --var gives (EXAMPLE_REGION).
const newComponents = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: examplesizes.infrastructure.cluster.x-k8s.io
spec:
  group: infrastructure.cluster.x-k8s.io
  names: {kind: ExampleSize, plural: examplesizes}
  scope: Namespaced
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 3, maximum: 5}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: ExampleSize
metadata:
  name: default
  namespace: capi-example-system
spec:
  size: ${EXAMPLE_SIZE}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: example-config
  namespace: capi-example-system
data:
  old: ${EXAMPLE_OLD}
  region: ${EXAMPLE_REGION}
  looked-up: ${EXAMPLE_LOOKED_UP}
  defaulted: ${EXAMPLE_DEFAULTED:=yes}
`

// TestComponentValues_NewVariablesGetTheValuesPackageAnswer: the variables
// only New's components use get package values' answer (a stand-in that
// fits New's own CRD, a value the lookup finds) for clusterctl's config,
// beside Old's values, which stay; real values and defaulted variables
// are not added (clusterctl's config holds the real values already).
func TestComponentValues_NewVariablesGetTheValuesPackageAnswer(t *testing.T) {
	id, err := provider.ParseLabel("infrastructure-example")
	if err != nil {
		t.Fatal(err)
	}
	p := &release.Provider{ID: id, Version: "v0.1.1", ComponentsFile: id.DefaultComponentsFile()}
	if err := p.Add(p.ComponentsFile, []byte(newComponents)); err != nil {
		t.Fatal(err)
	}
	real := values.Real{Variables: map[string]string{"EXAMPLE_REGION": "eu-west-1"}, Lookup: func(name string) (string, bool) {
		if name == "EXAMPLE_LOOKED_UP" {
			return "from-the-environment", true
		}
		return "", false
	}}
	set := map[string]string{"EXAMPLE_OLD": "old-value"}
	if err := componentValues([]*release.Provider{p}, real, nil, set, nil); err != nil {
		t.Fatal(err)
	}
	size, err := strconv.Atoi(set["EXAMPLE_SIZE"])
	if err != nil || size < 3 || size > 5 {
		t.Errorf("EXAMPLE_SIZE stands in as %q; want an integer the CRD's spec.size takes (3 to 5)", set["EXAMPLE_SIZE"])
	}
	delete(set, "EXAMPLE_SIZE")
	want := map[string]string{"EXAMPLE_OLD": "old-value", "EXAMPLE_LOOKED_UP": "from-the-environment"}
	if d := cmp.Diff(want, set); d != "" {
		t.Errorf("values (-want +got):\n%s", d)
	}
}
