package builder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/provider"
)

// applyPatches applies release-only kustomize patches after the tree's own
// kustomization, as `kustomize build` of an overlay holding the rendered
// components and the patches would (CAPA's compiled-manifest does just
// that). Patch files are read from the tree and inlined.
func applyPatches(fs *treeFS, dir string, rm resmap.ResMap, patches []provider.Patch) (resmap.ResMap, error) {
	in, err := asYAML(rm)
	if err != nil {
		return nil, err
	}
	k := types.Kustomization{Resources: []string{"components.yaml"}}
	for i, p := range patches {
		kp := types.Patch{Patch: p.Patch}
		if p.Path != "" {
			data, err := fs.ReadFile(filepath.Join(dir, filepath.FromSlash(p.Path)))
			if err != nil {
				return nil, fmt.Errorf("patches[%d].path: %w", i, err)
			}
			kp.Patch = string(data)
		}
		if t := p.Target; t != nil {
			kp.Target = &types.Selector{ResId: resid.NewResIdWithNamespace(resid.Gvk{Group: t.Group, Version: t.Version, Kind: t.Kind}, t.Name, t.Namespace),
				LabelSelector: t.LabelSelector, AnnotationSelector: t.AnnotationSelector}
		}
		k.Patches = append(k.Patches, kp)
	}
	kdata, err := yaml.Marshal(k)
	if err != nil {
		return nil, err
	}
	mem := filesys.MakeFsInMemory()
	if err := mem.WriteFile("/release/components.yaml", in); err != nil {
		return nil, err
	}
	if err := mem.WriteFile("/release/kustomization.yaml", kdata); err != nil {
		return nil, err
	}
	return Kustomize(mem, "/release")
}

// missingFile finds the path in kustomize's "no such file" errors.
var missingFile = regexp.MustCompile(`(?:lstat|open|stat) (\S+?):? no such file or directory`)

// explainMissing turns kustomize's raw error for a file the kustomization
// names but the tree lacks into one that names the file and says what to
// do: a git-ignored file is written by a make target, which a before:
// command in the config runs.
func explainMissing(root string, err error) error {
	m := missingFile.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	p := m[1]
	rel, rerr := filepath.Rel(root, p)
	if rerr != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return err
	}
	rel = filepath.ToSlash(rel)
	if gitIgnored(root, rel) {
		return fmt.Errorf("%s is missing: it is git-ignored, so a make target generates it before rendering; list that command (e.g. make generate-manifests) under before: in %s, or generate the file first (%w)",
			rel, provider.ConfigFile, err)
	}
	return fmt.Errorf("%s is missing: the kustomization names it; add the file, or, when a command generates it, list that command under before: in %s (%w)",
		rel, provider.ConfigFile, err)
}

// gitIgnored asks git whether rel is ignored in the tree at root; false when
// git or the repository is not there.
func gitIgnored(root, rel string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", root, "check-ignore", "-q", "--", rel)
	return cmd.Run() == nil
}

// RunBefore runs the config's before: commands in the tree, one after
// another, each printed first with its output after it (GoReleaser's
// before.hooks). The first failure stops the build.
func RunBefore(ctx context.Context, dir string, cfg *provider.Config, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	for i, c := range cfg.Before {
		if err := ctx.Err(); err != nil {
			return err
		}
		fmt.Fprintf(log, "before: %s\n", c)
		cmd := exec.CommandContext(ctx, "sh", "-c", c)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = log, log
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return fmt.Errorf("%s: before[%d] %q failed in %s (exit %d): fix the command or the tree; nothing was rendered", cfg.File, i, c, dir, ee.ExitCode())
			}
			return fmt.Errorf("%s: before[%d] %q: %w", cfg.File, i, c, err)
		}
	}
	return nil
}
