package values

import (
	"encoding/json"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Cluster API's group; its Cluster and ClusterClass kinds.
const capiGroup = "cluster.x-k8s.io"

// Classes are the ClusterClasses a release ships: their names and the
// schemas of their variables, by class and variable name. Cluster API's
// own variable validation (internal/topology/variables) is not importable:
// stand-ins for a topology Cluster's variables are chosen to fit these
// schemas, and the install check judges the Cluster's variables against
// them (Declared).
type Classes struct {
	names []string
	vars  map[string]map[string]*classVariable
	// named are, by variable, the classes of clusterclass files whose
	// ClusterClass takes its name from that variable.
	named map[string][]string
	// inFile are the variables of the classes of each file, by file and
	// class: one file's class, where several files ship one name.
	inFile map[string]map[string]map[string]*classVariable
}

// classVariable is one variable a ClusterClass declares.
type classVariable struct {
	required bool
	schema   *spec.Schema
}

// Names are the names of the classes, in the order they were learned.
func (c *Classes) Names() []string { return slices.Clone(c.names) }

// Declared returns the schemas of the variables the class declares in its
// spec.variables; false for a class not shipped, or shipped twice under
// one name (which one a Cluster means is not known).
func (c *Classes) Declared(class string) (map[string]*spec.Schema, bool) {
	if c == nil {
		return nil, false
	}
	return schemas(c.vars[class])
}

// schemas are the schemas of a class's variables; false for no class (or
// one that is ambiguous, nil).
func schemas(vars map[string]*classVariable) (map[string]*spec.Schema, bool) {
	if vars == nil {
		return nil, false
	}
	out := make(map[string]*spec.Schema, len(vars))
	for name, v := range vars {
		out[name] = v.schema
	}
	return out, true
}

// DeclaredIn is Declared for the class as file ships it (a flavor or
// clusterclass file learned): the class a topology flavor means when it
// needs that file applied first (Topology), whichever other files ship a
// class of the same name.
func (c *Classes) DeclaredIn(file, class string) (map[string]*spec.Schema, bool) {
	if c == nil {
		return nil, false
	}
	return schemas(c.inFile[file][class])
}

// addName makes a class name known (the name of a clusterclass-<name>.yaml).
func (c *Classes) addName(name string) {
	if !slices.Contains(c.names, name) {
		c.names = append(c.names, name)
	}
}

// add learns the ClusterClasses among objs, of file.
func (c *Classes) add(file string, objs []unstructured.Unstructured) {
	for i := range objs {
		o := &objs[i]
		if o.GroupVersionKind().Group != capiGroup || o.GetKind() != "ClusterClass" {
			continue
		}
		if c.vars == nil {
			c.vars = map[string]map[string]*classVariable{}
			c.inFile = map[string]map[string]map[string]*classVariable{}
		}
		c.addName(o.GetName())
		vars := classVariables(o)
		if c.inFile[file] == nil {
			c.inFile[file] = map[string]map[string]*classVariable{}
		}
		if _, seen := c.inFile[file][o.GetName()]; seen {
			c.inFile[file][o.GetName()] = nil // twice in one file
		} else {
			c.inFile[file][o.GetName()] = vars
		}
		if _, seen := c.vars[o.GetName()]; seen {
			// Two classes of one name: which one a Cluster means is not known.
			c.vars[o.GetName()] = nil
			continue
		}
		c.vars[o.GetName()] = vars
	}
}

// classVariables are the variables a ClusterClass declares, by name.
func classVariables(o *unstructured.Unstructured) map[string]*classVariable {
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
	return vars
}

// variable is a class's variable; a class not known (its name a stand-in
// still) falls back to the first class declaring the name.
func (c *Classes) variable(class, name string) *classVariable {
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

// classObjects processes a flavor or clusterclass file as the classes it
// holds would be named: each variable with the value value finds for it
// (a real value), a variable without one its default, else the name's
// guess as For makes it (distinctGuesses), so that a class is learned
// under the name a topology Cluster's class variable then names. A
// ClusterClass of a clusterclass-<class>.yaml file whose name is a
// variable without a real value takes <class> from that variable, as
// clusterctl only finds the file when the Cluster's class (the same
// variable, in the flavor) names it. nil when the file cannot be processed.
func classObjects(raw []byte, class string, value func(name string, required bool) (string, bool)) ([]unstructured.Unstructured, []string) {
	vars, err := variableMap(raw)
	if err != nil {
		return nil, nil
	}
	var required []string
	vals := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		v, ok := value(name, vars[name] == nil)
		switch {
		case ok:
			vals[name] = v
		case vars[name] == nil:
			required = append(required, name)
		}
	}
	maps.Copy(vals, distinctGuesses(required))
	var naming []string
	if class != "" {
		// The variable that is the whole name of a ClusterClass, found by
		// the markers.
		if objs, occ, err := markedOccurrences(raw, vals, required); err == nil {
			for name, at := range occ {
				for _, o := range at {
					if o.whole && o.gvk.Group == capiGroup && o.gvk.Kind == "ClusterClass" && slices.Equal(o.path, []any{"metadata", "name"}) && o.doc < len(objs) {
						vals[name] = class
						naming = append(naming, name)
					}
				}
			}
		}
	}
	out, err := substitute(raw, nil, func(n string) (string, bool) { v, ok := vals[n]; return v, ok })
	if err != nil {
		return nil, nil
	}
	objs, _ := toUnstructured(out)
	return objs, naming
}

// learn learns the classes of a flavor or clusterclass file (class is the
// file's class, "" for a flavor), its variables taking the values value
// finds (see classObjects).
func (c *Classes) learn(file string, raw []byte, class string, value func(name string, required bool) (string, bool)) {
	if class != "" {
		c.addName(class)
	}
	objs, naming := classObjects(raw, class, value)
	for _, v := range naming {
		if c.named == nil {
			c.named = map[string][]string{}
		}
		if !slices.Contains(c.named[v], class) {
			c.named[v] = append(c.named[v], class)
			slices.Sort(c.named[v]) // the same answer whatever order the files come in
		}
	}
	c.add(file, objs)
}

// classLeaf is the schema of a clusterclass-<class>.yaml file's ClusterClass
// name: <class>, which clusterctl fetched the file by; nil elsewhere.
func classLeaf(o occurrence, fileClass string) *spec.Schema {
	if fileClass == "" || !o.whole || o.gvk.Group != capiGroup || o.gvk.Kind != "ClusterClass" || !slices.Equal(o.path, []any{"metadata", "name"}) {
		return nil
	}
	return &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}, Enum: []any{fileClass}}}
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

