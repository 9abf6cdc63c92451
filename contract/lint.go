package contract

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/capirepo/capirepo/contract/finding"
	"github.com/capirepo/capirepo/internal/yamlpos"
	"github.com/capirepo/capirepo/internal/yamlsafe"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// Finding is one rule broken at one place.
type Finding = finding.Finding

// Source is where a release file comes from in the provider tree.
type Source = finding.Source

// WaivedFinding is a finding of a disabled rule, with the waiver's reason.
type WaivedFinding struct {
	Finding
	Reason string `json:"reason"`
}

// Report is the outcome of a lint run. Both lists are sorted by file,
// object, field and rule.
type Report struct {
	Findings []Finding       `json:"findings"`
	Waived   []WaivedFinding `json:"waived"`
	// Unmatched are the waivers that matched no finding: stale, or
	// misspelt.
	Unmatched []Waiver `json:"unmatched,omitempty"`
	// NotWaived are the waivers that matched an error of a rule whose
	// errors clusterctl refuses (Rule.Refused): such an error stands.
	NotWaived []Waiver `json:"notWaived,omitempty"`
}

// Unwaivable says whether f is an error no waiver clears: one of a rule
// whose errors clusterctl refuses the whole release for (Rule.Waivable).
func Unwaivable(f Finding) bool {
	r, ok := LookupRule(f.Rule)
	return ok && f.Severity == Error && !r.Waivable()
}

// Waiver waives a rule, on every finding or on those of matching objects
// and files (capirepo.yaml lint.disable).
type Waiver = provider.Waiver

// matches says whether w waives f. Object and File are globs in which *
// matches any text (slashes too); Object matches Kind/namespace/name or
// Kind/name, File the path or the file name.
func matches(w Waiver, f Finding) bool {
	if w.Rule != f.Rule {
		return false
	}
	if w.Object != "" {
		short := f.Object
		if k, rest, ok := strings.Cut(f.Object, "/"); ok {
			if _, name, ok := strings.Cut(rest, "/"); ok {
				short = k + "/" + name
			}
		}
		if !glob(w.Object, f.Object) && !glob(w.Object, short) {
			return false
		}
	}
	if w.File != "" && !glob(w.File, f.File) && !glob(w.File, path.Base(f.File)) {
		return false
	}
	return true
}

// glob matches s against a pattern in which * stands for any text.
func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// HasErrors reports whether a finding that is not waived is an error.
func (r Report) HasErrors() bool { return r.Count(Error) > 0 }

// Count returns how many findings that are not waived have the severity.
func (r Report) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

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

// Validate checks that every disabled rule exists and has a reason.
func (o Options) Validate() error {
	for i, w := range o.Waivers {
		if _, ok := LookupRule(w.Rule); !ok {
			return fmt.Errorf("lint: waiver %d: no rule %q (rules are CAPI001 ... %s; see docs/lint-rules.md)", i+1, w.Rule, catalogue[len(catalogue)-1].ID)
		}
		if strings.TrimSpace(w.Reason) == "" {
			return fmt.Errorf("lint: waiver %d (%s) needs a reason", i+1, w.Rule)
		}
	}
	for id, reason := range o.Disabled {
		if _, ok := LookupRule(id); !ok {
			return fmt.Errorf("lint: no rule %q to disable (rules are CAPI001 ... %s; see docs/lint-rules.md)", id, catalogue[len(catalogue)-1].ID)
		}
		if strings.TrimSpace(reason) == "" {
			return fmt.Errorf("lint: disabling %s needs a reason", id)
		}
	}
	if o.Provider != "" {
		if _, err := provider.ParseLabel(o.Provider); err != nil {
			return fmt.Errorf("lint: %w", err)
		}
	}
	if o.Version != "" {
		if _, err := provider.ParseVersion(o.Version); err != nil {
			return fmt.Errorf("lint: %w", err)
		}
	}
	return nil
}

// Disabled turns the whole-rule waivers of capirepo.yaml's lint section into
// Options.Disabled; Waivers gives all of them, the narrow ones too.
func Disabled(l provider.Lint) map[string]string {
	out := make(map[string]string, len(l.Disable))
	for _, w := range l.Disable {
		if w.Object == "" && w.File == "" {
			out[w.Rule] = w.Reason
		}
	}
	return out
}

// Waivers returns capirepo.yaml's lint.disable as Options.Waivers.
func Waivers(l provider.Lint) []Waiver { return slices.Clone(l.Disable) }

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

type fileKind int

