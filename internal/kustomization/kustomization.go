package kustomization

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// Find returns dir's kustomization file: the first of the names kustomize
// recognises that is a file (a folder of that name is not one), or "".
func Find(fs filesys.FileSystem, dir string) string {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if p := filepath.Join(dir, n); fs.Exists(p) && !fs.IsDir(p) {
			return p
		}
	}
	return ""
}

// Kind is what an entry of a kustomization names.
type Kind int

const (
	// Missing is a relative path to nothing in the tree, and not remote.
	Missing Kind = iota
	// File is a file of the tree.
	File
	// Folder is a folder of the tree (kustomize reads its kustomization).
	Folder
	// Remote is a reference kustomize fetches instead of reading the tree:
	// a URL (in any letter case, as kustomize parses it), or an scp-like
	// git address or a host/org/repo shorthand that is not a relative path
	// of the tree.
	Remote
	// Absolute is an absolute path, which kustomize reads as it stands,
	// wherever it points.
	Absolute
	// Inline is a patch written in the entry itself.
	Inline
)

func (k Kind) String() string {
	switch k {
	case Missing:
		return "missing"
	case File:
		return "file"
	case Folder:
		return "folder"
	case Remote:
		return "remote"
	case Absolute:
		return "absolute"
	case Inline:
		return "inline"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// urlRef matches a URL (http, https, git, ssh, file, ...), which kustomize
// fetches before it looks for a file or folder of that name. Schemes are
// case-insensitive: kustomize fetches HTTPS://host/x.yaml too.
var urlRef = regexp.MustCompile(`(?i)^[a-z][a-z0-9+.-]*://`)

// repoRef matches the other references kustomize fetches: scp-like git
// addresses and host/org/repo shorthands such as
// github.com/org/repo//path?ref=v1.
var repoRef = regexp.MustCompile(`(?i)^(git@|[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}(:[0-9]+)?/)`)

// Classify says what entry names when the kustomization in dir lists it,
// and for the local kinds (File, Folder, Missing) its path.
func Classify(fs filesys.FileSystem, dir, entry string) (Kind, string) {
	if strings.Contains(entry, "\n") {
		return Inline, ""
	}
	if filepath.IsAbs(entry) {
		return Absolute, ""
	}
	if urlRef.MatchString(entry) {
		return Remote, ""
	}
	p := filepath.Join(dir, entry)
	switch {
	case fs.IsDir(p):
		return Folder, p
	case fs.Exists(p):
		return File, p
	case repoRef.MatchString(entry):
		return Remote, ""
	}
	return Missing, p
}

// Field is a field of a kustomization whose entries name files or
// kustomizations.
type Field string

// The fields a walk can follow, in the order kustomize reads them.
const (
	Resources             Field = "resources"
	Bases                 Field = "bases"
	Components            Field = "components"
	Crds                  Field = "crds"
	PatchesStrategicMerge Field = "patchesStrategicMerge"
	// Patches is the path of each patches: entry that has one.
	Patches Field = "patches"
)

// Entry is one entry of a kustomization's field.
type Entry struct {
	File  string // the kustomization file that lists it
	Field Field
	Index int
	Value string // as written
	Kind  Kind
	Path  string // in the tree, for File, Folder and Missing
}

// Where names the entry's field as a user-facing error does:
// resources[2], patches[0].path.
func (e Entry) Where() string {
	if e.Field == Patches {
		return fmt.Sprintf("%s[%d].path", e.Field, e.Index)
	}
	return fmt.Sprintf("%s[%d]", e.Field, e.Index)
}

// Kustomization is one folder a walk reached.
type Kustomization struct {
	Dir string
	// File is Dir's kustomization file; "" when it has none, which
	// kustomize refuses for a folder it is asked to build.
	File string
	// Data is File's content; nil when it could not be read.
	Data []byte
	// Err says why File could not be read or parsed; a walk does not
	// follow the entries of such a kustomization.
	Err error
	// From is the entry that led the walk here; nil where the walk started.
	From *Entry

	fs     filesys.FileSystem
	fields map[Field][]string
}

// read loads dir's kustomization through fs. A folder without one, or a
// file that cannot be read or parsed, is not an error here: it is told by
// File and Err.
func read(fs filesys.FileSystem, dir string) *Kustomization {
	k := &Kustomization{Dir: dir, fs: fs, File: Find(fs, dir)}
	if k.File == "" {
		return k
	}
	data, err := fs.ReadFile(k.File)
	if err != nil {
		k.Err = err
		return k
	}
	k.Data = data
	var f struct {
		Resources             []string `json:"resources"`
		Bases                 []string `json:"bases"`
		Components            []string `json:"components"`
		Crds                  []string `json:"crds"`
		PatchesStrategicMerge []string `json:"patchesStrategicMerge"`
		Patches               []struct {
			Path string `json:"path"`
		} `json:"patches"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		k.Err = fmt.Errorf("%s: %w", k.File, err)
		return k
	}
	k.fields = map[Field][]string{Resources: f.Resources, Bases: f.Bases, Components: f.Components, Crds: f.Crds, PatchesStrategicMerge: f.PatchesStrategicMerge}
	for _, p := range f.Patches {
		k.fields[Patches] = append(k.fields[Patches], p.Path)
	}
	return k
}

// Entries lists and classifies the entries of the given fields, field by
// field in the order given, each in file order. A patches: entry without a
// path (an inline patch) is left out.
func (k *Kustomization) Entries(fields ...Field) []Entry {
	var out []Entry
	for _, f := range fields {
		for i, v := range k.fields[f] {
			if v == "" {
				continue
			}
			kind, p := Classify(k.fs, k.Dir, v)
			out = append(out, Entry{File: k.File, Field: f, Index: i, Value: v, Kind: kind, Path: p})
		}
	}
	return out
}
