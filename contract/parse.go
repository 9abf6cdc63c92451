package contract

import (
	"bytes"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/capirepo/capirepo/internal/yamlpos"
	"github.com/capirepo/capirepo/internal/yamlsafe"
	"github.com/capirepo/capirepo/release"
)

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
	// check it as substituted with the values package values gives; where
	// no value the variables could take makes it parse, or a variable's
	// default breaks it, it is an error.
	var docs map[int]mending
	if len(bads) > 0 && varsErr == nil && bytes.Contains(f.Data, []byte("${")) {
		if data, d, changed := substituteBad(parse, f.Data); changed || len(d) > 0 {
			docs = d
			if changed {
				bads = bads[:0]
				objs = parse(data, crds, func(doc int, field, msg string) {
					bads = append(bads, badDoc{doc, field, msg})
				})
			}
		}
	}
	for _, doc := range slices.Sorted(maps.Keys(docs)) {
		if m := docs[doc]; m.note != "" {
			l.addSev(RuleYAML, Warning, file, fmt.Sprintf("document %d", doc+1), "", "%s", m.note)
		}
	}
	for _, b := range bads {
		if m, ok := docs[b.doc]; ok && m.broken != "" {
			l.add(RuleYAML, file, fmt.Sprintf("document %d", b.doc+1), b.field, "%s; %s", b.msg, m.broken)
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
