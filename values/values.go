package values

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/internal/clusterctlvars"
	"github.com/capirepo/capirepo/release"
)

// The values clusterctl itself sets for `clusterctl generate cluster`
// (cli/config.go:templateOptionsToVariables), as capirepo sets them.
const (
	// ClusterName is CLUSTER_NAME: a DNS-1123 subdomain, as clusterctl demands.
	ClusterName = "capirepo-verify"
	// KubernetesVersion is KUBERNETES_VERSION unless the caller gives another.
	KubernetesVersion = "v1.33.0"
)

// Placeholder is the stand-in of a required variable whose name suggests
// no other type and whose fields ask for nothing else. It is a DNS-1123
// label, so it is also valid where the variable names an object, a label
// value, a host name part or an image tag.
const Placeholder = "capirepo-placeholder"

// PlaceholderRegistry stands in for image registries and repositories: a
// reserved .invalid host, so an image built from it parses but never pulls.
const PlaceholderRegistry = "registry.invalid/capirepo"

// Fixed are the variables clusterctl sets itself for generate cluster:
// NAMESPACE, CLUSTER_NAME, KUBERNETES_VERSION ("" is KubernetesVersion)
// and the machine counts.
func Fixed(namespace, kubernetesVersion string) map[string]string {
	if kubernetesVersion == "" {
		kubernetesVersion = KubernetesVersion
	}
	return map[string]string{
		"NAMESPACE":                   namespace,
		"CLUSTER_NAME":                ClusterName,
		"KUBERNETES_VERSION":          kubernetesVersion,
		"CONTROL_PLANE_MACHINE_COUNT": "1",
		"WORKER_MACHINE_COUNT":        "1",
	}
}

// Real are the values a user gives; they win over every stand-in.
type Real struct {
	// Variables are for every file (--var, and --values files for every
	// flavor).
	Variables map[string]string
	// Flavors are for the template of one flavor, by flavor name (""
	// is cluster-template.yaml); they win over Variables there.
	Flavors map[string]map[string]string
	// Lookup finds a value for a required variable where clusterctl would
	// (the environment, the clusterctl config's variables); nil finds
	// none. The caller supplies it: nothing here reads the environment.
	Lookup func(name string) (string, bool)
}

// Options say what a Chooser knows besides the files it learns.
type Options struct {
	Real Real
	// OpenAPI returns the API server's OpenAPI v3 document of a group
	// version, for the schemas of built-in kinds; nil without a server
	// (then only the CRDs learned constrain stand-ins).
	OpenAPI func(gv schema.GroupVersion) (*spec3.OpenAPI, error)
}

// Chooser answers "what value does variable V get in file F" for the files
// of one release: a real value where the user gave one, else a stand-in
// (Set). It learns the schemas stand-ins must fit from the release's CRDs
// (LearnComponents, AddCRD), its ClusterClasses (LearnTemplate) and the
// server's OpenAPI (Options.OpenAPI). A Chooser is not safe for concurrent
// use.
type Chooser struct {
	real    Real
	schemas schemaSet
}

// New returns a Chooser that knows no file yet.
func New(o Options) *Chooser {
	return &Chooser{real: o.Real, schemas: schemaSet{openAPI: o.OpenAPI}}
}

// ForRelease returns a Chooser that learned every file of rel: the
// components' CRDs and the ClusterClasses of its flavors and clusterclass
// files.
func ForRelease(rel *release.Release, o Options) *Chooser {
	c := New(o)
	for _, p := range rel.Providers {
		c.LearnProvider(p)
	}
	return c
}

// LearnProvider learns one provider's files (see ForRelease).
func (c *Chooser) LearnProvider(p *release.Provider) {
	if f, ok := p.File(p.ComponentsFile); ok {
		c.LearnComponents(f.Data)
	}
	for _, f := range p.Files {
		c.LearnTemplate(f.Name, f.Data)
	}
}

// AddCRD makes a CRD's schemas known; an earlier CRD for the same kind wins.
func (c *Chooser) AddCRD(crd *unstructured.Unstructured) { c.schemas.addCRD(crd) }

// LearnComponents learns the CRDs of a components file (as written, before
// its variables are substituted).
func (c *Chooser) LearnComponents(raw []byte) {
	objs, err := toUnstructured(raw)
	if err != nil {
		return
	}
	for i := range objs {
		if objs[i].GetKind() == "CustomResourceDefinition" {
			c.schemas.addCRD(&objs[i])
		}
	}
}

