package provider

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

func (c *Config) defaultAndValidate(dir string) error {
	seen := map[string]bool{}
	for i := range c.Providers {
		s := &c.Providers[i]
		field := func(f string) string { return c.where(fmt.Sprintf("providers[%d].%s", i, f)) }
		id, err := s.ID()
		if err != nil {
			return fmt.Errorf("%s: %w", field("name"), err)
		}
		if seen[s.Name] {
			return fmt.Errorf("%s: provider %q is listed twice", field("name"), s.Name)
		}
		seen[s.Name] = true
		if s.Kustomize == "" {
			s.Kustomize = DefaultKustomize
		}
		if s.ComponentsFile == "" {
			s.ComponentsFile = id.DefaultComponentsFile()
		}
		if err := CheckFileName("componentsFile", s.ComponentsFile); err != nil {
			return fmt.Errorf("%s: %w", field("componentsFile"), err)
		}
		if !strings.HasSuffix(s.ComponentsFile, ".yaml") {
			return fmt.Errorf("%s: %q must end in .yaml", field("componentsFile"), s.ComponentsFile)
		}
		if s.Metadata == "" {
			s.Metadata = MetadataFile
		}
		if err := s.defaultTemplates(dir, c.Providers, field); err != nil {
			return err
		}
		if s.Build.Main == "" {
			s.Build.Main = DefaultMain
		}
		if len(s.Build.Platforms) == 0 {
			s.Build.Platforms = slices.Clone(DefaultPlatforms)
		}
		for name, p := range map[string]string{"kustomize": s.Kustomize, "metadata": s.Metadata, "build.main": s.Build.Main} {
			if err := CheckRelPath(p); err != nil {
				return fmt.Errorf("%s: %w", field(name), err)
			}
		}
		if err := s.validateExtras(dir, field); err != nil {
			return err
		}
		if s.NextVersion != "" {
			if _, err := ParseVersion(s.NextVersion); err != nil {
				return fmt.Errorf("%s: %w", field("nextVersion"), err)
			}
		}
	}
	if c.Version != "" {
		if _, err := ParseVersion(c.Version); err != nil {
			return fmt.Errorf("%s: %w", c.where("version"), err)
		}
	}
	for i, b := range c.Before {
		if strings.TrimSpace(b) == "" {
			return fmt.Errorf("%s: before[%d] is empty: write the command to run, e.g. make generate-manifests", c.describe(), i)
		}
	}
	for i, w := range c.Lint.Disable {
		if w.Rule == "" || w.Reason == "" {
			return fmt.Errorf("%s: a waiver needs both rule and reason: {rule: RULE, reason: why it does not apply}", c.where(fmt.Sprintf("lint.disable[%d]", i)))
		}
	}
	return nil
}

// CheckRelPath accepts a slash-separated path inside the provider tree.
func CheckRelPath(p string) error {
	if p == "" {
		return nil
	}
	if path.IsAbs(p) || filepath.IsAbs(p) {
		return fmt.Errorf("path %q must be relative to the provider tree", p)
	}
	clean := path.Clean(filepath.ToSlash(p))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return fmt.Errorf("path %q leaves the provider tree", p)
	}
	return nil
}

// PullPolicies are the imagePullPolicy values Kubernetes accepts.
var PullPolicies = []string{"Always", "IfNotPresent", "Never"}

// validateExtras checks image, components and patches of one provider.
func (s *Spec) validateExtras(dir string, field func(string) string) error {
	if img := s.Image; img != nil {
		if err := img.validate(func(n string) string { return field("image" + n) }); err != nil {
			return err
		}
		if len(s.Images) > 0 {
			return fmt.Errorf("%s: set with images: images gives each Deployment its image; move image's fields into its entries", field("image"))
		}
	}
	seen := map[[2]string]int{}
	for i, img := range s.Images {
		f := func(n string) string { return field(fmt.Sprintf("images[%d]%s", i, n)) }
		if img.Deployment == "" {
			return fmt.Errorf("%s: empty: name the Deployment as the release names it (namePrefix applied), e.g. caps-controller-manager", f(".deployment"))
		}
		if err := img.validate(f); err != nil {
			return err
		}
		key := [2]string{img.Deployment, img.Container}
		if j, ok := seen[key]; ok {
			return fmt.Errorf("%s: Deployment %s%s is already given an image by images[%d]", f(""), img.Deployment, containerSuffix(img.Container), j)
		}
		seen[key] = i
	}
	files := map[string]bool{s.ComponentsFile: true}
	for i, c := range s.Components {
		f := func(n string) string { return field(fmt.Sprintf("components[%d].%s", i, n)) }
		if c.Kustomize == "" {
			return fmt.Errorf("%s: empty: name the folder of the kustomization to render, e.g. config/supervisor", f("kustomize"))
		}
		if err := CheckRelPath(c.Kustomize); err != nil {
			return fmt.Errorf("%s: %w", f("kustomize"), err)
		}
		if err := CheckFileName("file", c.File); err != nil {
			return fmt.Errorf("%s: %w", f("file"), err)
		}
		if !strings.HasSuffix(c.File, ".yaml") {
			return fmt.Errorf("%s: %q must end in .yaml", f("file"), c.File)
		}
		if files[c.File] {
			return fmt.Errorf("%s: %q is already a components file of this provider", f("file"), c.File)
		}
		files[c.File] = true
	}
	for i, p := range s.Patches {
		f := func(n string) string { return field(fmt.Sprintf("patches[%d]%s", i, n)) }
		switch {
		case p.Path == "" && p.Patch == "":
			return fmt.Errorf("%s: neither path nor patch is set: give the patch file (relative to the tree) or the patch inline", f(""))
		case p.Path != "" && p.Patch != "":
			return fmt.Errorf("%s: both path and patch are set: keep one", f(""))
		}
		if err := CheckRelPath(p.Path); err != nil {
			return fmt.Errorf("%s: %w", f(".path"), err)
		}
		if p.Path != "" && !isFile(filepath.Join(dir, filepath.FromSlash(p.Path))) {
			return fmt.Errorf("%s: %s is not a file in the provider tree %s", f(".path"), p.Path, dir)
		}
		if _, err := path.Match(p.File, ""); err != nil || strings.Contains(p.File, "/") {
			return fmt.Errorf("%s: %q is not a release file name pattern (path.Match, no '/'), e.g. cluster-template-k3s-*.yaml", f(".file"), p.File)
		}
	}
	return nil
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// validate checks an image's fields; field names one of them (".tag").
func (img Image) validate(field func(string) string) error {
	if img.NewTag != "" && img.Tag != "" {
		return fmt.Errorf("%s: newTag and tag are both set: keep tag (a template such as \"{{ .VersionNoV }}\") or newTag (a literal), not both", field(""))
	}
	if img.Digest != "" && (img.NewTag != "" || img.Tag != "") {
		return fmt.Errorf("%s: digest and a tag are both set: an image is pinned by one of them", field(""))
	}
	if _, err := img.TagFor("v0.0.0"); err != nil {
		return fmt.Errorf("%s: %w", field(".tag"), err)
	}
	if img.PullPolicy != "" && !slices.Contains(PullPolicies, img.PullPolicy) {
		return fmt.Errorf("%s: %q is not one of %s", field(".pullPolicy"), img.PullPolicy, strings.Join(PullPolicies, ", "))
	}
	return nil
}

func containerSuffix(c string) string {
	if c == "" {
		return ""
	}
	return " container " + c
}
