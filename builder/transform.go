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

// PullPolicy is what the manager container gets in a release, as cluster-api's
// own release manifests set it.
const PullPolicy = "IfNotPresent"

// ImageChange is a kustomize images entry: containers whose image name is
// Name get NewName (if set) and NewTag or Digest.
type ImageChange = provider.Image

// transformer applies the documented release transforms to one rendered
// provider and checks its namespace layout.
type transformer struct {
	file  string // names the rendered output in errors
	label string
	image ImageChange // Name "" means the manager container's image

	// relabelled counts, by the value the tree set, the objects whose
	// provider label setLabels rewrote (the lint reports them, CAPI203).
	relabelled map[string][]string
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

// apply transforms rm in place and returns the provider namespace ("" when
// there is not exactly one Namespace: the lint reports that, CAPI201).
func (t *transformer) apply(rm resmap.ResMap) (string, error) {
	ns := t.namespace(rm)
	if err := t.setImages(rm); err != nil {
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

// setImages points the selected image at the release image and tag, and sets
// the manager container's pull policy.
func (t transformer) setImages(rm resmap.ResMap) error {
	var all, managers []container
	for _, r := range rm.Resources() {
		for _, c := range containers(r) {
			all = append(all, c)
			if c.name() == ManagerContainer && r.GetKind() == "Deployment" {
				managers = append(managers, c)
			}
		}
	}
	want := t.image
	if want.Name == "" {
		if len(managers) == 0 {
			if want.NewName == "" && want.NewTag == "" && want.Digest == "" {
				return nil // nothing asked for; lint reports the missing manager
			}
			return fmt.Errorf("%s: no Deployment has a container named %q whose image the release image replaces; name the image in capirepo.yaml image.name", t.file, ManagerContainer)
		}
		want.Name, _, _ = splitImage(managers[0].image())
	}
	matched := false
	for _, c := range all {
		name, tag, digest := splitImage(c.image())
		if name != want.Name {
			continue
		}
		matched = true
		if want.NewName != "" {
			name = want.NewName
		}
		switch {
		case want.Digest != "":
			tag, digest = "", want.Digest
		case want.NewTag != "":
			tag, digest = want.NewTag, ""
		}
		img := name
		if tag != "" {
			img += ":" + tag
		}
		if digest != "" {
			img += "@" + digest
		}
		if err := c.node.PipeE(yaml.SetField("image", yaml.NewStringRNode(img))); err != nil {
			return fmt.Errorf("%s: %s: field %s.image: %w", t.file, objName(c.owner), c.field, err)
		}
	}
	if !matched {
		return fmt.Errorf("%s: no container image is named %q (capirepo.yaml image.name)", t.file, want.Name)
	}
	for _, c := range managers {
		if err := c.node.PipeE(yaml.SetField("imagePullPolicy", yaml.NewStringRNode(PullPolicy))); err != nil {
			return fmt.Errorf("%s: %s: field %s.imagePullPolicy: %w", t.file, objName(c.owner), c.field, err)
		}
	}
	return nil
}

// setLabels puts the provider label on every object. A different value the
// tree set (e.g. kubevirt for infrastructure-kubevirt) is replaced, as
// clusterctl replaces it on install, and recorded in relabelled.
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
