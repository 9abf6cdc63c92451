package builder

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/provider"
)

// A provider may run several managers from several images (Sidero: caps-
// and sidero-controller-manager, both written with the placeholder
// controller, each given its image by its own `kustomize edit set image`).
// One images: edit cannot tell them apart, so the release image of each
// Deployment is set on the rendered Deployment (config images:), and an
// edit that would reach more than one Deployment is refused until the
// config says which image each runs.

// deploymentPlan is the release image of one images: entry.
type deploymentPlan struct {
	key                  string // the config key, images[i]
	img                  provider.DeploymentImage
	tag, digest, newName string
}

// deploymentPlans turns the provider's images: into plans; nil when it has
// none or the build keeps the tree's images.
func deploymentPlans(opts Options, s provider.Spec, version string) ([]deploymentPlan, error) {
	if len(s.Images) == 0 {
		return nil, nil
	}
	if opts.Image != "" {
		return nil, fmt.Errorf("%s %s sets one manager image, but %s gives the provider an image per Deployment (images:); set each entry's newName instead", option.Image, opts.Image, configName(opts))
	}
	if opts.KeepImage {
		return nil, nil
	}
	var out []deploymentPlan
	for i, img := range s.Images {
		p := deploymentPlan{key: fmt.Sprintf("images[%d]", i), img: img, newName: img.NewName, digest: img.Digest}
		if p.digest == "" {
			tag, err := img.TagFor(version)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.key, err)
			}
			p.tag = tag
		}
		out = append(out, p)
	}
	return out, nil
}

// configName names the build's config file as the tree does.
func configName(opts Options) string {
	if opts.Config != nil && opts.Config.File != "" {
		return rel(opts.Dir, opts.Config.File)
	}
	return provider.ConfigFile
}

// ref is the image the plan gives containers whose image is named name.
func (p deploymentPlan) ref(name string) string {
	if p.newName != "" {
		name = p.newName
	}
	if p.digest != "" {
		return name + "@" + p.digest
	}
	return name + ":" + p.tag
}

// setDeploymentImages sets each plan's image on its Deployment's containers
// in rm (rendered from kdir). required says every plan must find its
// Deployment (the provider's main components file). It returns, by plan,
// the containers it changed and the image name they had.
func setDeploymentImages(fs filesys.FileSystem, kdir, desc string, rm resmap.ResMap, plans []deploymentPlan, required bool) (map[string]*deploymentEdit, error) {
	var entries []imageEntry
	var parents map[string]string
	for _, p := range plans {
		if p.img.Name != "" {
			var err error
			if entries, parents, err = imageEntries(fs, kdir); err != nil {
				return nil, err
			}
			break
		}
	}
	var deployments []string
	for _, r := range rm.Resources() {
		if r.GetKind() == "Deployment" {
			deployments = append(deployments, r.GetName())
		}
	}
	out := map[string]*deploymentEdit{}
	for _, p := range plans {
		var found []*resource.Resource
		for _, r := range rm.Resources() {
			if r.GetKind() == "Deployment" && r.GetName() == p.img.Deployment {
				found = append(found, r)
			}
		}
		switch {
		case len(found) == 0 && required:
			return nil, fmt.Errorf("%s: %s.deployment %q names no Deployment of the release (Deployments: %s); name one as the release names it, namePrefix applied",
				desc, p.key, p.img.Deployment, orNone(deployments))
		case len(found) > 1:
			return nil, fmt.Errorf("%s: %s.deployment %q names Deployments in %d namespaces", desc, p.key, p.img.Deployment, len(found))
		case len(found) == 0:
			continue
		}
		targets, name, err := p.targets(found[0], entries, parents)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", desc, p.key, err)
		}
		ref := p.ref(name)
		for _, c := range targets {
			if err := c.node.PipeE(yaml.SetField("image", yaml.NewStringRNode(ref))); err != nil {
				return nil, fmt.Errorf("%s: %s: field %s.image: %w", desc, objName(c.owner), c.field, err)
			}
		}
		out[p.key] = &deploymentEdit{on: targets, was: name}
	}
	return out, nil
}

// deploymentEdit is what one plan changed.
type deploymentEdit struct {
	on  []container
	was string // the image name the containers had
}

