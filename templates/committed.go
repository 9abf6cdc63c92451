package templates

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/provider"
)

func (c *collector) addFlavor(j flavor, file string, committedNames []string, data []byte) error {
	for _, name := range committedNames {
		prev, ok := c.files[name]
		if !ok {
			continue
		}
		if prev.origin != "file" {
			return fmt.Errorf("%s: flavor %q publishes %s, as %s does; rename one of the folders or leave one out with templates.exclude", j.dir, j.name, name, prev.source)
		}
		diff, err := compareObjects(prev.data, data)
		if err != nil {
			return fmt.Errorf("%s: compare with the render of flavor %s (%s): %w", prev.source, j.name, j.dir, err)
		}
		if diff == "" {
			// One file: the committed render, as the maintainers publish it.
			prev.origin = "flavor"
			return nil
		}
		switch c.t.Committed {
		case provider.CommittedKeep:
			c.warn("%s: the committed render differs from flavor %s (%s) (%s); publishing the committed file (templates.committed: committed)", prev.source, j.name, j.dir, diff)
			prev.origin = "flavor"
			return nil
		case provider.CommittedSource:
			c.warn("%s: the committed render is stale: flavor %s (%s) renders %s; publishing the render (templates.committed: source)", prev.source, j.name, j.dir, diff)
			c.files[name] = &entry{data: data, source: j.dir, origin: "flavor"}
			return nil
		default:
			return fmt.Errorf("%s: the committed render is stale: flavor %s (%s) renders %s; regenerate it with %s, or set templates.committed to source (publish the render) or committed (publish the file)",
				prev.source, j.name, j.dir, diff, c.regenerate(j.dir, prev.source))
		}
	}
	c.files[file] = &entry{data: data, source: j.dir, origin: "flavor"}
	return nil
}

// regenerate names the command that regenerates a committed render: the
// config's, else the tree's Makefile target that makes that file, else
// one that generates flavors or templates, else the kustomize command itself.
func (c *collector) regenerate(flavorDir, file string) string {
	if c.t.Regenerate != "" {
		return "`" + c.t.Regenerate + "`"
	}
	if data, err := c.fs.ReadFile(filepath.Join(c.root, "Makefile")); err == nil {
		rel := file
		if r, err := filepath.Rel(c.root, file); err == nil && !strings.HasPrefix(r, "..") {
			rel = filepath.ToSlash(r)
		}
		if t := makeTarget(data, rel); t != "" {
			return "`make " + t + "`"
		}
	}
	restrictor := ""
	if c.t.LoadRestrictor == provider.LoadRestrictorNone {
		restrictor = " --load-restrictor LoadRestrictionsNone"
	}
	return fmt.Sprintf("`kustomize build%s %s > %s`", restrictor, flavorDir, file)
}

var (
	makeAssign = regexp.MustCompile(`^\s*(?:export\s+|override\s+)?([A-Za-z0-9_.-]+)\s*(?::{1,3}=|\?=|\+=|=)\s*(.*)$`)
	makeRule   = regexp.MustCompile(`^([^\s:#=][^:#=]*?)\s*:([^=].*|)$`)
	makeVar    = regexp.MustCompile(`\$[({]([A-Za-z0-9_.-]+)[)}]`)
)

