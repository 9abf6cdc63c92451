package values

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// ReadFiles reads values files into Real values: each file a YAML map of
// variable names to values (as a clusterctl config holds them), given as
// FILE (for every flavor) or FLAVOR=FILE (that flavor's template; "default"
// is cluster-template.yaml). vars (--var) win over every file, and a
// flavor's file wins over a file for every flavor. Lookup is left nil.
func ReadFiles(vars map[string]string, files []string) (Real, error) {
	all := map[string]string{}
	flavors := map[string]map[string]string{}
	for _, arg := range files {
		flavor, path, ok := strings.Cut(arg, "=")
		if !ok || strings.ContainsAny(flavor, `/\`) {
			flavor, path = "", arg
		} else if flavor == "" {
			return Real{}, fmt.Errorf("values file %q: the flavor before = is empty: give FILE, or FLAVOR=FILE (default=FILE for cluster-template.yaml)", arg)
		}
		vals, err := readFile(path)
		if err != nil {
			return Real{}, err
		}
		if flavor == "" {
			maps.Copy(all, vals)
			continue
		}
		if flavor == "default" {
			flavor = ""
		}
		if flavors[flavor] == nil {
			flavors[flavor] = map[string]string{}
		}
		maps.Copy(flavors[flavor], vals)
	}
	maps.Copy(all, vars)
	for _, f := range flavors {
		maps.Copy(f, vars) // --var wins over a flavor's file too
	}
	return Real{Variables: all, Flavors: flavors}, nil
}

// readFile reads a YAML map of variable names to scalar values.
func readFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("values file: %w", err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("values file %s: %w: it holds a YAML map of variable names to values (NAME: value)", path, err)
	}
	out := map[string]string{}
	for name, v := range raw {
		switch t := v.(type) {
		case string:
			out[name] = t
		case nil:
			return nil, fmt.Errorf("values file %s: variable %s has no value: give one, or remove the line", path, name)
		case map[string]any, []any:
			// A structured value is given as clusterctl would substitute it:
			// its YAML in flow style.
			b, err := json.Marshal(t)
			if err != nil {
				return nil, fmt.Errorf("values file %s: variable %s: %w", path, name, err)
			}
			out[name] = string(b)
		case float64:
			out[name] = strconv.FormatFloat(t, 'f', -1, 64)
		default:
			out[name] = fmt.Sprint(t)
		}
	}
	return out, nil
}
