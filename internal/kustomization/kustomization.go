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

// The fields whose entries name files kustomize loads while it builds,
// fetching a URL over HTTP as it does for a resource. Generators,
// Transformers and Validators name plugin configurations the way
// Resources names objects: files, folders with a kustomization, or inline
// YAML. A walk can follow them; the others name files only.
const (
	Generators   Field = "generators"
	Transformers Field = "transformers"
	Validators   Field = "validators"
	// Configurations are transformer configurations.
	Configurations Field = "configurations"
	// OpenAPI is openapi.path, the schema kustomize merges by.
	OpenAPI Field = "openapi"
	// Replacements is the path of each replacements: entry that has one.
	Replacements Field = "replacements"
	// PatchesJSON6902 is the path of each patchesJson6902: entry that has
	// one.
	PatchesJSON6902 Field = "patchesJson6902"
	// ConfigMapGenerator and SecretGenerator are the files, envs and env
	// of each generator; a files: entry "key=path" names path.
	ConfigMapGenerator Field = "configMapGenerator"
	SecretGenerator    Field = "secretGenerator"
)

// FileFields are every field whose entries name something kustomize
// loads, in the order Entries lists them.
var FileFields = []Field{
	Resources, Bases, Components, Crds, PatchesStrategicMerge, Patches,
	Generators, Transformers, Validators, Configurations, OpenAPI,
	Replacements, PatchesJSON6902, ConfigMapGenerator, SecretGenerator,
}

// Entry is one entry of a kustomization's field.
type Entry struct {
	File  string // the kustomization file that lists it
	Field Field
	Index int
	Value string // as written; for a generator's "key=path", the path
	Kind  Kind
	Path  string // in the tree, for File, Folder and Missing
	// Sub is the entry's place inside Field[Index] when it is not the
	// item itself: "path", "files[1]", "envs[0]", "env".
	Sub string
}

// Where names the entry's field as a user-facing error does:
// resources[2], patches[0].path, configMapGenerator[1].files[0],
// openapi.path.
func (e Entry) Where() string {
	switch {
	case e.Field == OpenAPI:
		return string(e.Field) + ".path"
	case e.Sub != "":
		return fmt.Sprintf("%s[%d].%s", e.Field, e.Index, e.Sub)
	}
	return fmt.Sprintf("%s[%d]", e.Field, e.Index)
}

// item is one value of a field as read: where it sits and what it says.
type item struct {
	index int
	sub   string
	value string
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
	fields map[Field][]item
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
		Patches               []path   `json:"patches"`
		Generators            []string `json:"generators"`
		Transformers          []string `json:"transformers"`
		Validators            []string `json:"validators"`
		Configurations        []string `json:"configurations"`
		OpenAPI               struct {
			Path string `json:"path"`
		} `json:"openapi"`
		Replacements       []path      `json:"replacements"`
		PatchesJSON6902    []path      `json:"patchesJson6902"`
		ConfigMapGenerator []generator `json:"configMapGenerator"`
		SecretGenerator    []generator `json:"secretGenerator"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		k.Err = fmt.Errorf("%s: %w", k.File, err)
		return k
	}
	k.fields = map[Field][]item{}
	for field, vs := range map[Field][]string{
		Resources: f.Resources, Bases: f.Bases, Components: f.Components, Crds: f.Crds,
		PatchesStrategicMerge: f.PatchesStrategicMerge, Generators: f.Generators,
		Transformers: f.Transformers, Validators: f.Validators, Configurations: f.Configurations,
	} {
		for i, v := range vs {
			k.fields[field] = append(k.fields[field], item{index: i, value: v})
		}
	}
	for field, ps := range map[Field][]path{Patches: f.Patches, Replacements: f.Replacements, PatchesJSON6902: f.PatchesJSON6902} {
		for i, p := range ps {
			k.fields[field] = append(k.fields[field], item{index: i, sub: "path", value: p.Path})
		}
	}
	k.fields[OpenAPI] = []item{{value: f.OpenAPI.Path}}
	for field, gs := range map[Field][]generator{ConfigMapGenerator: f.ConfigMapGenerator, SecretGenerator: f.SecretGenerator} {
		for i, g := range gs {
			for j, v := range g.Files {
				k.fields[field] = append(k.fields[field], item{index: i, sub: fmt.Sprintf("files[%d]", j), value: fileSource(v)})
			}
			for j, v := range g.Envs {
				k.fields[field] = append(k.fields[field], item{index: i, sub: fmt.Sprintf("envs[%d]", j), value: v})
			}
			k.fields[field] = append(k.fields[field], item{index: i, sub: "env", value: g.Env})
		}
	}
	return k
}

// path is an entry of patches, replacements or patchesJson6902, which
// names a file by path: or holds its content inline.
type path struct {
	Path string `json:"path"`
}

// generator is the part of a configMapGenerator or secretGenerator entry
// that names files.
type generator struct {
	Files []string `json:"files"`
	Envs  []string `json:"envs"`
	Env   string   `json:"env"`
}

// fileSource is the path a generator's files: entry names: kustomize reads
// "key=path" as path under key, and a source without "=" as a path.
// (kustomize refuses a source with more than one "=", or with an empty key
// or path; the whole source stands for the path then.)
func fileSource(s string) string {
	if strings.Count(s, "=") == 1 {
		key, p, _ := strings.Cut(s, "=")
		if key != "" && p != "" {
			return p
		}
	}
	return s
}

// Entries lists and classifies the entries of the given fields, field by
// field in the order given, each in file order. An entry that names no
// file (an inline patch or replacement, a generator without env:) is left
// out.
func (k *Kustomization) Entries(fields ...Field) []Entry {
	var out []Entry
	for _, f := range fields {
		for _, it := range k.fields[f] {
			if it.value == "" {
				continue
			}
			kind, p := Classify(k.fs, k.Dir, it.value)
			out = append(out, Entry{File: k.File, Field: f, Index: it.index, Value: it.value, Kind: kind, Path: p, Sub: it.sub})
		}
	}
	return out
}
