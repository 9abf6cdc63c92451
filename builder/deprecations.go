package builder

import (
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/capirepo/capirepo/internal/stderrfilter"
	"github.com/capirepo/capirepo/internal/text"
)

// kustomize prints a notice for every deprecated field of every
// kustomization file it loads, straight to os.Stderr, in every render; a
// build renders a kustomization several times (the release image, shared
// bases of flavors), so one deprecated field printed four times or more.
// The builder counts the notices itself (each render reads its
// kustomization files through a recorder), reports each once in
// Result.Warnings, and drops kustomize's own prints while a Build runs.

// kustomizeNotices are every notice kustomize's CheckDeprecatedFields can
// give, in kustomize's words: those of a Kustomization with every list and
// map field set, so a field deprecated in a later kustomize is caught too.
var kustomizeNotices = func() []string {
	var k types.Kustomization
	v := reflect.ValueOf(&k).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		switch f.Kind() {
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 0, 0))
		case reflect.Map:
			f.Set(reflect.MakeMap(f.Type()))
		}
	}
	return *k.CheckDeprecatedFields()
}()

// kustomizePrints drops kustomize's notices, as it prints them (a line
// each), from the process's standard error while a Build runs.
var kustomizePrints = func() *stderrfilter.Filter {
	lines := make([]string, len(kustomizeNotices))
	for i, n := range kustomizeNotices {
		lines[i] = n + "\n"
	}
	return stderrfilter.New(lines...)
}()

// quietKustomize is false only in a test that counts kustomize's own prints.
var quietKustomize = true

// deprecations collects the notices of one Build's renders.
type deprecations struct {
	mu   sync.Mutex
	seen map[string]*deprecationSeen // notice -> where
}

type deprecationSeen struct {
	renders int
	files   map[string]bool // as the warning names them
}

// kustNotices are kustomize's notices for each kustomization file one
// render read (path -> content as read), as kustomize gives them when it
// loads the file; a file kustomize cannot parse gives none (it fails on it
// without a notice).
func kustNotices(files map[string][]byte) map[string][]string {
	out := map[string][]string{}
	for p, data := range files {
		var k types.Kustomization
		if k.Unmarshal(data) != nil {
			continue
		}
		if ns := *k.CheckDeprecatedFields(); len(ns) > 0 {
			out[p] = ns
		}
	}
	return out
}

// add counts one render's notices (kustNotices), each once for the render,
// with the files that gave it.
func (d *deprecations) add(name func(string) string, notices map[string][]string) {
	gave := map[string]bool{}
	d.mu.Lock()
	defer d.mu.Unlock()
	for p, ns := range notices {
		for _, n := range ns {
			if d.seen == nil {
				d.seen = map[string]*deprecationSeen{}
			}
			s := d.seen[n]
			if s == nil {
				s = &deprecationSeen{files: map[string]bool{}}
				d.seen[n] = s
			}
			s.files[name(p)] = true
			if !gave[n] {
				gave[n] = true
				s.renders++
			}
		}
	}
}

// warnings are the notices, one each, with the files that gave them and the
// number of renders that did, in kustomize's order of fields.
func (d *deprecations) warnings() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, n := range kustomizeNotices {
		s := d.seen[n]
		if s == nil {
			continue
		}
		out = append(out, fmt.Sprintf("kustomize: %s (%s; in %s)", strings.TrimPrefix(n, "# Warning: "),
			strings.Join(slices.Sorted(maps.Keys(s.files)), ", "), text.Plural(s.renders, "render", "renders")))
	}
	return out
}

// kustRecorder keeps the kustomization files one render reads, with the
// content kustomize sees (overrideFS serves edited ones).
type kustRecorder struct {
	filesys.FileSystem
	mu    sync.Mutex
	files map[string][]byte
}

func (r *kustRecorder) ReadFile(p string) ([]byte, error) {
	data, err := r.FileSystem.ReadFile(p)
	if err == nil && slices.Contains(konfig.RecognizedKustomizationFileNames(), filepath.Base(p)) {
		r.mu.Lock()
		if r.files == nil {
			r.files = map[string][]byte{}
		}
		r.files[p] = data
		r.mu.Unlock()
	}
	return data, err
}

// treeOf returns the tree a render reads, nil for any other file system.
func treeOf(fs filesys.FileSystem) *treeFS {
	switch f := fs.(type) {
	case *treeFS:
		return f
	case *overrideFS:
		return treeOf(f.FileSystem)
	}
	return nil
}

// display names a file of the tree by its path in the tree, with slashes;
// a file elsewhere (a remote base's clone) by its path.
func (fs *treeFS) display(p string) string {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		real = p
	}
	if rel, err := filepath.Rel(fs.roots[0], real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return p
}