// makeTarget finds the Makefile target that regenerates file (a committed
// render, slash-separated and relative to the tree): a target that lists
// the file among its prerequisites (cluster-api-provider-openstack's
// templates: the renders), else the rule that makes the file itself
// (templates/cluster-template-%.yaml: make that file), else a target that
// generates flavors or templates by its name (cluster-api-provider-azure's
// generate-flavors). Simple variables ($(TEMPLATES_DIR)) are expanded.
func makeTarget(makefile []byte, file string) string {
	vars := map[string]string{}
	type rule struct{ targets, prereqs []string }
	var rules []rule
	sc := bufio.NewScanner(bytes.NewReader(bytes.ReplaceAll(makefile, []byte("\\\n"), []byte(" "))))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "\t") || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if m := makeAssign.FindStringSubmatch(line); m != nil && !makeRule.MatchString(line[:len(line)-len(m[2])]) {
			if _, set := vars[m[1]]; !set || !strings.Contains(line, "?=") {
				vars[m[1]] = strings.TrimSpace(m[2])
			}
			continue
		}
		if m := makeRule.FindStringSubmatch(line); m != nil {
			prereqs, _, _ := strings.Cut(m[2], ";")
			prereqs, _, _ = strings.Cut(prereqs, "#")
			if strings.HasPrefix(strings.TrimSpace(prereqs), "|") || strings.Contains(m[1], "=") {
				continue
			}
			rules = append(rules, rule{strings.Fields(m[1]), strings.Fields(prereqs)})
		}
	}
	expand := func(s string) string {
		for range 5 {
			s = makeVar.ReplaceAllStringFunc(s, func(v string) string { return vars[makeVar.FindStringSubmatch(v)[1]] })
		}
		return strings.TrimPrefix(s, "./")
	}
	matches := func(pattern string) bool {
		pattern = expand(pattern)
		if pre, suf, ok := strings.Cut(pattern, "%"); ok {
			return len(file) > len(pre)+len(suf) && strings.HasPrefix(file, pre) && strings.HasSuffix(file, suf)
		}
		return pattern == file
	}
	var byName, ownRule string
	var flavors, templates string
	for _, r := range rules {
		for _, t := range r.targets {
			if strings.HasPrefix(t, ".") {
				continue
			}
			if byName == "" && !strings.ContainsAny(t, "/%$") && slices.ContainsFunc(r.prereqs, matches) {
				byName = t
			}
			if ownRule == "" && matches(t) {
				ownRule = file
			}
			generates := strings.Contains(t, "generate") && !strings.Contains(t, "test") && !strings.Contains(t, "e2e")
			switch {
			case flavors == "" && generates && strings.Contains(t, "flavor"):
				flavors = t
			case templates == "" && generates && strings.Contains(t, "template"):
				templates = t
			}
		}
	}
	for _, t := range []string{byName, ownRule, flavors, templates} {
		if t != "" {
			return t
		}
	}
	return ""
}

// compareObjects compares two multi-document files as sets of objects,
// whatever their order, field order, quoting and comments. It returns ""
// when equal, else the objects that differ.
func compareObjects(committed, rendered []byte) (string, error) {
	a, err := canonical(committed)
	if err != nil {
		return "", err
	}
	b, err := canonical(rendered)
	if err != nil {
		return "", err
	}
	var onlyA, onlyB []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			onlyA = append(onlyA, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			onlyB = append(onlyB, k)
		}
	}
	if len(onlyA) == 0 && len(onlyB) == 0 {
		return "", nil
	}
	sort.Strings(onlyA)
	sort.Strings(onlyB)
	var parts []string
	for _, k := range onlyA {
		if _, ok := b[k]; ok {
			parts = append(parts, k+" differently")
		} else {
			parts = append(parts, "no "+k)
		}
	}
	for _, k := range onlyB {
		parts = append(parts, k+", which the committed file lacks")
	}
	return strings.Join(parts, "; "), nil
}

// canonical maps "Kind name" of each object to its canonical JSON.
func canonical(data []byte) (map[string]string, error) {
	objs, err := Parse("", data)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, o := range objs {
		s, err := o.String()
		if err != nil {
			return nil, err
		}
		j, err := sigsyaml.YAMLToJSON([]byte(s))
		if err != nil {
			return nil, err
		}
		key := o.GetKind() + " " + o.GetName()
		if ns := o.GetNamespace(); ns != "" {
			key = o.GetKind() + " " + ns + "/" + o.GetName()
		}
		for n := 2; ; n++ {
			if _, dup := out[key]; !dup {
				break
			}
			if n > 2 {
				key = key[:strings.LastIndex(key, " #")]
			}
			key += fmt.Sprintf(" #%d", n)
		}
		out[key] = string(j)
	}
	return out, nil
}
