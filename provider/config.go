package provider

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"text/template"
)

// File names looked for at the root of a provider tree.
const (
	ConfigFile   = "capirepo.yaml"
	SettingsFile = "clusterctl-settings.json"
)

// Config is a capirepo.yaml after defaults: one release version for one or
// more providers built from one tree.
type Config struct {
	// File is where the config came from ("" when every value is a default).
	File string `json:"-"`
	// Version of the release; --version overrides it.
	Version   string `json:"version,omitempty"`
	Providers []Spec `json:"providers"`
	Lint      Lint   `json:"lint,omitempty"`
	// Before lists commands run in the tree before rendering (GoReleaser's
	// before.hooks): make targets that write git-ignored inputs the
	// kustomizations read. Opt-in; each is printed before it runs.
	Before []string `json:"before,omitempty"`
}

// Spec describes one provider in a tree. Paths are slash-separated and
// relative to the provider tree (PATH).
type Spec struct {
	// Name is the provider label: cluster-api, infrastructure-aws, ...
	Name           string `json:"name"`
	Kustomize      string `json:"kustomize,omitempty"`
	ComponentsFile string `json:"componentsFile,omitempty"`
	Metadata       string `json:"metadata,omitempty"`
	Image          *Image `json:"image,omitempty"`
	// Images give Deployments (or containers) images of their own, where
	// one provider runs several managers from several images (Sidero's
	// caps- and sidero-controller-manager, both written with the image
	// placeholder controller). Not with Image.
	Images []DeploymentImage `json:"images,omitempty"`
	Build  Build             `json:"build,omitempty"`
	// Components lists more components files of the provider, each rendered
	// from its own kustomization (e.g. config/supervisor ->
	// infrastructure-components-supervisor.yaml), beside ComponentsFile.
	Components []Components `json:"components,omitempty"`
	// Patches are kustomize patches applied to rendered release files, for
	// the release only: what a Makefile's sed over the release output did.
	// Each applies to the components files, or to the files its File glob
	// matches (cluster templates). Path is relative to the tree.
	Patches []Patch `json:"patches,omitempty"`
	// NextVersion is the version `capirepo dev` builds (clusterctl-settings.json config.nextVersion).
	NextVersion string `json:"nextVersion,omitempty"`

	// Templates says where the provider's cluster templates come from;
	// capirepo.yaml takes a folder name or a Templates object.
	Templates *Templates `json:"templates,omitempty"`
}

// Components is one more components file and the kustomization it renders from.
type Components struct {
	Kustomize string `json:"kustomize"`
	File      string `json:"file"`
}

// Patch is a kustomize patches: entry: a strategic-merge or JSON 6902
// patch from a file in the tree (Path) or inline (Patch), for the objects
// Target selects (a JSON 6902 patch needs a target).
type Patch struct {
	Path   string       `json:"path,omitempty"`
	Patch  string       `json:"patch,omitempty"`
	Target *PatchTarget `json:"target,omitempty"`
	// File selects the release files the patch applies to by name (a
	// path.Match pattern such as cluster-template-k3s-*.yaml); "" means
	// the components files.
	File string `json:"file,omitempty"`
}

// Applies says whether the patch applies to the release file name;
// components says the file is a components file of the provider.
func (p Patch) Applies(name string, components bool) bool {
	if p.File == "" {
		return components
	}
	ok, _ := path.Match(p.File, name)
	return ok
}

// PatchTarget is kustomize's patch selector.
type PatchTarget struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Name               string `json:"name,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`
}

// Image takes kustomize's images fields. Name selects the image to change,
// as a kustomization's images: entry does: the entry's name (a placeholder
// such as controller) or the image name it renders to; default: the image of
// the provider's manager container. The tag is NewTag, else the Tag template,
// else the version.
type Image struct {
	Name    string `json:"name,omitempty"`
	NewName string `json:"newName,omitempty"`
	NewTag  string `json:"newTag,omitempty"`
	Digest  string `json:"digest,omitempty"`
	// Tag is a Go template for the tag: "{{ .Version }}" (v1.2.3, the
	// default) or "{{ .VersionNoV }}" (1.2.3).
	Tag string `json:"tag,omitempty"`
	// PullPolicy, when set, becomes the provider's manager container's
	// imagePullPolicy; by default the policy the tree sets is kept.
	PullPolicy string `json:"pullPolicy,omitempty" enum:"Always,IfNotPresent,Never"`
}

