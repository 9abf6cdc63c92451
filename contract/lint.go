package contract

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/values"
)

// Options tune a lint run.
type Options struct {
	// Disabled waives rules: rule ID -> reason (--disable). Findings of a
	// waived rule are kept in Report.Waived.
	Disabled map[string]string
	// Waivers waive a rule, or a rule on some objects or files only
	// (capirepo.yaml lint.disable). Each that matches no finding is listed
	// in Report.Unmatched.
	Waivers []Waiver
	// Findings were found before the lint, by the build (e.g. a provider
	// label it rewrote, a metadata.yaml the config names but the tree lacks);
	// they are reported and waived with the lint's own.
	Findings []Finding
	// Sources lead findings back to the tree: release path
	// (<label>/<version>/<name>) -> where the file comes from (the build's
	// Result.Sources).
	Sources map[string]Source

	// ImageTags are the tags the build gave each provider's manager image
	// (provider label -> tag, e.g. 1.2.3 from image.tag "{{ .VersionNoV }}"):
	// the release's own tag, which CAPI206 accepts as the version.
	ImageTags map[string]string

	// Version and Provider describe the files given to LintFiles when they
	// are not a whole release: the release version (vX.Y.Z) and provider
	// label. Either may be empty; rules that need them are then skipped or
	// infer what they can from the files. Lint takes both from the Release.
	Version  string
	Provider string

	// Checks says which rules ran, so that a waiver of a rule that did not
	// run is not reported as matching nothing: zero means the lint's
	// (CheckLint).
	Checks Checks
}

// Checks are the groups of rules a run checks.
type Checks int

const (
	// CheckLint: the rules of one release (every area but upgrade).
	CheckLint Checks = 1 << iota
	// CheckUpgrade: the rules that compare a release with an older one
	// (area upgrade: capirepo diff, lint --against, release).
	CheckUpgrade
)

// ran says whether the rule's group was checked.
func (c Checks) ran(rule string) bool {
	if c == 0 {
		c = CheckLint
	}
	r, ok := LookupRule(rule)
	if !ok {
		return true
	}
	if r.Area == AreaUpgrade {
		return c&CheckUpgrade != 0
	}
	return c&CheckLint != 0
}

// Lint checks every provider of a release: metadata.yaml, the components
// file, cluster templates and ClusterClass files.
// Providers are checked concurrently: each has its own linter, and the
// rules read only their provider's files.
func Lint(rel *release.Release, opts Options) Report {
	r := lintRelease(rel, opts, nil)
	if checkReport != nil {
		checkReport(r, func(parse parseFunc) Report { return lintRelease(rel, opts, parse) })
	}
	return r
}

// checkReport is nil but in this package's tests, which set it to compare
// every Report with the one of the linter's previous parser: again lints the
// same input with another parser.
var checkReport func(got Report, again func(parseFunc) Report)

func lintRelease(rel *release.Release, opts Options, parse parseFunc) Report {
	parts := make([]linter, len(rel.Providers))
	var wg sync.WaitGroup
	for i, p := range rel.Providers {
		wg.Go(func() {
			id := p.ID
			parts[i].parseDocs = parse
			parts[i].lintView(&view{
				id:         &id,
				label:      p.Label(),
				version:    cmp.Or(p.Version, rel.Version),
				prefix:     path.Join(p.Label(), cmp.Or(p.Version, rel.Version)),
				files:      p.Files,
				components: p.ComponentsFile,
				complete:   true,
				imageTag:   opts.ImageTags[p.Label()],
			})
		})
	}
	wg.Wait()
	l := &linter{data: map[string][]byte{}}
	for i := range parts {
		l.findings = append(l.findings, parts[i].findings...)
		maps.Copy(l.data, parts[i].data)
	}
	return l.report(opts)
}

// Collect makes the report of findings found elsewhere (opts.Findings: the
// upgrade check's, package diff): sorted, merged per rule and object,
// waived and led back to their sources as the lint's own are.
func Collect(opts Options) Report {
	return (&linter{}).report(opts)
}

// LintFiles checks loose files, e.g. one components file or one cluster
// template (capirepo lint path/to/file.yaml). What each file is comes from its
// name (metadata.yaml, cluster-template*.yaml, clusterclass-*.yaml,
// *components*.yaml) or, failing that, its content. Rules about files that
// are absent (no metadata.yaml, no clusterclass file for a topology) apply
// only when a file of that sort is among files.
func LintFiles(files []release.File, opts Options) Report {
	r := lintFiles(files, opts, nil)
	if checkReport != nil {
		checkReport(r, func(parse parseFunc) Report { return lintFiles(files, opts, parse) })
	}
	return r
}

func lintFiles(files []release.File, opts Options, parse parseFunc) Report {
	l := &linter{parseDocs: parse}
	v := &view{label: opts.Provider, version: opts.Version, files: files}
	if opts.Provider != "" {
		if id, err := provider.ParseLabel(opts.Provider); err == nil {
			v.id = &id
		}
	}
	for _, f := range files {
		if classify(f) == kindComponents && v.components == "" {
			v.components = f.Name
		}
	}
	l.lintView(v)
	return l.report(opts)
}

