package provider

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// TemplateSet fills named variables of the release files File matches with
// fixed values, after they render: what a release script's sed or envsubst
// did to a flavor (an etcd certificate path per distribution, written as
// ${CERTPATH} inside a ConfigMap's embedded manifest). A filled variable is
// no longer a variable of the release: clusterctl generate cluster does not
// ask for it.
type TemplateSet struct {
	// File selects the release files by name (a path.Match pattern such as
	// cluster-template-k3s-*.yaml).
	File string `json:"file"`
	// Values maps a variable name to the text that replaces it, default and
	// all: ${CERTPATH} and ${CERTPATH:=/etc/certs} alike.
	Values map[string]string `json:"values"`
}

// Applies says whether the entry fills the release file name.
func (s TemplateSet) Applies(name string) bool {
	ok, _ := path.Match(s.File, name)
	return ok
}

var variableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkTemplateSets checks templates.set: a file pattern and at least one
// value for each entry, and variable names clusterctl reads as names.
func checkTemplateSets(sets []TemplateSet, field func(string) string) error {
	for i, s := range sets {
		f := func(n string) string { return field(fmt.Sprintf("templates.set[%d]%s", i, n)) }
		if _, err := path.Match(s.File, ""); err != nil || s.File == "" || strings.Contains(s.File, "/") {
			return fmt.Errorf("%s: %q is not a release file name pattern (path.Match, no '/'), e.g. cluster-template-k3s-*.yaml", f(".file"), s.File)
		}
		if len(s.Values) == 0 {
			return fmt.Errorf("%s: no values: give the variables to fill, e.g. values: {CERTPATH: /var/lib/rancher/k3s/server/tls}", f(""))
		}
		names := make([]string, 0, len(s.Values))
		for name := range s.Values {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if !variableName.MatchString(name) {
				return fmt.Errorf("%s: %q is not a variable name (letters, digits and '_', not starting with a digit): write the name without ${ }", f(".values"), name)
			}
		}
	}
	return nil
}
