package contract

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/values"
)

const clusterGroup = "cluster.x-k8s.io"

// targetNamespaceVar matches ${NAMESPACE}, with a default or not: the
// variable clusterctl generate cluster sets to the target namespace.
var targetNamespaceVar = regexp.MustCompile(`^\$\{\s*NAMESPACE\s*(:?[=-][^}]*)?\}$`)

// classFile is the file clusterctl fetches for a topology class.
func classFile(class string) string { return "clusterclass-" + class + ".yaml" }

// parseTemplate parses a template or ClusterClass file.
func (l *linter) parseTemplate(v *view, f release.File) []*object {
	return l.parse(v, f, false)
}

func (l *linter) lintTemplate(v *view, f release.File, objs []*object, classes []release.File) {
	file := v.path(f.Name)
	clusters := 0
	// Inline ClusterClasses: clusterctl still fetches clusterclass-<name>.yaml
	// for a topology Cluster (addClusterClassIfMissing), inline or not.
	inline := map[string]bool{}
	for _, o := range objs {
		if o.is(clusterGroup, "ClusterClass") {
			inline[o.name] = true
		}
	}
	shipped := func(class string) bool {
		return slices.ContainsFunc(classes, func(c release.File) bool { return c.Name == classFile(class) })
	}
	// Namespaces: clusterctl moves every object into the target namespace,
	// so one namespace for all (unset, ${NAMESPACE} or a literal) is what the
	// contract asks; objects in different namespaces differ for kubectl users.
	nsOf := func(o *object) string {
		if strings.HasPrefix(o.namespace, "${NAMESPACE") || strings.HasPrefix(o.namespace, "${ NAMESPACE") {
			return ""
		}
		return o.namespace
	}
	namespaces := map[string]int{}
	for _, o := range objs {
		if o.kind != "Namespace" || o.group() != "" {
			namespaces[nsOf(o)]++
		}
	}
	nsObjects := 0
	for _, o := range objs {
		if o.kind == "Namespace" && o.group() == "" {
			nsObjects++
		}
	}
	for _, o := range objs {
		if o.kind == "Namespace" && o.group() == "" {
			// The target namespace itself, alone: clusterctl generate
			// cluster | kubectl apply -f - works (the Namespace exists and
			// is applied unchanged); only deleting the generated file
			// deletes the namespace, and all in it.
			if nsObjects == 1 && targetNamespaceVar.MatchString(o.name) {
				l.addSev(RuleTemplateNS, Warning, file, o.ID(), "kind", "the template creates its own target namespace: clusterctl generate cluster | kubectl apply -f - works, but kubectl delete -f of the generated file deletes the namespace %s and everything in it, other clusters too; a cluster template must assume the target namespace exists: remove the Namespace", o.name)
				continue
			}
			l.add(RuleTemplateNS, file, o.ID(), "kind", "a cluster template must assume the target namespace exists; clusterctl renames this Namespace to it")
			continue
		}
		if ns := nsOf(o); ns != "" && len(namespaces) > 1 {
			l.add(RuleTemplateOneNS, file, o.ID(), "metadata.namespace", "namespace %q while other objects of the template are in %s: clusterctl moves all into the target namespace, kubectl apply does not; leave it unset or write ${NAMESPACE}", o.namespace, otherNamespaces(namespaces, ns))
		}
		if !o.is(clusterGroup, "Cluster") {
			continue
		}
		clusters++
		if get(o.m, "spec", "topology") == nil {
			continue
		}
		// v1beta2 names the class in spec.topology.classRef.name, v1beta1
		// (and older) in spec.topology.class; the API server requires it.
		field := "spec.topology.class"
		if strings.HasSuffix(o.apiVersion, "/v1beta2") {
			field = "spec.topology.classRef.name"
		}
		class := getString(o.m, strings.Split(field, ".")...)
		switch {
		case class == "":
			hint := ""
			if old := getString(o.m, "spec", "topology", "class"); old != "" && field != "spec.topology.class" {
				hint = fmt.Sprintf(" (spec.topology.class %q is v1beta1's field, which %s does not have)", old, o.apiVersion)
			}
			l.add(RuleTopologyClass, file, o.ID(), field, "the topology Cluster names no class%s: the API server refuses it (%s is required), and clusterctl generate cluster has no ClusterClass to fetch; set %s", hint, field, field)
		case strings.Contains(class, "${") && len(inline) > 0:
			// The class comes with the template, so no earlier flavor puts
			// it in the cluster: clusterctl fetches the file and fails,
			// unless another flavor that ships it was applied first.
			want := substituteDefaults(class)
			if shipped(want) {
				break
			}
			if need, ok := v.topology().Need(f.Name, class); ok {
				l.addSev(RuleClassVariable, Warning, file, o.ID(), field, "class %q holds a variable; %s: %s", class, needsFirst(f.Name, need), needsWhy(class))
				break
			}
			l.add(RuleClassVariable, file, o.ID(), field, "class %q holds a variable and the template ships ClusterClass %s inline, but the release has no %s: clusterctl generate cluster fetches clusterclass-<class>.yaml before it reads the template's objects and fails; ship the class file, or name the class literally", class, strings.Join(sortedKeys(inline), ", "), classFile(want))
		case strings.Contains(class, "${"):
			if need, ok := v.topology().Need(f.Name, class); ok {
				l.addSev(RuleClassVariable, Warning, file, o.ID(), field, "class %q holds a variable; %s: %s", class, needsFirst(f.Name, need), needsWhy(class))
				break
			}
			l.addSev(RuleClassVariable, Warning, file, o.ID(), field, "class %q holds a variable; the ClusterClass file clusterctl fetches depends on the user's environment (it works only where the class is already in the cluster)", class)
		case v.complete || len(classes) > 0:
			if shipped(class) {
				break
			}
			// A class another flavor ships: users apply that flavor
			// first, as its provider documents (a warning naming both).
			if need, ok := v.topology().Need(f.Name, class); ok {
				l.addSev(RuleTemplateClass, Warning, file, o.ID(), field, "class %q has no %s in the release; %s: %s", class, classFile(class), needsFirst(f.Name, need), needsWhy(class))
				break
			}
			also := ""
			if inline[class] {
				also = " (the template ships it inline, but clusterctl generate cluster fetches the file before it reads the template's objects, and fails unless the class is already in the cluster)"
			}
			l.add(RuleTemplateClass, file, o.ID(), field, "class %q has no %s in the release%s", class, classFile(class), also)
		}
	}
	switch {
	case clusters == 0 && len(inline) == 0 && len(objs) > 0:
		l.add(RuleTemplateCluster, file, "", "", "no cluster.x-k8s.io Cluster (nor a ClusterClass) in the template")
	case len(objs) == 0 && noDocuments(f.Data):
		l.add(RuleTemplateCluster, file, "", "", "the template holds no object at all: clusterctl generate cluster prints nothing for this flavor")
	}
}