// view is one provider's files as the rules see them.
type view struct {
	id         *provider.ID // nil when unknown
	label      string       // "" when unknown
	version    string       // "" when unknown
	prefix     string
	files      []release.File
	components string
	// complete says the files are a whole provider release, so a missing
	// file is a finding.
	complete bool

	// filled while linting
	meta *provider.Metadata
	// managerTagged: a Deployment's manager container has the release tag.
	managerTagged bool
	// imageTag is the tag the build set on the manager image ("" unknown).
	imageTag string
	// uncovered is metadata.yaml's path in the release when no series
	// covers the version; labelled are the contracts of the components'
	// CRDs' cluster.x-k8s.io/<contract> labels.
	uncovered string
	labelled  []string
	// topo is package values' answer to which flavor ships the class a
	// topology flavor names; made on first use.
	topo *values.Topology
}

// topology is the view's Topology (package values), made once.
func (v *view) topology() *values.Topology {
	if v.topo == nil {
		v.topo = values.TopologyOf(v.files)
	}
	return v.topo
}

// releaseTag says whether an image tag is this release's: the version,
// the version without its v (images tagged 1.2.3), or the tag the build set.
func (v *view) releaseTag(tag string) bool {
	return v.version != "" && (tag == v.version || tag == strings.TrimPrefix(v.version, "v")) || v.imageTag != "" && tag == v.imageTag
}

func (v *view) path(name string) string {
	if v.prefix == "" {
		return name
	}
	return v.prefix + "/" + name
}

type linter struct {
	findings []Finding
	// data is each parsed file's text, by its path in the release.
	data map[string][]byte
	mu   sync.Mutex
	// parseDocs parses a file; nil means parseObjects.
	parseDocs parseFunc
}

// add records a finding of rule at its default severity.
func (l *linter) add(rule, file, obj, field, format string, args ...any) {
	l.addSev(rule, mustRule(rule).Severity, file, obj, field, format, args...)
}

func (l *linter) addSev(rule string, sev Severity, file, obj, field, format string, args ...any) {
	l.findings = append(l.findings, Finding{
		Rule: rule, Severity: sev, File: file, Object: obj, Field: field,
		Message: fmt.Sprintf(format, args...),
	})
}

func (l *linter) lintView(v *view) {
	var templates, classes, others []release.File
	var meta *release.File
	for i, f := range v.files {
		kind := classify(f)
		if v.complete {
			kind = classifyAsClusterctl(f, v.components)
		}
		switch kind {
		case kindMetadata:
			meta = &v.files[i]
		case kindTemplate:
			templates = append(templates, f)
		case kindClusterClass:
			classes = append(classes, f)
		case kindYAML:
			others = append(others, f)
		}
	}
	for _, f := range others {
		l.lintYAMLOnly(v, f)
	}
	l.lintMetadata(v, meta)
	// Templates and ClusterClasses first: their references tell which
	// kinds of the components are contract kinds.
	rs := refs{}
	tobjs := make([][]*object, len(templates))
	for i, f := range templates {
		tobjs[i] = l.parseTemplate(v, f)
		rs.collect(tobjs[i])
	}
	cobjs := make([][]*object, len(classes))
	for i, f := range classes {
		cobjs[i] = l.parseTemplate(v, f)
		rs.collect(cobjs[i])
	}
	var defined []string // group/kind of the provider's CRDs, nil without components
	if v.components != "" {
		f, _ := fileNamed(v.files, v.components)
		defined = append([]string{}, l.lintComponents(v, f, rs)...)
		// More components files of the same provider (e.g.
		// infrastructure-components-supervisor.yaml beside
		// infrastructure-components.yaml) are checked the same way.
		stem := strings.TrimSuffix(v.components, path.Ext(v.components))
		for _, f := range v.files {
			if f.Name != v.components && strings.HasPrefix(f.Name, stem+"-") && classify(f) == kindComponents {
				defined = append(defined, l.lintComponents(v, f, rs)...)
			}
		}
	}
	l.lintUncovered(v)
	for i, f := range templates {
		l.lintTemplate(v, f, tobjs[i], classes)
		l.lintClassVariables(v.path(f.Name), tobjs[i])
		l.lintOwnKinds(v, f, tobjs[i], defined)
	}
	for i, f := range classes {
		l.lintClusterClass(v, f, cobjs[i])
		l.lintClassVariables(v.path(f.Name), cobjs[i])
		l.lintOwnKinds(v, f, cobjs[i], defined)
	}
}

func fileNamed(files []release.File, name string) (release.File, bool) {
	i := slices.IndexFunc(files, func(f release.File) bool { return f.Name == name })
	if i < 0 {
		return release.File{}, false
	}
	return files[i], true
}
