package contract

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/capirepo/capirepo/contract/finding"
	"github.com/capirepo/capirepo/internal/yamlpos"
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
			field, _, _ := strings.Cut(f.Field, ", ") // merged findings: the first field's
			if loc, ok := src.Locate(f.Object, field); ok {
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