// needsFirst says which flavor a topology flavor needs applied first:
// "flavor topology needs flavor clusterclass (cluster-template-clusterclass.yaml)
// applied first, which ships it".
func needsFirst(file string, need values.Need) string {
	var them []string
	for i, f := range need.Files {
		them = append(them, fmt.Sprintf("%s (%s)", flavorName(need.Flavors()[i]), f))
	}
	flavor, _ := release.FlavorOf(file)
	which := "flavor " + them[0]
	if len(them) > 1 {
		which = "one of the flavors " + strings.Join(them, ", ")
	}
	return fmt.Sprintf("flavor %s needs %s applied first, which ships ClusterClass %s", flavorName(flavor), which, need.Class)
}

// needsWhy is why a topology flavor works only after the class's flavor.
func needsWhy(class string) string {
	file := classFile(class)
	if strings.Contains(class, "${") {
		file = "clusterclass-<class>.yaml"
	}
	return fmt.Sprintf("clusterctl generate cluster fetches %s for a class the management cluster does not have yet, and fails without it; once that flavor's objects are applied, the class is there and nothing is fetched. Ship %s to make the flavor work on its own", file, file)
}

// flavorName names a flavor for people: the default flavor is "(default)".
func flavorName(flavor string) string {
	if flavor == "" {
		return "(default)"
	}
	return flavor
}

