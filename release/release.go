package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/provider"
)

// ChecksumsFile is written into every provider version folder.
const ChecksumsFile = "checksums.txt"

// Files about the release's files, made after checksums.txt and so not
// listed in it (Provider.Attached).
const (
	// ProvenanceFile holds the release's provenance: an in-toto statement
	// naming every file and checksums.txt with its sha256.
	ProvenanceFile = "provenance.intoto.json"
	// BundleSuffix ends the name of a Sigstore bundle: NAME.sigstore.json
	// signs NAME.
	BundleSuffix = ".sigstore.json"
)

// IsAttached says whether a file of that name belongs in Attached: the
// provenance and the Sigstore bundles.
func IsAttached(name string) bool {
	return name == ProvenanceFile || strings.HasSuffix(name, BundleSuffix)
}

// Release is one version of one or more providers.
type Release struct {
	Version   string
	Providers []*Provider
	// Attached are what Flat publishes after its one checksums.txt when the
	// release holds several providers (with one, the provider's own
	// Attached serve): the provenance and the bundles of that flat set.
	Attached []File
}

// Provider is one provider's files for one version.
type Provider struct {
	ID             provider.ID
	Version        string
	ComponentsFile string
	// Files are the release assets without checksums.txt, sorted by name.
	Files []File
	// NoChecksums leaves checksums.txt out of Assets: a mirrored release
	// holds only the files upstream published (clusterctl reads no
	// checksums.txt, and a file it does not expect confuses its lookup).
	NoChecksums bool
	// Attached are files published after checksums.txt and not listed in
	// it: provenance.intoto.json and the Sigstore bundles
	// (NAME.sigstore.json) that sign checksums.txt and the provenance, so
	// made after them. A mirrored release holds upstream's checksums.txt
	// here too, as it was published.
	Attached []File
}

// File is one release asset.
type File struct {
	Name string
	Data []byte
}

// SHA256 returns the hex sha256 of the file's bytes.
func (f File) SHA256() string {
	sum := sha256.Sum256(f.Data)
	return hex.EncodeToString(sum[:])
}

// Label returns the provider label (folder and package name).
func (p *Provider) Label() string { return p.ID.Label() }

// File returns the named file.
func (p *Provider) File(name string) (File, bool) {
	i := slices.IndexFunc(p.Files, func(f File) bool { return f.Name == name })
	if i < 0 {
		return File{}, false
	}
	return p.Files[i], true
}

// Components returns the components file.
func (p *Provider) Components() File {
	f, _ := p.File(p.ComponentsFile)
	return f
}

// Add adds or replaces a file, keeping Files sorted. It refuses names that
// are not plain file names.
func (p *Provider) Add(name string, data []byte) error {
	if err := provider.CheckFileName("file name", name); err != nil {
		return err
	}
	if name == ChecksumsFile {
		return fmt.Errorf("%s is written by capirepo", ChecksumsFile)
	}
	if IsAttached(name) {
		return fmt.Errorf("%s is made after %s and cannot be listed in it: attach it", name, ChecksumsFile)
	}
	p.Files = insertSorted(p.Files, File{Name: name, Data: data})
	return nil
}

// File name parts clusterctl derives template file names from
// (yamlprocessor.SimpleProcessor.GetTemplateName, GetClusterClassTemplateName).
const (
	templatePrefix     = "cluster-template"
	clusterClassPrefix = "clusterclass-"
)

// IsTemplate says whether clusterctl reads a release file as a template:
// a flavor (IsFlavor) or a ClusterClass (IsClusterClass). Other files of a
// release are published as they are and never read by clusterctl.
func IsTemplate(name string) bool { return IsFlavor(name) || IsClusterClass(name) }

// IsFlavor says whether a file is one clusterctl generate cluster fetches
// for a flavor: cluster-template.yaml or cluster-template-<flavor>.yaml.
func IsFlavor(name string) bool {
	return name == templatePrefix+".yaml" || strings.HasPrefix(name, templatePrefix+"-") && strings.HasSuffix(name, ".yaml")
}

// IsClusterClass says whether a file is one clusterctl fetches for a
// topology Cluster's class: clusterclass-<class>.yaml.
func IsClusterClass(name string) bool {
	return strings.HasPrefix(name, clusterClassPrefix) && strings.HasSuffix(name, ".yaml")
}

// FlavorOf returns the flavor a file name holds: cluster-template.yaml is
// the default flavor "", cluster-template-<flavor>.yaml is <flavor>.
func FlavorOf(file string) (string, bool) {
	if file == templatePrefix+".yaml" {
		return "", true
	}
	name, ok := strings.CutPrefix(file, templatePrefix+"-")
	if !ok {
		return "", false
	}
	name, ok = strings.CutSuffix(name, ".yaml")
	return name, ok && name != ""
}

// ClassOf returns the ClusterClass name of a clusterclass-<name>.yaml file.
func ClassOf(file string) (string, bool) {
	name, ok := strings.CutPrefix(file, clusterClassPrefix)
	if !ok {
		return "", false
	}
	name, ok = strings.CutSuffix(name, ".yaml")
	return name, ok && name != ""
}

