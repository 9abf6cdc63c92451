package kustomization

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// MaxFolders bounds every walk: it reaches at most this many folders, each
// once by its path. A folder listed twice, or a cycle through "..", is
// visited once; a symlink loop makes a new path at every turn and ends here.
// Real trees reach a handful: six at most from any kustomization of
// cluster-api v1.14, CAPA v2.13, CAPG v1.13 or CAPD.
const MaxFolders = 1000

// ErrTooLarge is returned, wrapped, by a walk that would reach more than
// MaxFolders folders.
var ErrTooLarge = errors.New("kustomization graph too large")

// SkipAll, returned by a Visitor, ends the walk without an error, as it
// ends filepath.WalkDir (it is io/fs.SkipAll).
var SkipAll = iofs.SkipAll

// Order is the order a walk visits kustomizations in.
type Order int

const (
	// DepthFirst goes into a folder entry before the next entry, as
	// kustomize reads them: the first broken file it meets is the one
	// kustomize fails on.
	DepthFirst Order = iota
	// BreadthFirst visits the start, then the kustomizations its folder
	// entries name, then theirs: nearest first.
	BreadthFirst
)

// Options say how a walk goes.
type Options struct {
	Order Order
	// Follow are the fields whose entries the walk visits, and whose
	// folder entries it goes into, in this order. Empty: Resources, Bases,
	// Components (what kustomize builds objects from).
	Follow []Field
}

// Visitor is what a walk calls; either func may be nil. A func that
// returns SkipAll ends the walk without an error; any other error ends it
// with that error.
type Visitor struct {
	// Kustomization is called once for each folder the walk reaches, the
	// start first. k.File and k.Err say whether its entries are followed.
	Kustomization func(k *Kustomization) error
	// Entry is called for each entry of the followed fields of k, before
	// the walk goes into it when it is a folder.
	Entry func(k *Kustomization, e Entry) error
}

// Walk visits the kustomization in dir and those its entries reach in the
// tree, each folder once and at most MaxFolders of them. It goes only into
// entries of kind Folder: never to a Remote or Absolute one.
func Walk(fs filesys.FileSystem, dir string, o Options, v Visitor) error {
	w := &walker{fs: fs, start: dir, follow: o.Follow, v: v, seen: map[string]bool{}}
	if len(w.follow) == 0 {
		w.follow = []Field{Resources, Bases, Components}
	}
	var err error
	if o.Order == BreadthFirst {
		err = w.breadth(filepath.Clean(dir))
	} else {
		err = w.depth(filepath.Clean(dir), nil)
	}
	if errors.Is(err, SkipAll) {
		return nil
	}
	return err
}

type walker struct {
	fs     filesys.FileSystem
	start  string
	follow []Field
	v      Visitor
	seen   map[string]bool
}

// enter reads and visits dir, or returns nil when the walk has been there.
func (w *walker) enter(dir string, from *Entry) (*Kustomization, error) {
	if w.seen[dir] {
		return nil, nil
	}
	if len(w.seen) >= MaxFolders {
		return nil, fmt.Errorf("%s: %w: its entries reach more than %d folders (the last %s); is there a symlink loop?", w.start, ErrTooLarge, MaxFolders, dir)
	}
	w.seen[dir] = true
	k := read(w.fs, dir)
	k.From = from
	if w.v.Kustomization != nil {
		if err := w.v.Kustomization(k); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// entries lists the followed entries of k and visits each, calling next
// before the following one.
func (w *walker) entries(k *Kustomization, next func(e *Entry) error) error {
	if k == nil || k.File == "" || k.Err != nil {
		return nil
	}
	for _, e := range k.Entries(w.follow...) {
		if w.v.Entry != nil {
			if err := w.v.Entry(k, e); err != nil {
				return err
			}
		}
		if e.Kind == Folder {
			if err := next(&e); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *walker) depth(dir string, from *Entry) error {
	k, err := w.enter(dir, from)
	if err != nil {
		return err
	}
	return w.entries(k, func(e *Entry) error { return w.depth(e.Path, e) })
}

func (w *walker) breadth(dir string) error {
	type next struct {
		dir  string
		from *Entry
	}
	queue := []next{{dir: dir}}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		k, err := w.enter(n.dir, n.from)
		if err != nil {
			return err
		}
		err = w.entries(k, func(e *Entry) error {
			queue = append(queue, next{e.Path, e})
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
