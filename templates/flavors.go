package templates

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/capirepo/capirepo/provider"
)

// flavor is one kustomization to render.
type flavor struct {
	name  string // flavor name as the folder gives it (distro-name when nested)
	dir   string
	class bool // clusterclass-<name> folder: a ClusterClass unless it holds a Cluster
	file  string
}

// flavorFile returns the file a flavor folder publishes: default and
// cluster-template render to cluster-template.yaml, cluster-template-<x>
// to itself, clusterclass-<x> to clusterclass-<x>.yaml (class is true: it
// becomes a flavor if it holds a Cluster), anything else to
// cluster-template-<name>.yaml. The name obeys the flavor-name rule.
func flavorFile(name string) (file string, class bool, err error) {
	switch {
	case name == DefaultFlavor || name == TemplatePrefix:
		return TemplateName(""), false, nil
	case strings.HasPrefix(name, TemplatePrefix+"-"):
		file = name + ".yaml"
	case strings.HasPrefix(name, ClusterClassPrefix):
		file, class = name+".yaml", true
	default:
		file = TemplateName(name)
	}
	if err := checkName(file); err != nil {
		return "", false, fmt.Errorf("flavor folder %q publishes %s: %w; rename the folder (e.g. %q), or leave it out with templates.exclude", name, file, err, suggestName(name))
	}
	return file, class, nil
}

var notNameChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// suggestName turns a folder name into one the flavor-name rule accepts.
func suggestName(name string) string {
	s := strings.Trim(notNameChars.ReplaceAllString(name, "-"), "-.")
	if s == "" || provider.CheckFlavorName(s) != nil {
		return "my-flavor"
	}
	return s
}

// renderFlavors renders the flavors on every core and adds them, comparing
// each with its committed render when the templates folder holds one.
func (c *collector) renderFlavors(jobs []flavor) error {
	out := make([][]byte, len(jobs))
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if out[i], errs[i] = c.render(j.dir); errs[i] != nil {
				errs[i] = fmt.Errorf("flavor %s (%s): %w", j.name, j.dir, errs[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i, j := range jobs {
		file := j.file
		committedNames := []string{file}
		if j.class {
			if holdsCluster(out[i]) {
				file = TemplateName(j.name)
				committedNames = []string{file}
			} else {
				// Some trees commit the render of flavors/clusterclass-<x>/ as
				// cluster-template-clusterclass-<x>.yaml: that is its committed render.
				committedNames = append(committedNames, TemplateName(j.name))
			}
		}
		if err := c.addFlavor(j, file, committedNames, out[i]); err != nil {
			return err
		}
	}
	return nil
}

// holdsCluster reports whether rendered YAML holds a cluster.x-k8s.io Cluster.
func holdsCluster(data []byte) bool {
	objs, err := Parse("", data)
	if err != nil {
		return true // not a ClusterClass file either: let it be checked as a template
	}
	for _, o := range objs {
		if o.GetKind() == "Cluster" && strings.HasPrefix(o.GetApiVersion(), "cluster.x-k8s.io/") {
			return true
		}
	}
	return false
}