// Attach adds or replaces a file published after checksums.txt (see
// Attached), keeping Attached sorted.
func (p *Provider) Attach(name string, data []byte) error {
	if err := provider.CheckFileName("file name", name); err != nil {
		return err
	}
	if _, ok := p.File(name); ok {
		return fmt.Errorf("%s is a release file, listed in %s: it cannot be attached too", name, ChecksumsFile)
	}
	p.Attached = insertSorted(p.Attached, File{Name: name, Data: data})
	return nil
}

// AttachedFile returns the named attached file.
func (p *Provider) AttachedFile(name string) (File, bool) {
	i := slices.IndexFunc(p.Attached, func(f File) bool { return f.Name == name })
	if i < 0 {
		return File{}, false
	}
	return p.Attached[i], true
}

func insertSorted(files []File, f File) []File {
	i, found := slices.BinarySearchFunc(files, f.Name, func(f File, n string) int { return strings.Compare(f.Name, n) })
	if found {
		files[i].Data = f.Data
		return files
	}
	return slices.Insert(files, i, f)
}

// Checksums returns checksums.txt in sha256sum's format for files.
func Checksums(files []File) []byte {
	var b bytes.Buffer
	for _, f := range files {
		fmt.Fprintf(&b, "%s  %s\n", f.SHA256(), f.Name)
	}
	return b.Bytes()
}

// ParseChecksums reads checksums.txt (sha256sum's format, as Checksums
// writes it): file name -> hex sha256. err names the first line that is not
// "<sha256>  <name>", or the first name listed twice (sha256sum -c would
// check the file against both lines, and one of them fails: which sum is
// meant cannot be told); the lines before and after it are read, and a name
// listed twice keeps its first sum.
func ParseChecksums(data []byte) (sums map[string]string, err error) {
	sums = map[string]string{}
	lineOf := map[string]int{}
	n := 0
	for line := range strings.Lines(string(data)) {
		n++
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			continue
		}
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || name == "" {
			if err == nil {
				err = fmt.Errorf("malformed line %q", line)
			}
			continue
		}
		name = strings.TrimPrefix(name, "*") // sha256sum -b marks binary files
		if first, dup := lineOf[name]; dup {
			if err == nil {
				err = fmt.Errorf("%s is listed twice (lines %d and %d): a checksums file lists each file once", name, first, n)
			}
			continue
		}
		sums[name], lineOf[name] = sum, n
	}
	return sums, err
}

// Listed returns the files with checksums.txt, without the attached ones:
// what a provenance names.
func (p *Provider) Listed() []File {
	if p.NoChecksums {
		return slices.Clone(p.Files)
	}
	return append(slices.Clone(p.Files), File{Name: ChecksumsFile, Data: Checksums(p.Files)})
}

// Assets returns the files with checksums.txt and the attached files, as
// written to the folder.
func (p *Provider) Assets() []File {
	return append(p.Listed(), p.Attached...)
}

// Flat returns every provider's files as one flat set, as a GitHub release
// carries them: files of the same name must be identical (a monorepo's shared
// metadata.yaml), and one checksums.txt covers them all; then the attached
// files of that set (FlatAttached).
func (r *Release) Flat() ([]File, error) {
	out, err := r.FlatListed()
	if err != nil {
		return nil, err
	}
	return append(out, r.FlatAttached()...), nil
}

// FlatAttached returns the files attached to the flat set: the only
// provider's, or the release's own for several.
func (r *Release) FlatAttached() []File {
	if len(r.Providers) == 1 {
		return slices.Clone(r.Providers[0].Attached)
	}
	return slices.Clone(r.Attached)
}

// FlatListed returns the flat set's files and its checksums.txt, without
// the attached files: what the flat set's provenance names.
func (r *Release) FlatListed() ([]File, error) {
	byName := map[string]File{}
	owner := map[string]string{}
	var out []File
	for _, p := range r.Providers {
		for _, f := range p.Files {
			if prev, ok := byName[f.Name]; ok {
				if !bytes.Equal(prev.Data, f.Data) {
					return nil, fmt.Errorf("providers %s and %s both have a different %s: a flat release can hold only one", owner[f.Name], p.Label(), f.Name)
				}
				continue
			}
			byName[f.Name], owner[f.Name] = f, p.Label()
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	return append(out, File{Name: ChecksumsFile, Data: Checksums(out)}), nil
}

// Clone copies the release and its providers, so files can be added to the
// copy without changing r (the files' bytes are shared: nothing edits them
// in place).
func (r *Release) Clone() *Release {
	out := &Release{Version: r.Version, Attached: slices.Clone(r.Attached)}
	for _, p := range r.Providers {
		c := *p
		c.Files, c.Attached = slices.Clone(p.Files), slices.Clone(p.Attached)
		out.Providers = append(out.Providers, &c)
	}
	return out
}

// Provider returns the provider with the given label.
func (r *Release) Provider(label string) (*Provider, bool) {
	i := slices.IndexFunc(r.Providers, func(p *Provider) bool { return p.Label() == label })
	if i < 0 {
		return nil, false
	}
	return r.Providers[i], true
}
