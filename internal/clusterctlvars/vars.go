package clusterctlvars

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/drone/envsubst/v2/parse"
)

// Map returns what clusterctl's yamlprocessor.SimpleProcessor.GetVariableMap
// returns for data, with the same envsubst parser, without its cost on large
// components: clusterctl
// first rewrites legacy "${ VAR }" forms with a regular expression run over
// the whole file, which takes longer than rendering the YAML. Every match of
// that expression starts with "${" and continues only over spaces,
// identifier characters and "$" up to a "}", so rewriting just those spans
// with the same expression gives the same text.
func Map(data []byte) (map[string]*string, error) {
	t, err := parse.Parse(convertLegacyVars(string(data)))
	if err != nil {
		return nil, err
	}
	variables := map[string]string{}
	traverse(t.Root, variables)
	out := make(map[string]*string, len(variables))
	for k, v := range variables {
		if v == "" {
			out[k] = nil
		} else {
			out[k] = &v
		}
	}
	return out, nil
}

// legacyVariableRE and whitespaceRE are clusterctl's (yamlprocessor, v1.14).
var (
	legacyVariableRE = regexp.MustCompile(`(\${(\s+([A-Za-z0-9_$]+)\s+)})|(\${(\s+([A-Za-z0-9_$]+))})|(\${(([A-Za-z0-9_$]+)\s+)})`)
	whitespaceRE     = regexp.MustCompile(`\s`)
)

// convertLegacyVars is clusterctl's convertLegacyVars, applying the
// expression only to the spans that can match: "${", then a run of \s,
// [A-Za-z0-9_$], then "}". A run cannot hold "{", so a match starts only
// at a span's "${" and, as every alternative holds whitespace, a span either
// is a whole match or holds none.
func convertLegacyVars(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; ; {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			break
		}
		start := i + j
		k := start + 2
		for k < len(s) && legacyRunByte(s[k]) {
			k++
		}
		i = start + 2 // the run may end with the "$" of the next "${"
		if k < len(s) && s[k] == '}' {
			span := s[start : k+1]
			if conv := legacyVariableRE.ReplaceAllStringFunc(span, func(o string) string {
				return whitespaceRE.ReplaceAllString(o, "")
			}); conv != span {
				if b.Len() == 0 {
					b.Grow(len(s))
				}
				b.WriteString(s[last:start])
				b.WriteString(conv)
				last = k + 1
				i = last
			}
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// legacyRunByte is \s (RE2: tab, newline, form feed, carriage return,
// space) or [A-Za-z0-9_$].
func legacyRunByte(c byte) bool {
	switch {
	case c == '\t', c == '\n', c == '\f', c == '\r', c == ' ', c == '_', c == '$':
		return true
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return false
}

// traverse is clusterctl's: it records each variable once, with its default
// as written in the template, or "" when it has none.
func traverse(root parse.Node, variables map[string]string) {
	switch v := root.(type) {
	case *parse.ListNode:
		for _, ln := range v.Nodes {
			traverse(ln, variables)
		}
	case *parse.FuncNode:
		if _, ok := variables[v.Param]; !ok {
			b := strings.Builder{}
			for _, a := range v.Args {
				switch w := a.(type) {
				case *parse.FuncNode:
					fmt.Fprintf(&b, "${%s}", w.Param)
				case *parse.TextNode:
					b.WriteString(w.Value)
				}
			}
			variables[v.Param] = b.String()
		}
	}
}

// Names returns the variable names, sorted, as clusterctl's
// SimpleProcessor.GetVariables does.
func Names(data []byte) ([]string, error) {
	m, err := Map(data)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names, nil
}
