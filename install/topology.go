package install

import (
	stderrors "errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"

	"github.com/capirepo/capirepo/values"
)

// topologyRefusals checks a topology Cluster's variables against the
// schemas of its class's variables, as Cluster API's webhook would at
// apply: a value the schema rejects. Variables the class's spec does not
// declare, and required ones missing, are left alone (a runtime
// extension may declare variables), and so is a class the release does
// not ship or ships more than once under one name. from names the file
// whose class the Cluster means (the flavor applied first, for a class
// several flavors ship under one name), "" for any.
func topologyRefusals(obj *unstructured.Unstructured, classes *values.Classes, from func(class string) string) []Refusal {
	class, ok := values.TopologyClass(obj)
	if !ok {
		return nil
	}
	declared, ok := classes.Declared(class)
	if file := from(class); file != "" {
		declared, ok = classes.DeclaredIn(file, class)
	}
	if !ok {
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
		res := validate.NewSchemaValidator(cv, nil, "", strfmt.Default).Validate(m["value"])
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
