package values

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capirepo/capirepo/release"
)

// Topology is what one provider's flavors and clusterclass files say about
// ClusterClasses, with names as written (a literal name, or one holding
// variables, ${CLUSTER_CLASS_NAME}): which class each file ships and
// which class each flavor's topology Clusters name. It answers which
// flavor a topology flavor needs applied first (Needs).
//
// Some providers ship a ClusterClass as a flavor of its own
// (cluster-template-clusterclass.yaml, or cluster-template-<x>-clusterclass.yaml)
// and document "apply it first, then generate the topology flavor"
// (cluster-api-provider-gcp, cluster-api-provider-nutanix). clusterctl
// generate cluster (addClusterClassIfMissing) fetches
// clusterclass-<class>.yaml only for a class the management cluster does
// not have yet, so the topology flavor works after that flavor was applied,
// and fails before.
type Topology struct {
	files []release.File
	// parsed is filled on first use: the lint asks only when a class has
	// no clusterclass file.
	parsed bool
	// ships are the classes each flavor or clusterclass file ships, and
	// names those its topology Clusters name, by file, as written.
	ships map[string][]string
	names map[string][]string
}

// TopologyOf is the Topology of one provider's release files.
func TopologyOf(files []release.File) *Topology {
	return &Topology{files: files}
}

// Need is a class a topology flavor's Clusters name that the release ships
// as no clusterclass-<class>.yaml, but inside other flavors.
type Need struct {
	// Class is the class as the flavor's topology Cluster names it: a name,
	// or one holding variables (${CLUSTER_CLASS_NAME}), which the class
	// flavor's ClusterClass names the same way.
	Class string `json:"class"`
	// Files are the flavors that ship it, as cluster-template-<flavor>.yaml:
	// the one beside the topology flavor (clusterclass for topology,
	// gke-clusterclass for gke-topology) when the names pair them, else
	// every flavor that ships it. Applying one of them first puts the class
	// in the management cluster.
	Files []string `json:"files"`
}

// Flavors are the flavor names of Files.
func (n Need) Flavors() []string {
	out := make([]string, 0, len(n.Files))
	for _, f := range n.Files {
		flavor, _ := release.FlavorOf(f)
		out = append(out, flavor)
	}
	return out
}

// Needs are the classes the topology Clusters of flavor file name that the
// release ships as no clusterclass-<class>.yaml (for a class holding
// variables: no clusterclass file whose ClusterClass takes its name from
// the same variables) but inside another flavor that clusterctl can
// generate on its own (one that holds no topology Cluster naming a class
// it ships itself), with those flavors. A class shipped nowhere, or only
// inline in file itself, is no need: clusterctl cannot generate that
// flavor anywhere the class is not already (the lint's CAPI504).
func (t *Topology) Needs(file string) []Need {
	t.parse()
	var out []Need
	for _, class := range t.names[file] {
		if t.hasClassFile(class) {
			continue
		}
		var files []string
		for _, f := range t.files {
			if f.Name == file || !release.IsFlavor(f.Name) || !slices.Contains(t.ships[f.Name], class) || !t.standsAlone(f.Name) {
				continue
			}
			files = append(files, f.Name)
		}
		if len(files) == 0 {
			continue
		}
		out = append(out, Need{Class: class, Files: pairing(file, files)})
	}
	return out
}

// Need is the need of flavor file for class, written as a topology
// Cluster's class field holds it (with variables as in the file); false
// when the class is no need of file.
func (t *Topology) Need(file, class string) (Need, bool) {
	key := writtenName(class)
	for _, n := range t.Needs(file) {
		if n.Class == key {
			return n, true
		}
	}
	return Need{}, false
}

// Resolve is the class of a need as clusterctl names it with the values
// set (the session's: real values and stand-ins); false when a variable
// of it has no value.
func (n Need) Resolve(set map[string]string) (string, bool) {
	out, err := Substitute([]byte(n.Class), set)
	if err != nil {
		return "", false
	}
	return string(out), true
}

// Needed says whether some flavor needs flavor file applied first.
func (t *Topology) Needed(file string) bool {
	t.parse()
	for _, f := range t.files {
		for _, n := range t.Needs(f.Name) {
			if slices.Contains(n.Files, file) {
				return true
			}
		}
	}
	return false
}