// LearnTemplate learns the ClusterClasses of a flavor or clusterclass file
// (other files are ignored): a clusterclass-<class>.yaml makes <class> a
// class the release ships, which a Cluster's class variable may name.
func (c *Chooser) LearnTemplate(file string, raw []byte) {
	class, isClass := release.ClassOf(file)
	if !isClass && !release.IsFlavor(file) {
		return
	}
	if !isClass {
		class = ""
	}
	c.schemas.classes.learn(file, raw, class, c.learningValue(file))
}

// learningValue finds the value a variable of file takes where For's
// answer does not hang on the fields it lands in: a real value (the
// flavor's, the one for every file), and for a required variable the value
// clusterctl sets itself for generate cluster (Fixed, but NAMESPACE, which
// the caller sets) or what Real.Lookup finds. The classes of the file are
// learned with them, under the names the files' Clusters then name.
func (c *Chooser) learningValue(file string) func(name string, required bool) (string, bool) {
	flavor, inFlavor := release.FlavorOf(file)
	fixed := Fixed("", "")
	delete(fixed, "NAMESPACE")
	return func(name string, required bool) (string, bool) {
		if v, ok := c.realValue(flavor, inFlavor, name); ok {
			return v, true
		}
		if v, ok := fixed[name]; ok && required {
			return v, true
		}
		return c.lookup(name)
	}
}

// realValue is the real value the user gave name in a file of flavor (when
// inFlavor): the flavor's own (Real.Flavors), else the one for every file
// (Real.Variables).
func (c *Chooser) realValue(flavor string, inFlavor bool, name string) (string, bool) {
	if v, ok := c.real.Flavors[flavor][name]; ok && inFlavor {
		return v, true
	}
	v, ok := c.real.Variables[name]
	return v, ok
}

// lookup is what Real.Lookup finds for name (clusterctl's variables
// client: the environment, then the config's variables), which clusterctl
// asks before it takes a variable's default.
func (c *Chooser) lookup(name string) (string, bool) {
	if c.real.Lookup == nil {
		return "", false
	}
	return c.real.Lookup(name)
}

// Classes are the ClusterClasses learned.
func (c *Chooser) Classes() *Classes { return &c.schemas.classes }

// FieldSchema is the schema of the field at path (map keys and list
// indexes) of a kind; nil when nothing learned constrains it.
func (c *Chooser) FieldSchema(gvk schema.GroupVersionKind, path []any) *spec.Schema {
	return c.schemas.schemaFor(gvk).at(path)
}

// Set is the values one file gets beyond those the caller had set.
type Set struct {
	// Values are the variables' values: real ones and stand-ins.
	Values map[string]string
	// StandIns are the variables of Values that hold a stand-in.
	StandIns map[string]bool
	// Places are the fields each stand-in landed in.
	Places map[string][]Place
}

// Names are the variables of Values, sorted.
func (s Set) Names() []string { return slices.Sorted(maps.Keys(s.Values)) }

// For answers for one file of the release, named as published
// (cluster-template-<flavor>.yaml, clusterclass-<class>.yaml, the
// components file): set are the values the caller's clusterctl session
// already holds (Fixed, and the real Variables), which For keeps.
//
// Every variable of the file gets, in this order: the flavor's real value
// (Real.Flavors), the real value for every file (Real.Variables), what
// Real.Lookup finds (over the variable's default, as clusterctl asks its
// variables client first); a variable without a default and without any
// of these gets a stand-in: a value every field it lands in accepts (the
// name's guess when it fits, else what the field's schema asks for: an
// enum value, an integer in range, a list of minItems items, an object
// with its required properties, a string of the pattern or format), empty
// where it stands alone on a line for a YAML fragment, for a topology
// Cluster's class a class the release ships, and for its variables a
// value of the schema the class gives them.
func (c *Chooser) For(file string, raw []byte, set map[string]string) (Set, error) {
	flavor, ok := release.FlavorOf(file)
	return c.choose(file, flavor, ok, raw, set)
}

// ForClass is For on a clusterclass file clusterctl fetches while it
// generates flavor (a class the flavor's topology Clusters name): the
// flavor's real values (Real.Flavors) apply to it as to the flavor, since
// one generate run substitutes both with the same values.
func (c *Chooser) ForClass(flavor, file string, raw []byte, set map[string]string) (Set, error) {
	return c.choose(file, flavor, true, raw, set)
}

