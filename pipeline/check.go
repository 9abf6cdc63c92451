package pipeline

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/distribution/reference"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
)

// The checks of what a caller asks for, before anything runs: each
// mistake is a publish.UsageError that names the option as the command
// that runs calls it (option.Flag).

// CheckVersion checks a release version as every command takes one: vX.Y.Z
// ("" is no version), suggesting the full form of a short one.
func CheckVersion(v string) error {
	if v == "" {
		return nil
	}
	_, err := provider.ParseVersion(v)
	return err
}

// ParseWaivers turns RULE=reason waivers (lint --disable) into the lint's
// Disabled: a waiver without a reason gets one that says where it came
// from; an unknown or unwaivable rule is refused.
func ParseWaivers(waivers []string) (map[string]string, error) {
	out := map[string]string{}
	for _, d := range waivers {
		rule, reason, ok := strings.Cut(d, "=")
		if !ok || strings.TrimSpace(reason) == "" {
			reason = "disabled on the command line"
		}
		out[strings.TrimSpace(rule)] = reason
	}
	if err := (contract.Options{Disabled: out}).Validate(); err != nil {
		return nil, publish.UsageError{Err: err}
	}
	return out, nil
}

// Validate checks what the build options ask for goes together: a version
// and image that can be, an image to build when one is named by digest or
// built on a base, the platforms.
func (o *BuildOptions) Validate(ctx context.Context) error {
	flag := func(n option.Name) string { return option.Flag(ctx, n) }
	if err := checkVersionOption(ctx, option.Version, o.Version); err != nil {
		return err
	}
	if err := checkImageRepository(ctx, o.Image); err != nil {
		return err
	}
	if o.ImageRef != ImageRefTag && o.ImageRef != ImageRefDigest {
		return publish.Usagef("%s must be tag or digest, not %q", flag(option.ImageRef), o.ImageRef)
	}
	switch {
	case o.buildsImage() && o.Image == "":
		return publish.Usagef("%s and %s need %s REPOSITORY to name the image", flag(option.ImagePush), flag(option.ImageLayout), flag(option.Image))
	case o.ImageRef == ImageRefDigest && !o.buildsImage():
		return publish.Usagef("%s digest needs the image built here: add %s or %s DIR", flag(option.ImageRef), flag(option.ImagePush), flag(option.ImageLayout))
	case o.BaseImage != "" && !o.buildsImage():
		return publish.Usagef("%s is used only when the image is built: add %s or %s DIR", flag(option.BaseImage), flag(option.ImagePush), flag(option.ImageLayout))
	}
	for _, p := range o.Platforms {
		if _, err := builder.ParsePlatform(p); err != nil {
			return publish.Usagef("%s: %v", flag(option.Platforms), err)
		}
	}
	return nil
}

// checkImageRepository refuses a tag or digest in the repository of the
// manager image: the tag is the version.
func checkImageRepository(ctx context.Context, image string) error {
	if image == "" {
		return nil
	}
	flag := option.Flag(ctx, option.Image)
	ref, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return publish.Usagef("%s %q: %v", flag, image, err)
	}
	repo := reference.FamiliarString(reference.TrimNamed(ref))
	if _, ok := ref.(reference.Tagged); ok {
		return publish.Usagef("%s %s names a tag: pass the repository only (%s), the tag is the release version", flag, image, repo)
	}
	if _, ok := ref.(reference.Digested); ok {
		return publish.Usagef("%s %s names a digest: pass the repository only (%s); %s digest makes the components name the built image by digest", flag, image, repo, option.Flag(ctx, option.ImageRef))
	}
	return nil
}

// Validate checks the dev options: the version and the image repository.
func (o DevOptions) Validate(ctx context.Context) error {
	if err := checkVersionOption(ctx, option.Version, o.Version); err != nil {
		return err
	}
	return checkImageRepository(ctx, o.Image)
}

// checkVersionOption wraps CheckVersion's error in the option's words.
func checkVersionOption(ctx context.Context, n option.Name, v string) error {
	if err := CheckVersion(v); err != nil {
		return publish.Usagef("%s: %v", option.Flag(ctx, n), err)
	}
	return nil
}

// CheckFolder says when a folder given as what (an argument or a flag)
// names nothing or a file.
func CheckFolder(what, dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return publish.Usagef("%s %s: no such folder", what, dir)
	case err != nil:
		return publish.Usagef("%s: %v", what, err)
	case !fi.IsDir():
		return publish.Usagef("%s %s is a file: pass the folder that holds it", what, dir)
	}
	return nil
}

// CheckConfigFile says when a config given as what (--config) names
// nothing or a folder; "" is looked up in the tree later.
func CheckConfigFile(what, file string) error {
	if file == "" {
		return nil
	}
	fi, err := os.Stat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return publish.Usagef("%s %s: no such file (a capirepo.yaml or clusterctl-settings.json)", what, file)
	case err != nil:
		return publish.Usagef("%s: %v", what, err)
	case fi.IsDir():
		return publish.Usagef("%s %s is a folder: pass the capirepo.yaml or clusterctl-settings.json in it, or the tree as PATH", what, file)
	}
	return nil
}

// CheckConfigOut refuses, before anything is published, a --config-out that
// names a folder or lies in a folder that does not exist ("" is none).
func CheckConfigOut(ctx context.Context, file string) error {
	if file == "" {
		return nil
	}
	flag := option.Flag(ctx, option.ConfigOut)
	if fi, err := os.Stat(file); err == nil && fi.IsDir() {
		return publish.Usagef("%s %s is a folder: name the file to write, e.g. %s", flag, file, filepath.Join(file, "clusterctl.yaml"))
	}
	return CheckFolder(flag+"'s folder", filepath.Dir(file))
}
