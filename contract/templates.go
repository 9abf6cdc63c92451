package contract

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/capirepo/capirepo/release"
)

const clusterGroup = "cluster.x-k8s.io"

// classFile is the file clusterctl fetches for a topology class.
func classFile(class string) string { return "clusterclass-" + class + ".yaml" }

// parseTemplate parses a template or ClusterClass file.
func (l *linter) parseTemplate(v *view, f release.File) []*object {
	return l.parse(v, f, false)
}

func (l *linter) lintTemplate(v *view, f release.File, objs []*object, classes []release.File) {
	file := v.path(f.Name)
	clusters := 0
	for _, o := range objs {
		if o.kind == "Namespace" && o.group() == "" {
			l.add(RuleTemplateNS, file, o.ID(), "kind", "a cluster template must assume the target namespace exists; clusterctl renames this Namespace to it")
			continue
		}
		if o.namespace != "" && !strings.HasPrefix(o.namespace, "${NAMESPACE") && !strings.HasPrefix(o.namespace, "${ NAMESPACE") {
			l.add(RuleTemplateOneNS, file, o.ID(), "metadata.namespace", "namespace %q: leave it unset or write ${NAMESPACE}", o.namespace)
		}
		if !o.is(clusterGroup, "Cluster") {
			continue
		}
		clusters++
		class, field := "", ""
		if c := getString(o.m, "spec", "topology", "classRef", "name"); c != "" {
			class, field = c, "spec.topology.classRef.name"
		} else if c := getString(o.m, "spec", "topology", "class"); c != "" {
			class, field = c, "spec.topology.class"
		}
		switch {
		case class == "":
		case strings.Contains(class, "${"):
			l.add(RuleClassVariable, file, o.ID(), field, "class %q holds a variable; the ClusterClass file clusterctl fetches depends on the user's environment", class)
		case v.complete || len(classes) > 0:
			if !slices.ContainsFunc(classes, func(c release.File) bool { return c.Name == classFile(class) }) {
				l.add(RuleTemplateClass, file, o.ID(), field, "class %q has no %s in the release", class, classFile(class))
			}
		}
	}
	if clusters == 0 && len(objs) > 0 {
		l.add(RuleTemplateCluster, file, "", "", "no cluster.x-k8s.io Cluster in the template")
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
	if len(classes) == 0 && len(objs) > 0 {
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
