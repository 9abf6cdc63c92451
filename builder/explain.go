package builder

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/capirepo/capirepo/internal/kustomization"
	"github.com/capirepo/capirepo/internal/yamlpos"
	"github.com/capirepo/capirepo/provider"
)

// explainYAML turns kustomize's report of a file that does not parse (the
// line counted from the start of the YAML document, the file named only by
// its entry) into one that points into the tree: the file and its line, the
// object, and the kustomization that pulled the file in. Other errors are
// returned as they are. It runs only after kustomize failed, and only
// reads the files the kustomizations name.
func explainYAML(fs *treeFS, dir string, err error) error {
	if err == nil {
		return err
	}
	if e := findBroken(fs, dir); e != nil {
		return e
	}
	return err
}

// findBroken walks the kustomizations from dir as kustomize reads them
// (depth first, in field order) and returns the first kustomization or file
// they name that does not parse, with the entry that pulled it in.
func findBroken(fs filesys.FileSystem, dir string) error {
	var broken error
	check := func(file string, data []byte, pulledBy *kustomization.Entry) error {
		e := yamlpos.Find(file, data)
		if e == nil {
			return nil
		}
		broken = e
		if pulledBy != nil {
			broken = fmt.Errorf("%w; pulled in by %s (field %s)", e, pulledBy.File, pulledBy.Where())
		}
		return kustomization.SkipAll
	}
	follow := kustomization.Options{Follow: []kustomization.Field{kustomization.Resources, kustomization.Bases, kustomization.Components, kustomization.PatchesStrategicMerge, kustomization.Patches}}
	_ = kustomization.Walk(fs, dir, follow, kustomization.Visitor{
		Kustomization: func(k *kustomization.Kustomization) error {
			if k.Data == nil {
				return nil // none, or unreadable: kustomize says why
			}
			return check(k.File, k.Data, k.From)
		},
		Entry: func(_ *kustomization.Kustomization, e kustomization.Entry) error {
			if e.Kind != kustomization.File {
				return nil // folders are walked; the rest is refused or reported elsewhere
			}
			data, err := fs.ReadFile(e.Path)
			if err != nil {
				return nil
			}
			return check(e.Path, data, &e)
		},
	})
	return broken
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
	// kustomize says the missing path twice (as a file, then as a folder):
	// its cause is said once, the whole error still unwraps.
	said := m[0]
	if a := accumulating.FindAllString(err.Error(), -1); len(a) > 0 {
		said = a[len(a)-1] + ": " + said // the innermost: the one naming the file
	}
	if gitIgnored(root, rel) {
		return &explained{err: err, msg: fmt.Sprintf("%s is missing: it is git-ignored, so a make target generates it before rendering; list that command (e.g. make generate-manifests) under before: in %s, or generate the file first (kustomize: %s)",
			rel, provider.ConfigFile, said)}
	}
	return &explained{err: err, msg: fmt.Sprintf("%s is missing: the kustomization names it; add the file, or, when a command generates it, list that command under before: in %s (kustomize: %s)",
		rel, provider.ConfigFile, said)}
}

// outsideRoot is kustomize's refusal, under its default root-only loading,
// of a file outside the folder of the kustomization that names it.
var outsideRoot = regexp.MustCompile(`security; file '([^']+)' is not in or below '([^']+)'`)

// Fixes for a file loaded from outside the kustomization's folder: a
// flavor's has a key, the components' none (see explainOutsideRoot).
const (
	flavorOutsideFix = "set templates.loadRestrictor: none for this provider in " + provider.ConfigFile +
		" (the flavors then render as kustomize build --load-restrictor LoadRestrictionsNone renders them; files outside the provider tree stay refused)"
	componentsOutsideFix = "no " + provider.ConfigFile + " key loosens this for the components, which render as kustomize build renders config/default in a provider's Makefile: " +
		"move the file into the kustomization's folder, or give its folder a kustomization.yaml (for patches, a kind: Component listed under components:) and name the folder: kustomize loads a kustomization from anywhere in the tree"
)

// explainOutsideRoot turns kustomize's raw "security; file ... is not in or
// below ..." into which kustomization loads which file, and what allows it
// (fix). Paths are said relative to the tree at root.
func explainOutsideRoot(fs filesys.FileSystem, root string, err error, fix string) error {
	if err == nil {
		return nil
	}
	m := outsideRoot.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	k := kustomization.Find(fs, m[2])
	if k == "" {
		k = filepath.Join(m[2], "kustomization.yaml")
	}
	return &explained{err: err, msg: fmt.Sprintf("%s loads %s, outside its folder: kustomize loads only files in or below a kustomization's folder by default (kustomize: %s); %s",
		inTree(root, k), inTree(root, m[1]), m[0], fix)}
}

// inTree says p relative to the tree at root, or as it is when outside it.
func inTree(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return filepath.ToSlash(rel)
}

// accumulating is the resource kustomize was loading when a file was missing.
var accumulating = regexp.MustCompile(`accumulating resources from '[^']+'`)

// explained is kustomize's error said in capirepo's words; it unwraps to
// kustomize's.
type explained struct {
	err error
	msg string
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

// gitIgnored asks git whether rel is ignored in the tree at root; false when
// git or the repository is not there.
func gitIgnored(root, rel string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", root, "check-ignore", "-q", "--", rel)
	return cmd.Run() == nil
}