const (
	kindOther fileKind = iota
	kindMetadata
	kindComponents
	kindTemplate
	kindClusterClass
	// kindYAML is a YAML file of a release that clusterctl does not read
	// (cluster-class.yaml, image-template-node.yaml): checked as YAML only.
	kindYAML
)

// classifyAsClusterctl says what a file of a whole provider release is by
// its name alone, as clusterctl reads a release: metadata.yaml, the
// components, cluster-template*.yaml flavors and clusterclass-*.yaml
// classes. Any other YAML file is published as it is and only checked to
// parse; what it holds does not matter (a Cluster in cluster-class.yaml is
// no flavor). Files of another sort are not linted.
func classifyAsClusterctl(f release.File, components string) fileKind {
	isYAML := strings.HasSuffix(f.Name, ".yaml") || strings.HasSuffix(f.Name, ".yml")
	stem := strings.TrimSuffix(components, path.Ext(components))
	switch {
	case f.Name == provider.MetadataFile:
		return kindMetadata
	case f.Name == components, components != "" && strings.HasPrefix(f.Name, stem+"-") && strings.Contains(f.Name, "components") && isYAML:
		return kindComponents // the components, or another components file of the provider
	case release.IsFlavor(f.Name):
		return kindTemplate
	case release.IsClusterClass(f.Name):
		return kindClusterClass
	case isYAML:
		return kindYAML
	}
	return kindOther
}