// targets are the containers of d the plan sets, and the name (without tag)
// of the image they had: the container the plan names, else those whose
// image its name selects, else those that run the image of d's manager
// container (or of its only container).
func (p deploymentPlan) targets(d *resource.Resource, entries []imageEntry, parents map[string]string) ([]container, string, error) {
	cs := containers(d)
	var names []string
	for _, c := range cs {
		names = append(names, c.name())
	}
	nameOf := func(c container) string { n, _, _ := splitImage(c.image()); return n }
	var sel []container
	switch {
	case p.img.Container != "":
		sel = slices.DeleteFunc(slices.Clone(cs), func(c container) bool { return c.name() != p.img.Container })
		if len(sel) == 0 {
			return nil, "", fmt.Errorf("container %q: %s has no such container (containers: %s)", p.img.Container, objName(d), strings.Join(names, ", "))
		}
		if p.img.Name != "" && !p.selects(nameOf(sel[0]), entries, parents) {
			return nil, "", fmt.Errorf("name %q: container %s of %s runs %s", p.img.Name, p.img.Container, objName(d), sel[0].image())
		}
		return sel, nameOf(sel[0]), nil
	case p.img.Name != "":
		sel = slices.DeleteFunc(slices.Clone(cs), func(c container) bool { return !p.selects(nameOf(c), entries, parents) })
		if len(sel) == 0 {
			var imgs []string
			for _, c := range cs {
				imgs = append(imgs, c.name()+" ("+nameOf(c)+")")
			}
			return nil, "", fmt.Errorf("name %q selects no container of %s; it takes an images: entry's name or an image name as the containers have it, without tag: %s", p.img.Name, objName(d), strings.Join(imgs, ", "))
		}
	default:
		regular := slices.DeleteFunc(slices.Clone(cs), func(c container) bool { return c.list != "containers" })
		main := slices.DeleteFunc(slices.Clone(regular), func(c container) bool { return c.name() != ManagerContainer })
		if len(main) == 0 && len(regular) == 1 {
			main = regular
		}
		if len(main) == 0 {
			return nil, "", fmt.Errorf("%s has no container named %s: say which container runs the image (container: one of %s)", objName(d), ManagerContainer, strings.Join(names, ", "))
		}
		want := nameOf(main[0])
		sel = slices.DeleteFunc(slices.Clone(cs), func(c container) bool { return nameOf(c) != want })
	}
	return sel, nameOf(sel[0]), nil
}

// selects says whether the plan's name selects an image named rendered, as
// image.name does: by the name the containers have, or by an images:
// entry's name that renders to it.
func (p deploymentPlan) selects(rendered string, entries []imageEntry, parents map[string]string) bool {
	if p.img.Name == rendered {
		return true
	}
	for _, e := range entries {
		if e.name == p.img.Name && decidingEntry(entries, parents, e).renders() == rendered {
			return true
		}
	}
	return false
}

// oneDeployment refuses a release image that reached the containers of
// more than one Deployment: capirepo does not guess which image each of
// them runs. Init containers are left out: a bundled component's init
// container given the manager's image (a replacements: entry copying a
// plugin) is a step, not a second manager.
func oneDeployment(desc, from, cfgFile string, changed []container) error {
	byDeployment := map[string][]string{}
	names := map[string]string{}
	for _, c := range changed {
		if c.owner.GetKind() != "Deployment" || c.list == "initContainers" {
			continue
		}
		id := objName(c.owner)
		byDeployment[id] = append(byDeployment[id], c.name())
		names[id] = c.owner.GetName()
	}
	if len(byDeployment) < 2 {
		return nil
	}
	var lines, entries []string
	for _, id := range slices.Sorted(maps.Keys(byDeployment)) {
		lines = append(lines, fmt.Sprintf("%s: %s %s", id, plural(len(byDeployment[id]), "container", "containers"), strings.Join(byDeployment[id], ", ")))
		entries = append(entries, fmt.Sprintf("- {deployment: %s, newName: REGISTRY/IMAGE}", names[id]))
	}
	shown := ""
	if from != "" {
		shown = fmt.Sprintf(" (all %s in the tree)", from)
	}
	return fmt.Errorf("%s: the release image would go to the containers of %d Deployments%s, and capirepo does not guess which image each runs:\n  %s\nsay it in %s, in place of image: (and %s), with the same newName twice if they run one image:\n  images:\n  %s",
		desc, len(byDeployment), shown, strings.Join(lines, "\n  "), cfgFile, option.Image, strings.Join(entries, "\n  "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
