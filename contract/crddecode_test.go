package contract

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestCRDDecodeProblems pins what CAPI315 reports for a CRD whose JSON does
// not decode: every mismatch, not only the decoder's first, at the path the
// other rules write, and nothing the API server accepts.
func TestCRDDecodeProblems(t *testing.T) {
	const refuse = " where the CustomResourceDefinition field is "
	const tail = ": clusterctl init and the API server refuse the CRD; "
	cases := []struct {
		name, doc string
		want      []decodeProblem
	}{
		{"labels with dotted keys and a YAML 1.1 boolean key, descriptions in maps and lists",
			"metadata: {name: a, labels: {x.y/z: 1, y: true}}\nspec: {group: g, versions: [{name: v0}, {name: v1, schema: {openAPIV3Schema: {description: 123, type: object, properties: {foo: {description: 5}, description: {description: 6}}}}}]}\n",
			[]decodeProblem{
				{"metadata.labels[true]", "true is a boolean" + refuse + "a string" + tail + `quote the value ("true")`},
				{"metadata.labels[x.y/z]", "1 is a number" + refuse + "a string" + tail + `quote the value ("1")`},
				{"spec.versions[1].schema.openAPIV3Schema.description", "123 is a number" + refuse + "a string" + tail + `quote the value ("123")`},
				{"spec.versions[1].schema.openAPIV3Schema.properties.description.description", "6 is a number" + refuse + "a string" + tail + `quote the value ("6")`},
				{"spec.versions[1].schema.openAPIV3Schema.properties.foo.description", "5 is a number" + refuse + "a string" + tail + `quote the value ("5")`},
			}},
		{"group and categories",
			"metadata: {name: a}\nspec: {group: 1.5, names: {categories: [1, true]}}\n",
			[]decodeProblem{
				{"spec.group", "1.5 is a number" + refuse + "a string" + tail + `quote the value ("1.5")`},
				{"spec.names.categories[0]", "1 is a number" + refuse + "a string" + tail + `quote the value ("1")`},
				{"spec.names.categories[1]", "true is a boolean" + refuse + "a string" + tail + `quote the value ("true")`},
			}},
		{"a string where the field is a boolean",
			"metadata: {name: a}\nspec: {versions: [{name: v1, served: \"true\"}]}\n",
			[]decodeProblem{{"spec.versions[0].served", `"true" is a string` + refuse + "a boolean" + tail + "write a boolean"}}},
		{"inside additionalProperties and items, which decode themselves",
			"metadata: {name: a}\nspec: {versions: [{name: v1, schema: {openAPIV3Schema: {additionalProperties: {description: 5}, items: {description: 7}}}}]}\n",
			[]decodeProblem{
				{"spec.versions[0].schema.openAPIV3Schema.additionalProperties.description", "5 is a number" + refuse + "a string" + tail + `quote the value ("5")`},
				{"spec.versions[0].schema.openAPIV3Schema.items.description", "7 is a number" + refuse + "a string" + tail + `quote the value ("7")`},
			}},
		{"additionalProperties neither a boolean nor a schema",
			"metadata: {name: a}\nspec: {versions: [{name: v1, schema: {openAPIV3Schema: {properties: {additionalProperties: {type: string}, a: {additionalProperties: 5}}}}}]}\n",
			[]decodeProblem{{"spec.versions[0].schema.openAPIV3Schema.properties.a.additionalProperties", "5 is a number where the field takes true, false or a schema: clusterctl init and the API server refuse the CRD; write a boolean or a schema"}}},
		{"enum not a list, maxLength not an integer",
			"metadata: {name: a}\nspec: {versions: [{name: v1, schema: {openAPIV3Schema: {enum: foo, maxLength: 1.5}}}]}\n",
			[]decodeProblem{
				{"spec.versions[0].schema.openAPIV3Schema.enum", `"foo" is a string` + refuse + "a list" + tail + "write a list"},
				{"spec.versions[0].schema.openAPIV3Schema.maxLength", "1.5 is a number" + refuse + "an integer" + tail + "write an integer"},
			}},
		{"unknown fields and keys that differ in case: the API server ignores them",
			"metadata: {name: a}\nspec: {versions: [{name: v1, schema: {openAPIV3Schema: {Description: 5, foo: 1, type: object}}}], Group: 1}\n",
			nil},
		{"no path to give",
			"metadata: {name: a, creationTimestamp: yesterday}\n",
			[]decodeProblem{{"", `the JSON clusterctl sends does not decode as a CustomResourceDefinition: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"; clusterctl init and the API server refuse the CRD`}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, err := yaml.YAMLToJSON([]byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n" + c.doc))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, crdDecodeProblems(j), cmp.AllowUnexported(decodeProblem{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCRDDecodeProblems_Bounded(t *testing.T) {
	doc := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a}\nspec: {names: {categories: ["
	for i := range maxDecodeProblems + 5 {
		if i > 0 {
			doc += ", "
		}
		doc += "1"
	}
	j, err := yaml.YAMLToJSON([]byte(doc + "]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := crdDecodeProblems(j)
	if len(got) != maxDecodeProblems+1 || got[maxDecodeProblems].field != "" {
		t.Errorf("want %d problems and a note, got %d: %v", maxDecodeProblems, len(got), got)
	}
}
