package install

import (
	"encoding/json"
	stderrors "errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"

	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/verify"
)

// Cluster API's group; its Cluster and ClusterClass kinds.
const capiGroup = "cluster.x-k8s.io"

// clusterClasses are the ClusterClasses a release ships: their names and
// the schemas of their variables, by class and variable name. Cluster API's
// own variable validation (internal/topology/variables) is not importable,
// and a scratch cluster runs no Cluster API webhook: a topology Cluster's
// variables are checked here against these schemas with the same OpenAPI
// v3 validation the install check uses for custom resources' fields.
type clusterClasses struct {
	names []string
	vars  map[string]map[string]*classVariable
}

// classVariable is one variable a ClusterClass declares.
type classVariable struct {
	required bool
	schema   *spec.Schema
}

// add learns the ClusterClasses among objs.
func (c *clusterClasses) add(objs []unstructured.Unstructured) {
	for i := range objs {
		o := &objs[i]
		if o.GroupVersionKind().Group != capiGroup || o.GetKind() != "ClusterClass" {
			continue
		}
		if c.vars == nil {
			c.vars = map[string]map[string]*classVariable{}
		}
		if !slices.Contains(c.names, o.GetName()) {
			c.names = append(c.names, o.GetName())
		}
		if _, seen := c.vars[o.GetName()]; seen {
			// Two classes of one name (each named by a variable, say):
			// which one a Cluster means is not known.
			c.vars[o.GetName()] = nil
			continue
		}
		vars := map[string]*classVariable{}
		list, _, _ := unstructured.NestedSlice(o.Object, "spec", "variables")
		for _, v := range list {
			m, ok := v.(map[string]any)
			if !ok {
				continue
			}
			name, _ := m["name"].(string)
			raw, ok, _ := unstructured.NestedMap(m, "schema", "openAPIV3Schema")
			if name == "" || !ok {
				continue
			}
			b, err := json.Marshal(raw)
			if err != nil {
				continue
			}
			var s spec.Schema
			if err := json.Unmarshal(b, &s); err != nil {
				continue
			}
			required, _ := m["required"].(bool)
			vars[name] = &classVariable{required: required, schema: &s}
		}
		c.vars[o.GetName()] = vars
	}
}

// variable is a class's variable; a class not known (its name a stand-in
// still) falls back to the first class declaring the name.
func (c *clusterClasses) variable(class, name string) *classVariable {
	if c == nil {
		return nil
	}
	if vars, ok := c.vars[class]; ok {
		return vars[name] // nil for a name two classes share
	}
	for _, n := range c.names {
		if v := c.vars[n][name]; v != nil {
			return v
		}
	}
	return nil
}

// learnClasses reads every ClusterClass the release ships, in clusterclass
// files and in flavors, processed with the variables' defaults and the
// names' guesses for the others.
func (in *installer) learnClasses(provs []*installProvider) {
	for _, ip := range provs {
		for _, f := range ip.p.Files {
			_, flavor := verify.FlavorOf(f.Name)
			class, isClass := verify.ClassOf(f.Name)
			if !flavor && !isClass {
				continue
			}
			if isClass && !slices.Contains(in.schemas.classes.names, class) {
				in.schemas.classes.names = append(in.schemas.classes.names, class)
			}
			in.schemas.classes.add(guessedObjects(ip.p, f.Name))
		}
	}
}

// guessedObjects processes a file with the defaults, the names' guesses
// for the required variables; nil when it cannot.
func guessedObjects(p *release.Provider, name string) []unstructured.Unstructured {
	raw, ok := p.File(name)
	if !ok {
		return nil
	}
	vars, err := yamlprocessor.NewSimpleProcessor().GetVariableMap(raw.Data)
	if err != nil {
		return nil
	}
	out, err := substitute(raw.Data, nil, func(n string) (string, bool) {
		if vars[n] != nil {
			return "", false
		}
		return verify.PlaceholderFor(n), true
	})
	if err != nil {
		return nil
	}
	objs, _ := utilyaml.ToUnstructured(out)
	return objs
}

