package release

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/drone/envsubst/v2"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/capirepo/capirepo/internal/clusterctlvars"
)

// The one answer to "which containers does a release run": every kind that
// runs pods, and every container list of a pod spec. The builder's image
// edit, the lint, verify --images and mirror --images all ask it, so a
// mirror copies exactly the images verify checks.

// ContainerLists are the fields of a pod spec that hold containers.
var ContainerLists = []string{"initContainers", "containers", "ephemeralContainers"}

// PodSpecPath is where an object of kind keeps its pod spec; nil for a kind
// that runs no containers.
func PodSpecPath(kind string) []string {
	switch kind {
	case "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job":
		return []string{"spec", "template", "spec"}
	case "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template", "spec"}
	case "Pod":
		return []string{"spec"}
	}
	return nil
}

// ContainerPaths are the paths of the container lists of an object of kind
// (pod spec path, then the list's field), for callers that hold the object
// in another shape (kustomize's RNodes) and resolve them there; nil for a
// kind that runs no containers.
func ContainerPaths(kind string) [][]string {
	spec := PodSpecPath(kind)
	if spec == nil {
		return nil
	}
	out := make([][]string, len(ContainerLists))
	for i, l := range ContainerLists {
		out[i] = append(append([]string(nil), spec...), l)
	}
	return out
}

// ContainerField is the field of a container in its object, e.g.
// spec.template.spec.containers[0], from its list's path and index.
func ContainerField(path []string, index int) string {
	return strings.Join(path, ".") + "[" + strconv.Itoa(index) + "]"
}

// ClusterctlReads says whether clusterctl reads the images of a container
// list of kind: `clusterctl init list-images` lists them and the clusterctl
// config's images: overrides rewrite them (util.InspectImages and
// util.FixImages: the containers and init containers of Deployments and
// DaemonSets, nothing else).
func ClusterctlReads(kind, list string) bool {
	return (kind == "Deployment" || kind == "DaemonSet") && (list == "containers" || list == "initContainers")
}

// Container is one container of an object.
type Container struct {
	// List is the pod spec field that holds it (initContainers, containers,
	// ephemeralContainers), Index its place there.
	List  string
	Index int
	// Field is its path in the object, e.g. spec.template.spec.containers[0].
	Field string
	Name  string
	Image string
}

// Containers lists the containers of an object given as the map of its
// fields (as it decodes from YAML), list by list in ContainerLists' order.
func Containers(obj map[string]any) []Container {
	kind, _ := obj["kind"].(string)
	var out []Container
	for _, p := range ContainerPaths(kind) {
		var v any = obj
		for _, k := range p {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		items, _ := v.([]any)
		for i, it := range items {
			m, _ := it.(map[string]any)
			name, _ := m["name"].(string)
			img, _ := m["image"].(string)
			out = append(out, Container{List: p[len(p)-1], Index: i, Field: ContainerField(p, i), Name: name, Image: img})
		}
	}
	return out
}

// ImageUse is one container of a components file and the image it runs.
type ImageUse struct {
	Provider  string `json:"provider"`
	File      string `json:"file"`
	Object    string `json:"object"` // Kind namespace/name
	Container string `json:"container"`
	Image     string `json:"image"`
	// Pulls is the image the container pulls when clusterctl installs the
	// file without the variables set: Image with each ${VAR:=default} at
	// its default, as clusterctl's processor gives it; "" when a variable
	// has no default (clusterctl init then needs it set).
	Pulls string `json:"pulls,omitempty"`
	// Field is the container's path in the object.
	Field string `json:"field"`
	// Clusterctl says whether `clusterctl init list-images` lists the
	// image and the clusterctl config's images: overrides rewrite it
	// (ClusterctlReads).
	Clusterctl bool `json:"clusterctl"`
}

func (u ImageUse) String() string {
	return fmt.Sprintf("%s %s: %s container %s: %s", u.Provider, u.File, u.Object, u.Container, u.Image)
}

// Images lists the containers of every workload in the components files of
// the release, and the images they run (Containers: every pod-bearing kind,
// every container list). A container without an image is left out: the
// lint reports it.
func (r *Release) Images() ([]ImageUse, error) {
	var out []ImageUse
	for _, p := range r.Providers {
		f, ok := p.File(p.ComponentsFile)
		if !ok {
			return nil, fmt.Errorf("%s %s: no components file %s", p.Label(), p.Version, p.ComponentsFile)
		}
		uses, err := ComponentImages(p.Label(), p.ComponentsFile, f.Data)
		if err != nil {
			return nil, err
		}
		out = append(out, uses...)
	}
	return out, nil
}

// ComponentImages lists the containers of the workloads in one components
// YAML (label and file name the uses), as Images does.
func ComponentImages(label, file string, data []byte) ([]ImageUse, error) {
	var out []ImageUse
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", label, file, err)
		}
		kind, _ := obj["kind"].(string)
		cs := Containers(obj)
		if len(cs) == 0 {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		id := kind + " " + name
		if ns, _ := meta["namespace"].(string); ns != "" {
			id = kind + " " + ns + "/" + name
		}
		for _, c := range cs {
			if c.Image == "" {
				continue
			}
			pulls, err := pulledImage(c.Image)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %s: %s: %w", label, file, id, c.Field, err)
			}
			out = append(out, ImageUse{Provider: label, File: file, Object: id, Container: c.Name, Image: c.Image, Pulls: pulls, Field: c.Field,
				Clusterctl: ClusterctlReads(kind, c.List)})
		}
	}
	return out, nil
}

// pulledImage is img with each variable at its default, as clusterctl's
// processor substitutes it; "" when a variable has no default
// (clusterctlvars.Map, the variables clusterctl lists as required).
func pulledImage(img string) (string, error) {
	if !strings.Contains(img, "${") {
		return img, nil
	}
	vars, err := clusterctlvars.Map([]byte(img))
	if err != nil {
		return "", fmt.Errorf("image %q: %w", img, err)
	}
	for _, def := range vars {
		if def == nil {
			return "", nil
		}
	}
	out, err := envsubst.Eval(img, func(string) string { return "" })
	if err != nil {
		return "", fmt.Errorf("image %q: %w", img, err)
	}
	return out, nil
}