// choose is For, with the real values of flavor when inFlavor.
func (c *Chooser) choose(file, flavor string, inFlavor bool, raw []byte, set map[string]string) (Set, error) {
	vars, err := variableMap(raw)
	if err != nil {
		return Set{}, fmt.Errorf("%s: %w", file, err)
	}
	out := Set{Values: map[string]string{}, StandIns: map[string]bool{}}
	given := maps.Clone(set)
	if given == nil {
		given = map[string]string{}
	}
	var required []string
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if v, ok := c.realValue(flavor, inFlavor, name); ok {
			if cur, had := given[name]; !had || cur != v {
				out.Values[name], given[name] = v, v
			}
			continue
		}
		if _, ok := given[name]; ok {
			continue
		}
		if v, ok := c.lookup(name); ok { // over a default too, as clusterctl
			out.Values[name], given[name] = v, v
			continue
		}
		if vars[name] != nil {
			continue
		}
		required = append(required, name)
	}
	fileClass, _ := release.ClassOf(file)
	chosen, places := chooseStandIns(raw, fileClass, given, required, &c.schemas)
	chosen = parsingShape(raw, given, required, chosen)
	for _, name := range required {
		out.Values[name] = chosen[name]
		out.StandIns[name] = true
	}
	out.Places = places
	return out, nil
}

// parsingShape keeps the chosen stand-ins when the file parses with them,
// else takes the first of the other shapes Attempts tries (quoted, empty)
// that makes it parse, as the lint then only warns.
func parsingShape(raw []byte, given map[string]string, required []string, chosen map[string]string) map[string]string {
	parses := func(vals map[string]string) bool {
		out, err := substitute(raw, given, func(n string) (string, bool) { v, ok := vals[n]; return v, ok })
		if err != nil {
			return false
		}
		_, err = toUnstructured(out)
		return err == nil
	}
	if len(required) == 0 || parses(chosen) {
		return chosen
	}
	for _, shape := range []func(string) string{
		func(v string) string { return `"` + strings.ReplaceAll(v, `"`, "") + `"` },
		func(string) string { return "" },
	} {
		vals := maps.Clone(chosen)
		for _, name := range required {
			vals[name] = shape(chosen[name])
		}
		if parses(vals) {
			return vals
		}
	}
	return chosen
}

// File is For on a file of a provider of the release.
func (c *Chooser) File(p *release.Provider, name string, set map[string]string) (Set, error) {
	f, ok := p.File(name)
	if !ok {
		return Set{}, fmt.Errorf("%s %s: no file %s", p.Label(), p.Version, name)
	}
	return c.For(name, f.Data, set)
}

// errUnset tells clusterctl's processor that a variable is not set, so
// that its default applies.
var errUnset = errors.New("not set")

// Substitute processes raw as clusterctl does with the values given: every
// variable not among them takes its default; one without a default fails.
func Substitute(raw []byte, vals map[string]string) ([]byte, error) {
	return substitute(raw, vals, func(string) (string, bool) { return "", false })
}

// substitute processes raw as clusterctl does, with value giving the
// chosen variables and given the others; the rest take their defaults.
func substitute(raw []byte, given map[string]string, value func(string) (string, bool)) ([]byte, error) {
	return yamlprocessor.NewSimpleProcessor().Process(raw, func(name string) (string, error) {
		if v, ok := value(name); ok {
			return v, nil
		}
		if v, ok := given[name]; ok {
			return v, nil
		}
		return "", errUnset
	})
}

// variableMap lists the variables as clusterctl does, with their defaults
// (nil for none).
func variableMap(raw []byte) (map[string]*string, error) {
	if !bytes.Contains(raw, []byte("$")) {
		return map[string]*string{}, nil
	}
	return clusterctlvars.Map(raw)
}

// toUnstructured splits YAML into objects as clusterctl's
// util/yaml.ToUnstructured does (without its dependencies on a cluster
// client): every document that holds something, in order.
func toUnstructured(raw []byte) ([]unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var out []unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
			continue
		}
		var u unstructured.Unstructured
		if err := u.UnmarshalJSON(j); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
}

// Attempts are the values to try, in order, for whether a document can
// parse once its required variables are substituted as a user's values
// would be: the stand-ins For gives (scalars, empty for a YAML fragment),
// every variable as a quoted string, every variable empty.
func Attempts(raw []byte) []map[string]string {
	required, err := requiredVariables(raw)
	if err != nil {
		return nil
	}
	standIns, _ := chooseStandIns(raw, "", nil, required, &schemaSet{})
	quoted := map[string]string{}
	empty := map[string]string{}
	for _, name := range required {
		quoted[name] = `"` + strings.ReplaceAll(standIns[name], `"`, "") + `"`
		empty[name] = ""
	}
	return []map[string]string{standIns, quoted, empty}
}
