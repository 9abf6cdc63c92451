package builder

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// variableRE matches a clusterctl variable, ${NAME} or ${NAME<op>default},
// and the $ before it that escapes it ($${NAME} is the text ${NAME}).
var variableRE = regexp.MustCompile(`(\$?)\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:[:]?[-=?+][^}]*)?\}`)

// fillVariables replaces each variable of values in data, default and all,
// with its value; an escaped one ($${NAME}) stays. filled names the
// variables found, once each and sorted.
func fillVariables(data []byte, values map[string]string) (out []byte, filled []string) {
	out = variableRE.ReplaceAllFunc(data, func(m []byte) []byte {
		sub := variableRE.FindSubmatch(m)
		v, ok := values[string(sub[2])]
		if !ok || len(sub[1]) > 0 {
			return m
		}
		filled = append(filled, string(sub[2]))
		return []byte(v)
	})
	slices.Sort(filled)
	return out, slices.Compact(filled)
}

// applyTemplateSets fills the variables templates.set names in the files
// each entry's pattern matches (rendered and patched already), and warns
// about an entry that matches no file or a value no matched file uses.
func applyTemplateSets(name string, sets []provider.TemplateSet, files []release.File) []string {
	var warnings []string
	for i, s := range sets {
		matched := false
		used := map[string]bool{}
		for j, f := range files {
			if !s.Applies(f.Name) {
				continue
			}
			matched = true
			var filled []string
			files[j].Data, filled = fillVariables(f.Data, s.Values)
			for _, n := range filled {
				used[n] = true
			}
		}
		if !matched {
			warnings = append(warnings, fmt.Sprintf("%s: templates.set[%d].file %q matches no release file; fix the pattern or remove the entry", name, i, s.File))
			continue
		}
		var unused []string
		for n := range s.Values {
			if !used[n] {
				unused = append(unused, n)
			}
		}
		if len(unused) > 0 {
			slices.Sort(unused)
			warnings = append(warnings, fmt.Sprintf("%s: templates.set[%d] fills %s, which no file %q matches uses; remove it or fix the name", name, i, strings.Join(unused, ", "), s.File))
		}
	}
	return warnings
}
