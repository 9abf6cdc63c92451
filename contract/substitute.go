package contract

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/internal/clusterctlvars"
	"github.com/capirepo/capirepo/values"
)

// parsesClean says whether a document parses into objects with no bad one.
func parsesClean(parse parseFunc, raw []byte) bool {
	bad := false
	objs := parse(raw, false, func(int, string, string) { bad = true })
	return !bad && len(objs) > 0
}

// mending is what substitution made of a document that does not parse as
// written: the text that parses, or why none does.
type mending struct {
	// note, when the document parses, says it does only with values of a
	// shape other than the stand-ins' (a warning); "" when the stand-ins do.
	note string
	// broken, when no tried value makes it parse, says why (an error).
	broken string
}

// substituteBad returns data with each document that does not parse, but
// does once its variables are substituted as clusterctl does, replaced by
// the substituted text: the values tried are package values' (Attempts: the
// stand-ins, every variable as a quoted string, every variable empty), each
// variable with a default taking its default. It says, by position among
// the non-blank documents, what became of each such document. changed says
// data changed.
func substituteBad(parse parseFunc, data []byte) (out []byte, docs map[int]mending, changed bool) {
	raws, err := splitDocuments(data)
	if err != nil {
		return data, nil, false
	}
	docs = map[int]mending{}
	for i, raw := range raws {
		if !bytes.Contains(raw, []byte("${")) || parsesClean(parse, raw) {
			continue
		}
		vars, err := clusterctlvars.Map(raw)
		if err != nil || len(vars) == 0 {
			continue
		}
		attempts := values.Attempts(raw)
		fixed := false
		for n, vals := range attempts {
			if s, err := values.Substitute(raw, vals); err == nil && parsesClean(parse, s) {
				raws[i], fixed, changed = s, true, true
				if n > 0 {
					docs[i] = mending{note: shapeNote(vals, n)}
				}
				break
			}
		}
		if fixed {
			continue
		}
		if broken := brokenDefaults(parse, raw, vars, attempts); len(broken) > 0 {
			docs[i] = mending{broken: defaultsMessage(broken, vars)}
			continue
		}
		docs[i] = mending{broken: "no value the variables could take makes it parse (capirepo tried the stand-ins it reads the release with, " +
			"every variable as a quoted string, and every variable empty as for a YAML fragment): clusterctl fails on it whatever values are given"}
	}
	if !changed {
		return data, docs, false
	}
	var b bytes.Buffer
	for i, raw := range raws {
		if i > 0 {
			b.WriteString("\n---\n")
		}
		b.Write(bytes.TrimSuffix(raw, []byte("\n")))
	}
	b.WriteString("\n")
	return b.Bytes(), docs, true
}

// shapeNote says which values made a document parse when the stand-ins did
// not (attempt n of values.Attempts).
func shapeNote(vals map[string]string, n int) string {
	names := strings.Join(slices.Sorted(maps.Keys(vals)), ", ")
	shape := "a quoted string"
	if n == 2 {
		shape = "empty"
	}
	return fmt.Sprintf("it parses only when %s is given as %s (clusterctl substitutes before it parses), not as a plain value; it is checked with those values", names, shape)
}

// brokenDefaults are the variables with a default that breaks the document
// when left unset: given a value instead (as any attempt gives the
// required ones), the document parses.
func brokenDefaults(parse parseFunc, raw []byte, vars map[string]*string, attempts []map[string]string) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if vars[name] == nil {
			continue
		}
		for _, vals := range attempts {
			vals = maps.Clone(vals)
			for _, v := range []string{values.Guess(name), `"` + values.Guess(name) + `"`, ""} {
				vals[name] = v
				if s, err := values.Substitute(raw, vals); err == nil && parsesClean(parse, s) {
					out = append(out, name)
					break
				}
			}
			if slices.Contains(out, name) {
				break
			}
		}
	}
	return out
}

// defaultsMessage names the variables whose defaults break a document.
func defaultsMessage(names []string, vars map[string]*string) string {
	var parts []string
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("%s's default %q (${%s:=%s})", name, *vars[name], name, *vars[name]))
	}
	return fmt.Sprintf("it parses when %s is given a value, but clusterctl substitutes the default when the user leaves it unset, and %s breaks it: give a default that keeps the YAML valid, or none",
		strings.Join(names, ", "), strings.Join(parts, ", "))
}