// DeploymentImage is the release image of one Deployment's containers:
// the containers that run the image of its manager container (or of its one
// container), or the one Container names.
type DeploymentImage struct {
	// Deployment is the Deployment's name in the release (namePrefix
	// applied), e.g. caps-controller-manager.
	Deployment string `json:"deployment"`
	// Container narrows the image to one container of the Deployment.
	Container string `json:"container,omitempty"`
	// Image's fields are as in Spec.Image; Name selects, among the
	// Deployment's containers, those whose image it names.
	Image
}

// TagFor returns the tag the release image gets for version: NewTag, else
// the Tag template, else the version.
func (i Image) TagFor(version string) (string, error) {
	if i.NewTag != "" {
		return i.NewTag, nil
	}
	if i.Tag == "" {
		return version, nil
	}
	t, err := template.New("image.tag").Option("missingkey=error").Parse(i.Tag)
	if err != nil {
		return "", fmt.Errorf("image.tag %q: %w", i.Tag, err)
	}
	var b strings.Builder
	data := struct{ Version, VersionNoV string }{version, strings.TrimPrefix(version, "v")}
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("image.tag %q: %w (use {{ .Version }} or {{ .VersionNoV }})", i.Tag, err)
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("image.tag %q gives an empty tag", i.Tag)
	}
	return b.String(), nil
}

// Build says how to compile the manager binary.
type Build struct {
	Main      string   `json:"main,omitempty"`
	Platforms []string `json:"platforms,omitempty"`
	Ldflags   string   `json:"ldflags,omitempty"`
}

// Lint holds waived rules.
type Lint struct {
	Disable []Waiver `json:"disable,omitempty"`
}

// Waiver turns a lint rule off, with the reason printed whenever it applies.
// Object and File narrow it to findings on matching objects and files
// (globs, * matching any text); a waiver that matches nothing is reported.
type Waiver struct {
	Rule string `json:"rule"`
	// Object is Kind/name or Kind/namespace/name, e.g.
	// CustomResourceDefinition/awsclustercontrolleridentities.*.
	Object string `json:"object,omitempty"`
	// File is the release file name (cluster-template-*.yaml) or its path
	// <label>/<version>/<name>.
	File   string `json:"file,omitempty"`
	Reason string `json:"reason"`
}

// ID returns the provider's name and type from its label.
func (s Spec) ID() (ID, error) { return ParseLabel(s.Name) }

// Paths are the files and folders of the tree the spec names, slash
// separated and relative to the tree, sorted, each once: the kustomizations,
// metadata.yaml, the patch files and the templates' folders and files. A
// named path is read wherever it lies, e.g. a release asset a before:
// command builds into bin/ or _out/, folders a walk of the tree's sources
// skips as build output.
func (s Spec) Paths() []string {
	out := []string{s.Kustomize, s.Metadata}
	for _, c := range s.Components {
		out = append(out, c.Kustomize)
	}
	for _, p := range s.Patches {
		out = append(out, p.Path)
	}
	if t := s.Templates; t != nil && !t.None {
		out = append(out, t.Dir)
		out = append(out, t.Flavors...)
		for _, src := range t.Files {
			out = append(out, src)
		}
	}
	out = slices.DeleteFunc(out, func(p string) bool { return p == "" })
	slices.Sort(out)
	return slices.Compact(out)
}

// Defaults for a conventional provider tree.
const (
	DefaultKustomize = "config/default"
	DefaultTemplates = "templates"
	DefaultMain      = "."
)

// DefaultPlatforms are the platforms a manager is built for unless told otherwise.
var DefaultPlatforms = []string{"linux/amd64", "linux/arm64"}
