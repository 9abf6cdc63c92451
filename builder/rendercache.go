package builder

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// RenderCache keeps the kustomize renders of one process, so that a build
// after a change re-renders only the kustomizations that read a changed
// file (capirepo dev --watch: a saved template does not render the
// components again). Give the same cache to the Builds of one process
// (Options.Cache); the zero value is not usable, use NewRenderCache. It is
// safe for concurrent Builds.
//
// A render is reused only when every question it asked the file system
// (each file's content, each Exists, IsDir, ReadDir, Glob and CleanedAbs
// answer, in-memory edits included) gets the same answer again, so a reused
// render is what kustomize would build now. Renders with remote bases are
// never kept.
type RenderCache struct {
	mu      sync.Mutex
	entries map[string][]*renderEntry // renderKey -> newest first
	// renders counts the renders that ran, per kustomization folder (tests).
	renders map[string]int
}

// maxRenderEntries bounds the renders kept per kustomization: a build may
// render one both as it is and with the release image set, and a change
// undone finds the render from before it.
const maxRenderEntries = 4

// NewRenderCache returns an empty cache.
func NewRenderCache() *RenderCache {
	return &RenderCache{entries: map[string][]*renderEntry{}, renders: map[string]int{}}
}

type renderEntry struct {
	asked []fsQuestion // every question the render asked, each once
	rm    resmap.ResMap
	// notices are kustomize's deprecation notices of the kustomization
	// files the render read (kustNotices), counted again on a hit.
	notices map[string][]string

	// yaml is what the builder made of this render, by how it made it
	// (renderComponents: the release transforms' settings).
	mu   sync.Mutex
	yaml map[string][]byte
}

// madeYAML returns what was made of the render with these settings.
func (e *renderEntry) madeYAML(how string) ([]byte, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	data, ok := e.yaml[how]
	return data, ok
}

func (e *renderEntry) keepYAML(how string, data []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.yaml == nil {
		e.yaml = map[string][]byte{}
	}
	e.yaml[how] = data
}

// fsQuestion is one question a render asked of its file system, with the
// answer it got, as a string (a file's content as its sha256).
type fsQuestion struct {
	op, path, answer string
}

// renderKey names what a render is of: the folder, the load restrictor and
// the tree it is confined to. The in-memory edits it reads through (the
// release image) are not part of it: they are answers to its ReadFile
// questions like the disk's, so a kustomization's edits share its bound.
func renderKey(tree *treeFS, dir string, loadNone bool) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return fmt.Sprintf("dir %q\nloadNone %t\nroots %q\n", filepath.Clean(abs), loadNone, tree.roots)
}

// lookup returns a copy of a kept render of key whose questions fs answers
// as it did then, and the kept entry (its notices among it).
func (c *RenderCache) lookup(key string, fs filesys.FileSystem) (resmap.ResMap, *renderEntry, bool) {
	c.mu.Lock()
	cands := slices.Clone(c.entries[key])
	c.mu.Unlock()
	for _, e := range cands {
		if e.holds(fs) {
			return e.rm.DeepCopy(), e, true
		}
	}
	return nil, nil, false
}

// holds says whether fs gives every answer the render got. The paths the
// tree refused to answer for are noted (treeFS.Violation) only when it does,
// as the render would have noted them: a render that runs instead asks anew.
func (e *renderEntry) holds(fs filesys.FileSystem) bool {
	var refused []error
	for _, q := range e.asked {
		answer, err := askQuietly(fs, q.op, q.path)
		if err != nil {
			refused = append(refused, err)
		}
		if answer != q.answer {
			return false
		}
	}
	if tree := treeOf(fs); tree != nil {
		for _, err := range refused {
			tree.note(err)
		}
	}
	return true
}

// put keeps a render (rm is the caller's own copy) with what it asked.
func (c *RenderCache) put(key string, rec *fsRecorder, rm resmap.ResMap, notices map[string][]string) *renderEntry {
	asked, ok := rec.questions()
	if !ok {
		return nil
	}
	e := &renderEntry{asked: asked, rm: rm, notices: notices}
	c.mu.Lock()
	defer c.mu.Unlock()
	list := slices.DeleteFunc(slices.Clone(c.entries[key]), func(old *renderEntry) bool { return slices.Equal(old.asked, asked) })
	c.entries[key] = append([]*renderEntry{e}, list[:min(len(list), maxRenderEntries-1)]...)
	return e
}

func (c *RenderCache) counted(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.renders[filepath.Clean(dir)]++
}

// rendered is the number of renders of dir that ran (not reused).
func (c *RenderCache) rendered(dir string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.renders[filepath.Clean(dir)]
}

// The questions a render may ask; ask answers each the same way the
// recorder does.
const (
	opReadFile   = "read"
	opExists     = "exists"
	opIsDir      = "isdir"
	opReadDir    = "readdir"
	opGlob       = "glob"
	opCleanedAbs = "cleanedabs"
)