func classify(f release.File) fileKind {
	switch {
	case f.Name == provider.MetadataFile:
		return kindMetadata
	case strings.HasPrefix(f.Name, "cluster-template") && strings.HasSuffix(f.Name, ".yaml"):
		return kindTemplate
	case strings.HasPrefix(f.Name, "clusterclass-") && strings.HasSuffix(f.Name, ".yaml"):
		return kindClusterClass
	case strings.Contains(f.Name, "components") && (strings.HasSuffix(f.Name, ".yaml") || strings.HasSuffix(f.Name, ".yml")):
		return kindComponents
	case !strings.HasSuffix(f.Name, ".yaml") && !strings.HasSuffix(f.Name, ".yml"):
		return kindOther
	}
	// Decide by content: what a file of each sort must hold.
	s := string(f.Data)
	switch {
	case strings.Contains(s, "kind: Metadata") && strings.Contains(s, "releaseSeries"):
		return kindMetadata
	case strings.Contains(s, "kind: CustomResourceDefinition") || strings.Contains(s, "kind: Deployment"):
		return kindComponents
	case strings.Contains(s, "kind: Cluster\n"):
		return kindTemplate
	case strings.Contains(s, "kind: ClusterClass"):
		return kindClusterClass
	}
	return kindOther
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
	for i, f := range templates {
		l.lintTemplate(v, f, tobjs[i], classes)
		l.lintOwnKinds(v, f, tobjs[i], defined)
	}
	for i, f := range classes {
		l.lintClusterClass(v, f, cobjs[i])
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

// parseFunc is parseObjects' signature; tests swap in the linter's
// previous parser to compare Reports.
type parseFunc func(data []byte, crds bool, bad func(doc int, field, msg string)) []*object

// parse splits a file into objects, reporting bad documents and bad
// variable syntax. With crds, CustomResourceDefinitions are decoded too.
// The variables are checked on another goroutine while the documents parse;
// the findings are added in the same order as when done one after the other.
func (l *linter) parse(v *view, f release.File, crds bool) []*object {
	file := v.path(f.Name)
	l.mu.Lock()
	if l.data == nil {
		l.data = map[string][]byte{}
	}
	l.data[file] = f.Data
	l.mu.Unlock()
	varErr := make(chan error, 1)
	go func() {
		_, err := getVariables(f.Data)
		varErr <- err
	}()
	type badDoc struct {
		doc        int
		field, msg string
	}
	var bads []badDoc
	parse := l.parseDocs
	if parse == nil {
		parse = parseObjects
	}
	objs := parse(f.Data, crds, func(doc int, field, msg string) {
		bads = append(bads, badDoc{doc, field, msg})
	})
	varsErr := <-varErr
	if varsErr != nil {
		l.add(RuleVariableSyntax, file, "", "", "variables do not parse as clusterctl parses them: %v", varsErr)
	}
	for _, name := range emptyDefaults(f.Data) {
		l.add(RuleEmptyDefault, file, "", "", "${%s:=} has an empty default, which clusterctl treats as no default: the variable is required, and generate provider/init fail unless it is set; give a real default, or ${%s:=\"\"} and read \"\" as empty (see CAPI003)", name, name)
	}
	// A document may be YAML only after substitution (a variable that
	// splices in a block): clusterctl substitutes before it parses, so
	// check it as substituted, and where no placeholder makes it parse,
	// warn naming the checks skipped instead of refusing it.
	var still map[int]bool
	if len(bads) > 0 && varsErr == nil && bytes.Contains(f.Data, []byte("${")) {
		if data, st, changed := substituteBad(parse, f.Data); changed || len(st) > 0 {
			still = st
			if changed {
				bads = bads[:0]
				objs = parse(data, crds, func(doc int, field, msg string) {
					bads = append(bads, badDoc{doc, field, msg})
				})
			}
		}
	}
	for _, b := range bads {
		if still[b.doc] {
			l.addSev(RuleYAML, Warning, file, fmt.Sprintf("document %d", b.doc+1), b.field, "%s; it holds variables and may be YAML only once they are substituted (clusterctl substitutes before it parses), but no placeholder makes it parse, so %s skipped for this document", b.msg, skippedChecks(f))
			continue
		}
		l.add(RuleYAML, file, fmt.Sprintf("document %d", b.doc+1), b.field, "%s", b.msg)
	}
	return objs
}

// lintYAMLOnly checks a published YAML file clusterctl does not read: it
// parses (each document on its own, as kustomize and kubectl read it) and
// its aliases are bounded. What it holds is the provider's business.
func (l *linter) lintYAMLOnly(v *view, f release.File) {
	file := v.path(f.Name)
	if err := yamlsafe.CheckAliases(file, f.Data); err != nil {
		l.add(RuleYAML, file, "", "", "%v", err)
		return
	}
	if e := yamlpos.Find(file, f.Data); e != nil {
		l.add(RuleYAML, file, fmt.Sprintf("document %d", e.Document), "", "%s", e.Msg)
	}
}

// emptyDefaultRE matches ${VAR:=}, ${VAR:-}, ${VAR=} and ${VAR-}: nothing
// between the operator and the brace. A default of spaces (${VAR:= }) is
// no empty default: clusterctl keeps it and substitutes the spaces.
var emptyDefaultRE = regexp.MustCompile(`\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:?[=-]\}`)

// emptyDefaults lists, once each and sorted, the variables written with an
// empty default.
func emptyDefaults(data []byte) []string {
	if !bytes.Contains(data, []byte("${")) {
		return nil
	}
	var out []string
	for _, m := range emptyDefaultRE.FindAllSubmatch(data, -1) {
		out = append(out, string(m[1]))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// skippedChecks names the rules that read the objects of a file of f's sort.
func skippedChecks(f release.File) string {
	switch classify(f) {
	case kindTemplate:
		return "the template checks (CAPI501 ... CAPI505) are"
	case kindClusterClass:
		return "the ClusterClass checks (CAPI601 ... CAPI604) are"
	case kindComponents:
		return "the components and CRD checks (CAPI2xx, CAPI3xx, CAPI401) are"
	}
	return "all object checks are"
}

func (l *linter) report(opts Options) Report {
	r := Report{Findings: []Finding{}, Waived: []WaivedFinding{}}
	used := make([]bool, len(opts.Waivers))
	// A finding of the build stands for the lint's own on the same object
	// (e.g. CAPI101 naming the configured metadata path).
	type where struct{ rule, file, obj string }
	fromBuild := map[where]bool{}
	for _, f := range opts.Findings {
		fromBuild[where{f.Rule, f.File, f.Object}] = true
	}
	all := slices.Clip(opts.Findings)
	for _, f := range l.findings {
		if !fromBuild[where{f.Rule, f.File, f.Object}] {
			all = append(all, f)
		}
	}
	usedRule := map[string]bool{}
	notWaived := map[Waiver]bool{}
	for _, f := range all {
		if Unwaivable(f) {
			if reason, ok := opts.Disabled[f.Rule]; ok {
				notWaived[Waiver{Rule: f.Rule, Reason: reason}] = true
				usedRule[f.Rule] = true
			}
			for i, w := range opts.Waivers {
				if matches(w, f) {
					notWaived[w], used[i] = true, true
				}
			}
			r.Findings = append(r.Findings, f)
			continue
		}
		if reason, ok := opts.Disabled[f.Rule]; ok {
			r.Waived = append(r.Waived, WaivedFinding{Finding: f, Reason: reason})
			usedRule[f.Rule] = true
			continue
		}
		waived := false
		for i, w := range opts.Waivers {
			if matches(w, f) {
				if !waived {
					r.Waived = append(r.Waived, WaivedFinding{Finding: f, Reason: w.Reason})
				}
				waived, used[i] = true, true
			}
		}
		if !waived {
			r.Findings = append(r.Findings, f)
		}
	}
	for i, w := range opts.Waivers {
		if !used[i] && opts.Checks.ran(w.Rule) {
			r.Unmatched = append(r.Unmatched, w)
		}
	}
	for _, rule := range sortedKeys(opts.Disabled) {
		if !usedRule[rule] && opts.Checks.ran(rule) {
			r.Unmatched = append(r.Unmatched, Waiver{Rule: rule, Reason: opts.Disabled[rule]})
		}
	}
	r.NotWaived = slices.SortedFunc(maps.Keys(notWaived), func(a, b Waiver) int {
		return cmp.Or(strings.Compare(a.Rule, b.Rule), strings.Compare(a.Object, b.Object), strings.Compare(a.File, b.File))
	})
	sort.SliceStable(r.Findings, func(i, j int) bool { return less(r.Findings[i], r.Findings[j]) })
	sort.SliceStable(r.Waived, func(i, j int) bool { return less(r.Waived[i].Finding, r.Waived[j].Finding) })
	r.Findings = mergeFields(slices.Compact(r.Findings))
	r.Waived = slices.Compact(r.Waived)
	l.addSources(r, opts.Sources)
	return r
}

// addSources sets each finding's Source, and for a file copied as it is
// the line of its object.
func (l *linter) addSources(r Report, sources map[string]Source) {
	if len(sources) == 0 {
		return
	}
	lines := map[string]map[string]int{}
	set := func(f *Finding) {
		src, ok := sources[f.File]
		if !ok {
			return
		}
		f.Source = src.Path
		if src.Locate != nil && f.Object != "" {
			if loc, ok := src.Locate(f.Object); ok {
				f.Source, f.Line = loc.Path, loc.Line
				return
			}
		}
		if !src.Copied || f.Object == "" {
			return
		}
		// A document that does not parse: the line of the error in the
		// file, not in its document (the parser counts from the document).
		if f.Rule == RuleYAML {
			if e := yamlpos.Find(f.File, l.data[f.File]); e != nil && e.Line > 0 && f.Object == fmt.Sprintf("document %d", e.Document) {
				f.Line = e.Line
				if e.Object != "" && !strings.Contains(f.Message, e.Object) {
					f.Message += " (" + e.Object + ")"
				}
				return
			}
		}
		if _, done := lines[f.File]; !done {
			lines[f.File] = objectLines(l.data[f.File])
		}
		f.Line = lines[f.File][f.Object]
	}
	for i := range r.Findings {
		set(&r.Findings[i])
	}
	for i := range r.Waived {
		set(&r.Waived[i].Finding)
	}
}

// objectLines maps each object ID (and "document N") of a file to the
// 1-based line its document starts on.
func objectLines(data []byte) map[string]int {
	out := map[string]int{}
	raws, _ := splitDocuments(data)
	pos, n := 0, 0
	for _, raw := range raws {
		i := bytes.Index(data[pos:], bytes.TrimSpace(raw))
		if i < 0 {
			continue
		}
		line := 1 + bytes.Count(data[:pos+i], []byte("\n"))
		pos += i + len(bytes.TrimSpace(raw))
		d := decodeDocument(raw, false)
		if d.err == nil && d.v == nil {
			continue // takes no number
		}
		n++
		out[fmt.Sprintf("document %d", n)] = line
		if d.obj != nil {
			out[d.obj.ID()] = line
		}
	}
	return out
}

// mergeFields makes one finding per rule and object: findings of one rule,
// severity, file and object on several fields become one that lists the
// fields, and the messages that differ. Sorted input stays sorted.
func mergeFields(fs []Finding) []Finding {
	out := fs[:0]
	for i := 0; i < len(fs); {
		j := i + 1
		for j < len(fs) && fs[i].Object != "" && fs[j].Rule == fs[i].Rule && fs[j].Severity == fs[i].Severity && fs[j].File == fs[i].File && fs[j].Object == fs[i].Object {
			j++
		}
		f := fs[i]
		if j-i > 1 {
			var fields, msgs []string
			for _, g := range fs[i:j] {
				if g.Field != "" && !slices.Contains(fields, g.Field) {
					fields = append(fields, g.Field)
				}
				if !slices.Contains(msgs, g.Message) {
					msgs = append(msgs, g.Message)
				}
			}
			f.Field = strings.Join(fields, ", ")
			f.Message = strings.Join(msgs, "; ")
		}
		out = append(out, f)
		i = j
	}
	return out
}

func less(a, b Finding) bool { return finding.Compare(a, b) < 0 }
