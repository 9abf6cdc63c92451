package builder

import "github.com/capirepo/capirepo/internal/clusterctlvars"

// variableMap is clusterctl's GetVariableMap without its whole-file regular
// expression (see clusterctlvars.Map).
func variableMap(data []byte) (map[string]*string, error) { return clusterctlvars.Map(data) }
