package verify

import (
	"maps"
	"slices"

	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"

	"github.com/capirepo/capirepo/values"
)

// Namespace is the target namespace verify reads components and templates
// into (NAMESPACE).
const Namespace = "capirepo-verify"

// sessionValues are the variables of one clusterctl config: clusterctl's
// fixed template values, the caller's, and what package values chose for
// each file read. It remembers which were stand-ins for the report.
type sessionValues struct {
	set         map[string]string
	placeholder map[string]bool
}

func newSessionValues(kubernetesVersion string, given map[string]string) *sessionValues {
	v := &sessionValues{set: values.Fixed(Namespace, kubernetesVersion), placeholder: map[string]bool{}}
	maps.Copy(v.set, given)
	return v
}

// describe turns clusterctl's variable map into report entries with the
// value verify used.
func (v *sessionValues) describe(vars map[string]*string) []Variable {
	out := make([]Variable, 0, len(vars))
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		e := Variable{Name: name, Required: vars[name] == nil, Default: vars[name]}
		if val, ok := v.set[name]; ok {
			e.Value = val
			e.Placeholder = v.placeholder[name]
		} else if vars[name] != nil {
			e.Value = *vars[name]
		}
		out = append(out, e)
	}
	return out
}

// recorder is clusterctl's processor, keeping the last file it listed the
// variables of: the bytes clusterctl fetched, which package values chooses
// the values for.
type recorder struct {
	yamlprocessor.Processor
	last []byte
}

func (r *recorder) GetVariableMap(raw []byte) (map[string]*string, error) {
	r.last = raw
	return r.Processor.GetVariableMap(raw)
}