// TopologyClass is the class a topology Cluster names: v1beta1's
// spec.topology.class, v1beta2's spec.topology.classRef.name; false for
// an object that is no topology Cluster.
func TopologyClass(obj *unstructured.Unstructured) (string, bool) {
	if obj.GroupVersionKind().Group != capiGroup || obj.GetKind() != "Cluster" {
		return "", false
	}
	return topologyClass(obj.Object)
}

// topologyLeaf is the schema of a field of a topology Cluster the CRD
// leaves open: the class's name (a class the release ships) and the value
// of a variable (its schema in the class); nil elsewhere.
func topologyLeaf(obj map[string]any, o occurrence, variable string, classes *Classes) *spec.Schema {
	if o.gvk.Group != capiGroup || o.gvk.Kind != "Cluster" || len(o.path) < 3 || o.path[0] != "spec" || o.path[1] != "topology" {
		return nil
	}
	if classes == nil {
		return nil
	}
	rest := o.path[2:]
	if (len(rest) == 1 && rest[0] == "class") || (len(rest) == 2 && rest[0] == "classRef" && rest[1] == "name") {
		if len(classes.names) == 0 {
			return nil
		}
		// A class whose file takes its name from the same variable first:
		// the flavor and the class are written to go together.
		names := slices.Clone(classes.named[variable])
		for _, n := range classes.names {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}}}
		for _, n := range names {
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