// topologyClass is the class a topology Cluster names (v1beta1's
// spec.topology.class, v1beta2's spec.topology.classRef.name).
func topologyClass(obj map[string]any) (string, bool) {
	if c, ok, _ := unstructured.NestedString(obj, "spec", "topology", "class"); ok {
		return c, true
	}
	c, ok, _ := unstructured.NestedString(obj, "spec", "topology", "classRef", "name")
	return c, ok
}

// topologyLeaf is the schema of a field of a topology Cluster the CRD
// leaves open: the class's name (a class the release ships) and the value
// of a variable (its schema in the class); nil elsewhere.
func topologyLeaf(obj map[string]any, o occurrence, src schemaSource) *spec.Schema {
	if o.gvk.Group != capiGroup || o.gvk.Kind != "Cluster" || len(o.path) < 3 || o.path[0] != "spec" || o.path[1] != "topology" {
		return nil
	}
	classes := src.clusterClasses()
	if classes == nil {
		return nil
	}
	rest := o.path[2:]
	if (len(rest) == 1 && rest[0] == "class") || (len(rest) == 2 && rest[0] == "classRef" && rest[1] == "name") {
		if len(classes.names) == 0 {
			return nil
		}
		s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}}}
		for _, n := range classes.names {
			s.Enum = append(s.Enum, n)
		}
		return s
	}
	if len(rest) < 3 || rest[0] != "variables" || rest[2] != "value" {
		return nil
	}
	i, ok := rest[1].(int)
	if !ok {
		return nil
	}
	vars, _, _ := unstructured.NestedSlice(obj, "spec", "topology", "variables")
	if i >= len(vars) {
		return nil
	}
	m, _ := vars[i].(map[string]any)
	name, _ := m["name"].(string)
	class, _ := topologyClass(obj)
	v := classes.variable(class, name)
	if v == nil {
		return nil
	}
	return (&typeSchema{root: v.schema}).at(rest[3:])
}

// topologyRefusals checks a topology Cluster's variables against the
// schemas of its class's variables, as Cluster API's webhook would at
// apply: a value the schema rejects. Variables the class's spec does not
// declare, and required ones missing, are left alone (a runtime
// extension may declare variables), and so is a class the release does
// not ship or ships more than once under one name.
func topologyRefusals(obj *unstructured.Unstructured, classes *clusterClasses) []Refusal {
	if obj.GroupVersionKind().Group != capiGroup || obj.GetKind() != "Cluster" || classes == nil {
		return nil
	}
	class, ok := topologyClass(obj.Object)
	if !ok {
		return nil
	}
	declared, ok := classes.vars[class]
	if !ok || declared == nil {
		return nil
	}
	name := objectName(obj)
	const reason = "ClusterClass variable schema"
	var out []Refusal
	vars, _, _ := unstructured.NestedSlice(obj.Object, "spec", "topology", "variables")
	for i, v := range vars {
		m, _ := v.(map[string]any)
		vname, _ := m["name"].(string)
		field := fmt.Sprintf("spec.topology.variables[%d]", i)
		cv := declared[vname]
		if cv == nil {
			// Not in spec.variables: a runtime extension's patches may
			// declare it (the class's status.variables), which a scratch
			// cluster cannot know.
			continue
		}
		res := validate.NewSchemaValidator(cv.schema, nil, "", strfmt.Default).Validate(m["value"])
		if res == nil || res.IsValid() {
			continue
		}
		for _, err := range res.Errors {
			// kube-openapi names the value "" ("in body"): the field says where.
			msg := strings.Join(strings.Fields(strings.Replace(err.Error(), " in body ", " ", 1)), " ")
			var ve *errors.Validation
			if !stderrors.As(err, &ve) {
				ve = nil
			}
			f := field + ".value"
			if ve != nil && ve.Name != "" && ve.Name != "." {
				f += "." + strings.TrimPrefix(ve.Name, ".")
			}
			out = append(out, Refusal{Object: name, Field: f, Reason: reason,
				Message: fmt.Sprintf("variable %q: %s (ClusterClass %s's schema)", vname, msg, class)})
		}
	}
	return out
}