// sharedGroup says whether an API group is one of Cluster API's, whose
// kinds come from several providers.
func sharedGroup(group string) bool {
	return group == clusterGroup || strings.HasSuffix(group, "."+clusterGroup)
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// noDocuments says whether a file holds no document but empty and null
// ones ("---" alone): it parses, and there is nothing in it.
func noDocuments(data []byte) bool {
	raws, err := splitDocuments(data)
	if err != nil {
		return false
	}
	for _, raw := range raws {
		if d := decodeDocument(raw, false); d.err != nil || d.v != nil {
			return false
		}
	}
	return true
}

// lintOwnKinds reports the kinds a template or ClusterClass file creates or
// refers to that belong to an API group of the provider's own CRDs but
// have no CRD in its components: kubectl apply and clusterctl fail with
// "no matches for kind", and core Cluster API cannot resolve a reference.
// defined lists the CRDs' group/kind; nil when the components are not
// among the files linted.
func (l *linter) lintOwnKinds(v *view, f release.File, objs []*object, defined []string) {
	if len(defined) == 0 {
		return
	}
	file := v.path(f.Name)
	groups := map[string][]string{}
	for _, gk := range defined {
		g, k, _ := strings.Cut(gk, "/")
		groups[g] = append(groups[g], k)
	}
	seen := map[string]bool{}
	check := func(o *object, field, group, kind string) {
		kinds, own := groups[group]
		if !own || slices.Contains(kinds, kind) || seen[group+"/"+kind] {
			return
		}
		// The *.cluster.x-k8s.io groups are shared: a CAPA template's
		// KubeadmConfigTemplate is the kubeadm provider's, beside CAPA's
		// EKSConfig. There a kind is the provider's when it begins as one
		// of its kinds does (HCloudRemediationTemplate beside HCloudMachine).
		if sharedGroup(group) && !slices.ContainsFunc(kinds, func(k string) bool { return commonPrefix(k, kind) >= 3 }) {
			return
		}
		seen[group+"/"+kind] = true
		l.add(RuleOwnKind, file, o.ID(), field, "kind %s of group %s has no CustomResourceDefinition in the components, which define the group's other kinds (%s): kubectl apply and clusterctl fail with 'no matches for kind'; add the CRD, or name a kind the provider defines",
			kind, group, strings.Join(slices.Sorted(slices.Values(kinds)), ", "))
	}
	for _, o := range objs {
		check(o, "kind", o.group(), o.kind)
		walkRefs(o, func(path, group, kind string) { check(o, path+".kind", group, kind) })
	}
}

// otherNamespaces lists the namespaces of counts other than ns, "unset" for "".
func otherNamespaces(counts map[string]int, ns string) string {
	var out []string
	for _, k := range sortedKeys(counts) {
		if k == ns {
			continue
		}
		if k == "" {
			k = "the target namespace (unset or ${NAMESPACE})"
		}
		out = append(out, k)
	}
	return strings.Join(out, ", ")
}

// substituteDefaults replaces each ${VAR:=default} (or :-, =, -) with its
// default and any other ${VAR} with VAR, as a user who sets nothing sees it.
func substituteDefaults(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return b.String() + s
		}
		j := strings.Index(s[i:], "}")
		if j < 0 {
			return b.String() + s
		}
		b.WriteString(s[:i])
		expr := s[i+2 : i+j]
		name, def := expr, ""
		if k := strings.IndexAny(expr, ":=-"); k >= 0 {
			name, def = expr[:k], strings.TrimLeft(expr[k:], ":=-")
		}
		if def == "" {
			def = strings.ToLower(strings.TrimSpace(name))
		}
		b.WriteString(def)
		s = s[i+j+1:]
	}
}

