package builder

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/capirepo/capirepo/provider"
)

// ManagerContainer is the container name clusterctl and the provider
// contract look for in a provider's Deployment.
const ManagerContainer = "manager"

// transformer applies the documented release transforms to one rendered
// provider and checks its namespace layout.
type transformer struct {
	file  string // names the rendered output in errors
	label string
	// pullPolicy, when set, goes on the containers that carry the release
	// image (the provider's own manager); "" keeps what the tree sets.
	pullPolicy string
}

// objName names an object in errors: Kind/name or Kind/namespace/name.
func objName(r *resource.Resource) string {
	if ns := r.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", r.GetKind(), ns, r.GetName())
	}
	return fmt.Sprintf("%s %s", r.GetKind(), r.GetName())
}

// podSpecPaths are where workloads keep their pod spec.
var podSpecPaths = [][]string{
	{"spec", "template", "spec"},                        // Deployment, DaemonSet, StatefulSet, Job, ReplicaSet
	{"spec", "jobTemplate", "spec", "template", "spec"}, // CronJob
}

type container struct {
	owner *resource.Resource
	field string // e.g. spec.template.spec.containers[0]
	node  *yaml.RNode
}

func containers(r *resource.Resource) []container {
	var out []container
	for _, p := range podSpecPaths {
		spec, err := r.Pipe(yaml.Lookup(p...))
		if err != nil || spec == nil {
			continue
		}
		for _, list := range []string{"initContainers", "containers"} {
			l := spec.Field(list)
			if l == nil || l.Value.YNode().Kind != yaml.SequenceNode {
				continue
			}
			items, _ := l.Value.Elements()
			for i, c := range items {
				out = append(out, container{owner: r, field: fmt.Sprintf("%s.%s[%d]", strings.Join(p, "."), list, i), node: c})
			}
		}
	}
	return out
}

func (c container) name() string  { return yaml.GetValue(c.node.Field("name").Value) }
func (c container) image() string { return fieldString(c.node, "image") }

func fieldString(n *yaml.RNode, name string) string {
	f := n.Field(name)
	if f == nil {
		return ""
	}
	return yaml.GetValue(f.Value)
}

// splitImage splits registry/repo[:tag][@digest] into name, tag and digest.
func splitImage(s string) (name, tag, digest string) {
	name, digest, _ = strings.Cut(s, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	return name, tag, digest
}

// apply transforms rm in place and returns the provider namespace.
// release are the containers that carry the release image.
func (t transformer) apply(rm resmap.ResMap, release []container) (string, error) {
	ns, err := t.checkNamespaces(rm)
	if err != nil {
		return "", err
	}
	if err := t.setPullPolicy(release); err != nil {
		return "", err
	}
	return ns, t.setLabels(rm)
}

// checkNamespaces requires exactly one Namespace object and every namespaced
// object in it: clusterctl moves all of them into its target namespace.
func (t transformer) checkNamespaces(rm resmap.ResMap) (string, error) {
	var nsObjs []*resource.Resource
	for _, r := range rm.Resources() {
		if r.GetKind() == "Namespace" && r.GetGvk().Group == "" {
			nsObjs = append(nsObjs, r)
		}
	}
	switch len(nsObjs) {
	case 0:
		return "", fmt.Errorf("%s: no Namespace object: a provider's components hold exactly one, the namespace the provider runs in (add it to the kustomization)", t.file)
	case 1:
	default:
		names := make([]string, len(nsObjs))
		for i, n := range nsObjs {
			names[i] = n.GetName()
		}
		return "", fmt.Errorf("%s: %d Namespace objects (%s): clusterctl accepts exactly one", t.file, len(nsObjs), strings.Join(names, ", "))
	}
	ns := nsObjs[0].GetName()
	for _, r := range rm.Resources() {
		if r.GetGvk().IsClusterScoped() {
			continue
		}
		switch got := r.GetNamespace(); got {
		case ns:
		case "":
			return "", fmt.Errorf("%s: %s: field metadata.namespace is empty; every namespaced object must be in the provider namespace %q", t.file, objName(r), ns)
		default:
			return "", fmt.Errorf("%s: %s: field metadata.namespace is %q, not the provider namespace %q", t.file, objName(r), got, ns)
		}
	}
	return ns, nil
}

// setPullPolicy sets the configured pull policy on the release image's
// containers only: bundled third-party containers keep theirs, and without
// image.pullPolicy the tree's own policy stays (some ship Always on purpose).
func (t transformer) setPullPolicy(release []container) error {
	if t.pullPolicy == "" {
		return nil
	}
	for _, c := range release {
		if err := c.node.PipeE(yaml.SetField("imagePullPolicy", yaml.NewStringRNode(t.pullPolicy))); err != nil {
			return fmt.Errorf("%s: %s: field %s.imagePullPolicy: %w", t.file, objName(c.owner), c.field, err)
		}
	}
	return nil
}

// setLabels puts the provider label on every object, keeping an equal label
// and refusing a different one.
func (t transformer) setLabels(rm resmap.ResMap) error {
	for _, r := range rm.Resources() {
		labels := r.GetLabels()
		switch got, ok := labels[provider.ProviderLabel]; {
		case !ok:
			if labels == nil {
				labels = map[string]string{}
			}
			labels[provider.ProviderLabel] = t.label
			if err := r.SetLabels(labels); err != nil {
				return fmt.Errorf("%s: %s: field metadata.labels: %w", t.file, objName(r), err)
			}
		case got != t.label:
			return fmt.Errorf("%s: %s: field metadata.labels[%s] is %q, but the provider is %q", t.file, objName(r), provider.ProviderLabel, got, t.label)
		}
	}
	return nil
}
