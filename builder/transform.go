package builder

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// ManagerContainer is the container name clusterctl and the provider
// contract look for in a provider's Deployment.
const ManagerContainer = "manager"

// transformer applies the documented release transforms to one rendered
// provider and checks its namespace layout.
type transformer struct {
	file  string // names the rendered output in errors
	label string
	// pulls are the pull policies the config sets, each on the containers
	// it names (the provider's own manager); none keeps what the tree sets.
	pulls []pull

	// relabelled counts, by the value the tree set, the objects whose
	// provider label setLabels rewrote (the lint reports them, CAPI203);
	// labelled lists the objects it gave the label they lacked.
	relabelled map[string][]string
	labelled   []string
}

// pull is a pull policy for some containers, and what asked for it.
type pull struct {
	policy string
	on     []container
}

// objName names an object in errors: Kind/name or Kind/namespace/name.
func objName(r *resource.Resource) string {
	if ns := r.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", r.GetKind(), ns, r.GetName())
	}
	return fmt.Sprintf("%s %s", r.GetKind(), r.GetName())
}

type container struct {
	owner *resource.Resource
	list  string // initContainers, containers, ephemeralContainers
	field string // e.g. spec.template.spec.containers[0]
	node  *yaml.RNode
}

// containers lists the containers of r where release.ContainerPaths says
// its kind keeps them: the one walk of pod-bearing kinds the lint, verify
// and mirror ask too.
func containers(r *resource.Resource) []container {
	var out []container
	for _, p := range release.ContainerPaths(r.GetKind()) {
		l, err := r.Pipe(yaml.Lookup(p...))
		if err != nil || l == nil || l.YNode().Kind != yaml.SequenceNode {
			continue
		}
		items, _ := l.Elements()
		for i, c := range items {
			out = append(out, container{owner: r, list: p[len(p)-1], field: release.ContainerField(p, i), node: c})
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

// apply transforms rm in place and returns the provider namespace ("" when
// there is not exactly one Namespace: the lint reports that, CAPI201).
func (t *transformer) apply(rm resmap.ResMap) (string, error) {
	ns := t.namespace(rm)
	if err := t.setPullPolicies(); err != nil {
		return "", err
	}
	return ns, t.setLabels(rm)
}

// namespace returns the name of the one Namespace object, or "" when there
// is none or several. The namespace layout is the lint's to check (CAPI201,
// CAPI202), so that its waivers apply and every finding is reported at once.
func (t transformer) namespace(rm resmap.ResMap) string {
	ns := ""
	for _, r := range rm.Resources() {
		if r.GetKind() == "Namespace" && r.GetGvk().Group == "" {
			if ns != "" {
				return ""
			}
			ns = r.GetName()
		}
	}
	return ns
}

// managerPull is where image.pullPolicy goes, as a Makefile's
// manager_pull_policy.yaml patch sets it: the Deployment container named
// manager that carries the release image (else, when no container of that
// name does, the release image's containers, init containers aside). Other
// containers keep theirs, even where a replacements: entry copied the
// release image into them (a bundled operator's init container), and
// without image.pullPolicy the tree's own policy stays (some ship Always
// on purpose).
func managerPull(release []container) []container {
	targets := slices.DeleteFunc(slices.Clone(release), func(c container) bool { return !isManager(c) })
	if len(targets) == 0 {
		targets = slices.DeleteFunc(slices.Clone(release), func(c container) bool { return c.list == "initContainers" })
	}
	return targets
}

func (t transformer) setPullPolicies() error {
	for _, p := range t.pulls {
		for _, c := range p.on {
			if err := c.node.PipeE(yaml.SetField("imagePullPolicy", yaml.NewStringRNode(p.policy))); err != nil {
				return fmt.Errorf("%s: %s: field %s.imagePullPolicy: %w", t.file, objName(c.owner), c.field, err)
			}
		}
	}
	return nil
}

// setLabels puts the provider label on every object, as clusterctl does on
// install: a missing one is recorded in labelled, a different value the
// tree set (e.g. kubevirt for infrastructure-kubevirt) in relabelled.
func (t *transformer) setLabels(rm resmap.ResMap) error {
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
			t.labelled = append(t.labelled, r.GetKind()+"/"+r.GetName())
		case got != t.label:
			labels[provider.ProviderLabel] = t.label
			if err := r.SetLabels(labels); err != nil {
				return fmt.Errorf("%s: %s: field metadata.labels: %w", t.file, objName(r), err)
			}
			if t.relabelled == nil {
				t.relabelled = map[string][]string{}
			}
			t.relabelled[got] = append(t.relabelled[got], r.GetKind()+"/"+r.GetName())
		}
	}
	return nil
}