// lintClassVariables reports ClusterClass variables without required
// (CAPI605), in ClusterClass files and in templates that ship a class
// inline.
func (l *linter) lintClassVariables(file string, objs []*object) {
	for _, o := range objs {
		if !o.is(clusterGroup, "ClusterClass") || (o.apiVersion != clusterGroup+"/v1beta1" && o.apiVersion != clusterGroup+"/v1beta2") {
			continue
		}
		vars, _ := get(o.m, "spec", "variables").([]any)
		for i, v := range vars {
			m, ok := v.(map[string]any)
			if !ok {
				continue
			}
			if _, ok := m["required"]; ok {
				continue
			}
			what := "Cluster API v1.11 and later refuse it"
			if o.apiVersion == clusterGroup+"/v1beta1" {
				what = "Cluster API v1.11 and later refuse it (v1.10 and older filled in required: false with a webhook they no longer ship)"
			}
			l.add(RuleCCVariableRequired, file, o.ID(), fmt.Sprintf("spec.variables[%d].required", i), "variable %v sets no required, which the ClusterClass CRD requires and does not default: %s; set required: true or false", m["name"], what)
		}
	}
}

func (l *linter) lintClusterClass(v *view, f release.File, objs []*object) {
	file := v.path(f.Name)
	want, _ := strings.CutSuffix(strings.TrimPrefix(f.Name, "clusterclass-"), ".yaml")
	var classes []string
	for _, o := range objs {
		walk(o.m, "", func(path string, s string) {
			if !strings.Contains(s, "$") {
				return
			}
			if vars, err := getVariables([]byte(s)); err == nil && len(vars) > 0 {
				l.add(RuleCCVariables, file, o.ID(), path, "variables %s: ClusterClass files should hold none", strings.Join(vars, ", "))
			}
		})
		if o.namespace != "" {
			l.add(RuleCCNamespace, file, o.ID(), "metadata.namespace", "namespace %q: objects of a ClusterClass file should set none; clusterctl installs them in the Cluster's namespace", o.namespace)
		}
		if !o.is(clusterGroup, "ClusterClass") {
			continue
		}
		classes = append(classes, o.name)
		walkMaps(get(o.m, "spec"), "spec", func(path string, m map[string]any) {
			if _, ok := m["namespace"]; ok && m["name"] != nil && m["kind"] != nil {
				l.add(RuleCCRefNamespace, file, o.ID(), path+".namespace", "reference to %s/%v sets namespace %v; references should not", m["kind"], m["name"], m["namespace"])
			}
		})
		if o.name != want {
			l.add(RuleCCFileName, file, o.ID(), "metadata.name", "ClusterClass %s is in %s; clusterctl looks for it in %s", o.name, f.Name, classFile(o.name))
		}
	}
	if len(classes) == 0 && (len(objs) > 0 || noDocuments(f.Data)) {
		l.add(RuleCCFileName, file, "", "", "no ClusterClass in the file; clusterctl expects ClusterClass %s here", want)
	}
}

// walk calls fn for every string key and value below v, with its field path.
func walk(v any, path string, fn func(path, s string)) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := join(path, k)
			fn(p, k)
			walk(v[k], p, fn)
		}
	case []any:
		for i, e := range v {
			walk(e, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case string:
		fn(path, v)
	}
}

// walkMaps calls fn for every map below v, with its field path.
func walkMaps(v any, path string, fn func(path string, m map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		fn(path, v)
		for _, k := range sortedKeys(v) {
			walkMaps(v[k], join(path, k), fn)
		}
	case []any:
		for i, e := range v {
			walkMaps(e, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	if strings.ContainsAny(k, "./") {
		return path + "[" + k + "]"
	}
	return path + "." + k
}