func (t *Topology) parse() {
	if t.parsed {
		return
	}
	t.parsed = true
	t.ships = map[string][]string{}
	t.names = map[string][]string{}
	for _, f := range t.files {
		if !release.IsFlavor(f.Name) {
			if _, ok := release.ClassOf(f.Name); !ok {
				continue
			}
		}
		objs := writtenObjects(f.Data)
		for i := range objs {
			o := &objs[i]
			if o.GroupVersionKind().Group != capiGroup {
				continue
			}
			switch o.GetKind() {
			case "ClusterClass":
				if n := o.GetName(); n != "" && !slices.Contains(t.ships[f.Name], n) {
					t.ships[f.Name] = append(t.ships[f.Name], n)
				}
			case "Cluster":
				if c, ok := topologyClass(o.Object); ok && c != "" && !slices.Contains(t.names[f.Name], c) {
					t.names[f.Name] = append(t.names[f.Name], c)
				}
			}
		}
	}
}

// hasClassFile says whether the release ships class as a file clusterctl
// fetches: clusterclass-<class>.yaml for a name; for a class holding
// variables, a clusterclass file whose ClusterClass is named the same way.
func (t *Topology) hasClassFile(class string) bool {
	for _, f := range t.files {
		fileClass, ok := release.ClassOf(f.Name)
		if !ok {
			continue
		}
		if fileClass == class || strings.Contains(class, "${") && slices.Contains(t.ships[f.Name], class) {
			return true
		}
	}
	return false
}

// standsAlone says whether clusterctl generates the flavor without a
// class of its own already in the cluster: none of its topology Clusters
// names a class it ships itself (which it would fetch as a file first).
func (t *Topology) standsAlone(file string) bool {
	for _, c := range t.names[file] {
		if slices.Contains(t.ships[file], c) && !t.hasClassFile(c) {
			return false
		}
	}
	return true
}

// pairing narrows the flavors that ship a class to those named like the
// topology flavor: the same name but its last word (gke-topology and
// gke-clusterclass, topology and clusterclass); all of them when none is.
func pairing(file string, files []string) []string {
	stem := func(f string) string {
		flavor, _ := release.FlavorOf(f)
		if i := strings.LastIndex(flavor, "-"); i >= 0 {
			return flavor[:i]
		}
		return ""
	}
	var paired []string
	for _, f := range files {
		if stem(f) == stem(file) {
			paired = append(paired, f)
		}
	}
	if len(paired) > 0 {
		return paired
	}
	return files
}

// writtenObjects are the objects of raw with each variable without a
// default written back as ${NAME} where it lands (those with one take it,
// as clusterctl gives it when the user sets none): names as written, so
// that a flavor's ClusterClass and another flavor's topology Cluster that
// name the class by the same variable match whatever the user sets it to.
// A variable alone on its line, a YAML fragment, is left empty.
func writtenObjects(raw []byte) []unstructured.Unstructured {
	required, err := requiredVariables(raw)
	if err != nil {
		return nil
	}
	objs, _, _, required, err := markedOrFragments(raw, nil, required)
	if err != nil {
		return nil
	}
	for i := range objs {
		unmark(objs[i].Object, required)
	}
	return objs
}

// writtenName is a class name as a field holds it, written as
// writtenObjects writes names.
func writtenName(s string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	required, err := requiredVariables([]byte(s))
	if err != nil {
		return s
	}
	out, err := markVariables([]byte(s), nil, required)
	if err != nil {
		return s
	}
	return unmarkString(string(out), required)
}

// requiredVariables are the variables of raw without a default, sorted.
func requiredVariables(raw []byte) ([]string, error) {
	vars, err := variableMap(raw)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if vars[name] == nil {
			out = append(out, name)
		}
	}
	return out, nil
}

// unmark writes every marker in the strings of v back as ${NAME}.
func unmark(v map[string]any, required []string) {
	for k, x := range v {
		v[k] = unmarkValue(x, required)
	}
}

func unmarkValue(v any, required []string) any {
	switch t := v.(type) {
	case string:
		return unmarkString(t, required)
	case map[string]any:
		unmark(t, required)
	case []any:
		for i := range t {
			t[i] = unmarkValue(t[i], required)
		}
	}
	return v
}

func unmarkString(s string, required []string) string {
	return markerRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := markerRE.FindStringSubmatch(m)
		i, err := strconv.Atoi(sub[1])
		if err != nil || i >= len(required) {
			return m
		}
		return "${" + required[i] + "}"
	})
}