func ask(fs filesys.FileSystem, op, p string) string {
	switch op {
	case opReadFile:
		return answerRead(fs.ReadFile(p))
	case opExists:
		return fmt.Sprint(fs.Exists(p))
	case opIsDir:
		return fmt.Sprint(fs.IsDir(p))
	case opReadDir:
		return answerList(fs.ReadDir(p))
	case opGlob:
		return answerList(fs.Glob(p))
	case opCleanedAbs:
		d, f, err := fs.CleanedAbs(p)
		return answerAbs(d, f, err)
	}
	return "unknown " + op // never equal to a recorded answer
}

// askQuietly is ask, but the tree's refusal of a path for Exists or IsDir
// (which answers false) is returned instead of noted. Only the overrideFS
// and treeFS a cached render reads through come here; neither changes
// Exists or IsDir but the tree.
func askQuietly(fs filesys.FileSystem, op, p string) (string, error) {
	tree := treeOf(fs)
	if tree == nil || op != opExists && op != opIsDir {
		return ask(fs, op, p), nil
	}
	if err := tree.check(p); err != nil {
		return "false", err
	}
	if op == opExists {
		return fmt.Sprint(tree.FileSystem.Exists(p)), nil
	}
	return fmt.Sprint(tree.FileSystem.IsDir(p)), nil
}

func answerRead(data []byte, err error) string {
	if err != nil {
		return "error " + err.Error()
	}
	return hashOf(data)
}

func answerList(names []string, err error) string {
	if err != nil {
		return "error " + err.Error()
	}
	return fmt.Sprintf("%q", names)
}

func answerAbs(d filesys.ConfirmedDir, f string, err error) string {
	if err != nil {
		return "error " + err.Error()
	}
	return fmt.Sprintf("%q %q", d, f)
}

func hashOf(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// errUncacheable marks a render that used the file system in a way the
// recorder does not replay (Open, Walk, a write).
var errUncacheable = errors.New("render not cacheable")

// fsRecorder is the file system one render reads through: it passes every
// call on and notes the question and its answer.
type fsRecorder struct {
	filesys.FileSystem
	mu     sync.Mutex
	asked  map[[2]string]string
	order  [][2]string
	broken error
}

func (r *fsRecorder) note(op, p, answer string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.asked == nil {
		r.asked = map[[2]string]string{}
	}
	q := [2]string{op, p}
	if prev, ok := r.asked[q]; ok {
		if prev != answer && r.broken == nil {
			// The file changed while kustomize read it: keep nothing.
			r.broken = fmt.Errorf("%s %s answered twice differently", op, p)
		}
		return
	}
	r.asked[q] = answer
	r.order = append(r.order, q)
}

func (r *fsRecorder) uncacheable() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.broken == nil {
		r.broken = errUncacheable
	}
}

// questions are the render's questions in the order first asked; false
// when the render cannot be replayed.
func (r *fsRecorder) questions() ([]fsQuestion, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.broken != nil {
		return nil, false
	}
	out := make([]fsQuestion, len(r.order))
	for i, q := range r.order {
		out[i] = fsQuestion{op: q[0], path: q[1], answer: r.asked[q]}
	}
	return out, true
}

func (r *fsRecorder) ReadFile(p string) ([]byte, error) {
	data, err := r.FileSystem.ReadFile(p)
	r.note(opReadFile, p, answerRead(data, err))
	return data, err
}

func (r *fsRecorder) Exists(p string) bool {
	ok := r.FileSystem.Exists(p)
	r.note(opExists, p, fmt.Sprint(ok))
	return ok
}

func (r *fsRecorder) IsDir(p string) bool {
	ok := r.FileSystem.IsDir(p)
	r.note(opIsDir, p, fmt.Sprint(ok))
	return ok
}

func (r *fsRecorder) ReadDir(p string) ([]string, error) {
	names, err := r.FileSystem.ReadDir(p)
	r.note(opReadDir, p, answerList(names, err))
	return names, err
}

func (r *fsRecorder) Glob(pattern string) ([]string, error) {
	names, err := r.FileSystem.Glob(pattern)
	r.note(opGlob, pattern, answerList(names, err))
	return names, err
}

func (r *fsRecorder) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	d, f, err := r.FileSystem.CleanedAbs(p)
	r.note(opCleanedAbs, p, answerAbs(d, f, err))
	return d, f, err
}

func (r *fsRecorder) Open(p string) (filesys.File, error) {
	r.uncacheable()
	return r.FileSystem.Open(p)
}

func (r *fsRecorder) Walk(p string, fn filepath.WalkFunc) error {
	r.uncacheable()
	return r.FileSystem.Walk(p, fn)
}

func (r *fsRecorder) Create(p string) (filesys.File, error) {
	r.uncacheable()
	return r.FileSystem.Create(p)
}

func (r *fsRecorder) Mkdir(p string) error {
	r.uncacheable()
	return r.FileSystem.Mkdir(p)
}

func (r *fsRecorder) MkdirAll(p string) error {
	r.uncacheable()
	return r.FileSystem.MkdirAll(p)
}

func (r *fsRecorder) RemoveAll(p string) error {
	r.uncacheable()
	return r.FileSystem.RemoveAll(p)
}

func (r *fsRecorder) WriteFile(p string, data []byte) error {
	r.uncacheable()
	return r.FileSystem.WriteFile(p, data)
}
