package contract

import (
	"bytes"
	"errors"
	"strings"

	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"

	"github.com/capirepo/capirepo/internal/clusterctlvars"
	"github.com/capirepo/capirepo/internal/yamlpos"
)

// errUnset tells clusterctl's processor that a variable is not set, so that
// its default applies.
var errUnset = errors.New("not set")

// substituted returns a document as clusterctl would see it after variable
// substitution (yamlprocessor.SimpleProcessor.Process): each variable with a
// default takes its default, each other one the placeholder place(name).
func substituted(raw []byte, place func(name string) string) ([]byte, bool) {
	vars, err := clusterctlvars.Map(raw)
	if err != nil || len(vars) == 0 {
		return nil, false
	}
	out, err := yamlprocessor.NewSimpleProcessor().Process(raw, func(name string) (string, error) {
		if def, ok := vars[name]; ok && def != nil {
			return "", errUnset
		}
		return place(name), nil
	})
	if err != nil {
		return nil, false
	}
	return out, true
}

// placeholders are what a variable without a default stands for while a
// document is checked: a name-like value first (a scalar in a name or a
// label), then nothing (a variable that splices in a YAML block or list).
var placeholders = []func(string) string{
	func(name string) string { return strings.ToLower(strings.ReplaceAll(name, "_", "-")) },
	func(string) string { return "" },
}

// parsesClean says whether a document parses into objects with no bad one.
func parsesClean(parse parseFunc, raw []byte) bool {
	bad := false
	objs := parse(raw, false, func(int, string, string) { bad = true })
	return !bad && len(objs) > 0
}

// substituteBad returns data with each document that does not parse, but
// does after substituting its variables as clusterctl does, replaced by the
// substituted text; still lists, by position among the non-blank documents,
// those with variables that parse neither way: true where a variable is on
// the lines the YAML error points at (a substitution may mend it), false
// where none is (no substitution can). changed says data changed.
func substituteBad(parse parseFunc, data []byte) (out []byte, still map[int]bool, changed bool) {
	raws, err := splitDocuments(data)
	if err != nil {
		return data, nil, false
	}
	still = map[int]bool{}
	for i, raw := range raws {
		if !bytes.Contains(raw, []byte("${")) || parsesClean(parse, raw) {
			continue
		}
		fixed := false
		for _, place := range placeholders {
			if s, ok := substituted(raw, place); ok && parsesClean(parse, s) {
				raws[i], fixed, changed = s, true, true
				break
			}
		}
		if !fixed {
			still[i] = variableOnFailingLines(raw)
		}
	}
	if !changed {
		return data, still, false
	}
	var b bytes.Buffer
	for i, raw := range raws {
		if i > 0 {
			b.WriteString("\n---\n")
		}
		b.Write(bytes.TrimSuffix(raw, []byte("\n")))
	}
	b.WriteString("\n")
	return b.Bytes(), still, true
}

// variableOnFailingLines says whether a document that does not parse has a
// variable on the lines its YAML error points at, or whether the error names
// no line at all: then a substitution may still mend it. The lines are the
// one the error names and those next to it; for an unclosed collection ("did
// not find expected ..."), whose error names the line before the one that
// opens it, every line from there to the end of the document, any of which
// might close it.
func variableOnFailingLines(raw []byte) bool {
	e := yamlpos.Find("", raw)
	if e == nil || e.Line == 0 {
		return true
	}
	lines := bytes.Split(raw, []byte("\n"))
	from, to := e.Line-1, e.Line+1
	if strings.Contains(e.Msg, "did not find expected") {
		to = len(lines)
	}
	for n := max(from, 1); n <= min(to, len(lines)); n++ {
		if bytes.Contains(lines[n-1], []byte("${")) {
			return true
		}
	}
	return false
}
