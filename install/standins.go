package install

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"

	"github.com/capirepo/capirepo/verify"
)

// Stand-ins for required variables whose fields ask for a format.
const (
	standInUUID   = "8f1c1b4e-6a0d-4c5e-9f3a-2b7d5e6c4a10" // a version 4 UUID
	standInBase64 = "Y2FwaXJlcG8tcGxhY2Vob2xkZXI="         // base64 of verify.Placeholder
)

// formatStandIns are values of the string formats the server checks.
var formatStandIns = map[string]string{
	"uuid": standInUUID, "uuid4": standInUUID, "byte": standInBase64,
	"date-time": "2026-01-01T00:00:00Z", "date": "2026-01-01", "duration": "1s",
	"ipv4": "192.0.2.1", "ipv6": "2001:db8::1", "cidr": "10.0.0.0/16", "mac": "02:00:00:00:00:01",
	"uri": "https://capirepo.invalid", "url": "https://capirepo.invalid", "email": "placeholder@capirepo.invalid",
}

// genericStandIns are tried, in order, after the name's guess and what the
// field's schema suggests, for variables inside longer strings too.
var genericStandIns = []string{
	verify.Placeholder, "1", "false", standInUUID, standInBase64, "10.0.0.0/16", "192.0.2.1", verify.KubernetesVersion,
	verify.PlaceholderRegistry + "/placeholder:v0.0.0", "https://capirepo.invalid", "capirepoplaceholder", "a", "0",
}

// A variable's marker is a plain scalar of lowercase letters and digits,
// found again whatever case envsubst's ${VAR^^} or ${VAR,,} give it.
var markerRE = regexp.MustCompile(`(?i)capirepostandin(\d+)x`)

func marker(i int) string { return fmt.Sprintf("capirepostandin%dx", i) }

// occurrence is one place a variable lands: a field of an object.
type occurrence struct {
	doc  int
	gvk  schema.GroupVersionKind
	path []any
	// whole is true when the variable is the field's whole value.
	whole bool
}

// standIns gives each required variable a value the server's schema
// accepts in every field the variable lands in, as clusterctl would
// substitute it into raw with the given values (and the defaults of the
// others): the name's guess (placeholder) when it fits, else what the
// field's schema asks for (an enum value, an integer in range, a string
// matching the pattern, a UUID or base64 for the format), else a generic
// stand-in. A variable no value fits everywhere keeps the one that fits in
// the most places.
func standIns(raw []byte, given map[string]string, required []string, src schemaSource) map[string]string {
	choice := map[string]string{}
	for _, name := range required {
		choice[name] = verify.PlaceholderFor(name)
	}
	index := map[string]int{}
	for i, name := range required {
		index[name] = i
	}
	marked, err := substitute(raw, given, func(name string) (string, bool) {
		i, ok := index[name]
		return marker(i), ok
	})
	if err != nil {
		return choice
	}
	objs, err := utilyaml.ToUnstructured(marked)
	if err != nil {
		return choice
	}
	occ := map[string][]occurrence{}
	for d, o := range objs {
		gvk := o.GroupVersionKind()
		walkStrings(o.Object, nil, func(path []any, s string) {
			for _, m := range markerRE.FindAllStringSubmatch(s, -1) {
				i, _ := strconv.Atoi(m[1])
				if i >= len(required) {
					continue
				}
				occ[required[i]] = append(occ[required[i]], occurrence{doc: d, gvk: gvk, path: slices.Clone(path), whole: strings.EqualFold(s, m[0])})
			}
		})
	}
	schemas := map[schema.GroupVersionKind]*typeSchema{}
	schemaFor := func(gvk schema.GroupVersionKind) *typeSchema {
		s, ok := schemas[gvk]
		if !ok {
			s = src.schemaFor(gvk)
			schemas[gvk] = s
		}
		return s
	}
	for _, name := range slices.Sorted(slices.Values(required)) {
		places := occ[name]
		leafs := make([]*spec.Schema, len(places))
		constrained := false
		for i, o := range places {
			leafs[i] = schemaFor(o.gvk).at(o.path)
			constrained = constrained || leafs[i] != nil
		}
		if !constrained {
			continue
		}
		// score counts the places value fits in, with the other variables at
		// their current choice.
		score := func(value string) int {
			vals := map[string]string{}
			for k, v := range choice {
				vals[k] = v
			}
			vals[name] = value
			out, err := substitute(raw, given, func(n string) (string, bool) { v, ok := vals[n]; return v, ok })
			if err != nil {
				return -1
			}
			objs, err := utilyaml.ToUnstructured(out)
			if err != nil {
				return -1
			}
			n := 0
			for i, o := range places {
				if o.doc >= len(objs) {
					continue
				}
				if v, ok := valueAt(objs[o.doc].Object, o.path); ok && fits(leafs[i], v) {
					n++
				}
			}
			return n
		}
		best, bestScore := choice[name], score(choice[name])
		if bestScore == len(places) {
			continue
		}
		for _, c := range candidates(places, leafs) {
			if s := score(c); s > bestScore {
				best, bestScore = c, s
				if s == len(places) {
					break
				}
			}
		}
		choice[name] = best
	}
	return choice
}

// standIns sets the session's required variables without a value to
// stand-ins the schemas accept (over the name guesses), and describes them.
// extra are values that win over the session's (the template namespace).
func (in *installer) standIns(s *verify.Session, raw []byte, vars map[string]*string, extra map[string]string) []verify.Variable {
	for k, v := range extra {
		s.Set(k, v)
	}
	given := s.Values()
	var required []string
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if _, ok := given[name]; !ok && vars[name] == nil {
			required = append(required, name)
		}
	}
	chosen := standIns(raw, given, required, in.schemas)
	var out []verify.Variable
	for _, name := range required {
		s.SetPlaceholder(name, chosen[name])
		out = append(out, verify.Variable{Name: name, Required: true, Value: chosen[name], Placeholder: true})
	}
	return out
}

// substitute processes raw as clusterctl does, with value giving the
// chosen variables and given the others; the rest take their defaults.
func substitute(raw []byte, given map[string]string, value func(string) (string, bool)) ([]byte, error) {
	return yamlprocessor.NewSimpleProcessor().Process(raw, func(name string) (string, error) {
		if v, ok := value(name); ok {
			return v, nil
		}
		if v, ok := given[name]; ok {
			return v, nil
		}
		return "", fmt.Errorf("%s not set", name)
	})
}

// candidates lists the values to try for a variable, the field schemas'
// suggestions first.
func candidates(places []occurrence, leafs []*spec.Schema) []string {
	var out []string
	for i, o := range places {
		if o.whole && leafs[i] != nil {
			out = append(out, schemaStandIns(leafs[i])...)
		}
	}
	out = append(out, genericStandIns...)
	seen := map[string]bool{}
	return slices.DeleteFunc(out, func(s string) bool {
		dup := seen[s]
		seen[s] = true
		return dup
	})
}

// schemaStandIns are values a field's schema suggests.
func schemaStandIns(s *spec.Schema) []string {
	var out []string
	for _, e := range s.Enum {
		out = append(out, fmt.Sprint(e))
	}
	if s.Pattern != "" {
		if ex, ok := regexExample(s.Pattern); ok {
			out = append(out, ex)
		}
	}
	if v, ok := formatStandIns[s.Format]; ok {
		out = append(out, v)
	}
	if s.Type.Contains("integer") || s.Type.Contains("number") {
		if s.Minimum != nil {
			m := math.Ceil(*s.Minimum)
			if s.ExclusiveMinimum && m == *s.Minimum {
				m++
			}
			out = append(out, strconv.FormatFloat(m, 'f', -1, 64))
		}
		if s.Maximum != nil {
			m := math.Floor(*s.Maximum)
			if s.ExclusiveMaximum && m == *s.Maximum {
				m--
			}
			out = append(out, strconv.FormatFloat(m, 'f', -1, 64))
		}
		out = append(out, "1")
	}
	if s.Type.Contains("boolean") {
		out = append(out, "false", "true")
	}
	// A variable that is a whole YAML map or list (a ConfigMap's data)
	// stands in as an empty one, in flow style.
	if s.Type.Contains("object") {
		out = append(out, "{}")
	}
	if s.Type.Contains("array") {
		out = append(out, "[]")
	}
	if s.MinLength != nil && *s.MinLength > int64(len(verify.Placeholder)) && *s.MinLength <= 1024 {
		out = append(out, strings.Repeat("a", int(*s.MinLength)))
	}
	return out
}

// walkStrings calls fn with the path of every string value in v.
func walkStrings(v any, path []any, fn func(path []any, s string)) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			walkStrings(e, append(path, k), fn)
		}
	case []any:
		for i, e := range t {
			walkStrings(e, append(path, i), fn)
		}
	case string:
		fn(path, t)
	}
}

// valueAt returns the value at path (map keys and list indexes).
func valueAt(v any, path []any) (any, bool) {
	for _, el := range path {
		switch k := el.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[k]; !ok {
				return nil, false
			}
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil, false
			}
			v = l[k]
		}
	}
	return v, true
}

// regexExample returns a short string the pattern matches: each repeat at
// its minimum, the first branch of each alternation, and from each
// character class a lowercase letter or digit where it has one.
func regexExample(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if !writeExample(&b, re.Simplify()) {
		return "", false
	}
	ok, err := regexp.MatchString(pattern, b.String())
	return b.String(), ok && err == nil
}

func writeExample(b *strings.Builder, re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpNoMatch:
		return false
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		r, ok := classRune(re.Rune)
		if !ok {
			return false
		}
		b.WriteRune(r)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('a')
	case syntax.OpCapture:
		return writeExample(b, re.Sub[0])
	case syntax.OpPlus:
		return writeExample(b, re.Sub[0])
	case syntax.OpRepeat:
		for range re.Min {
			if !writeExample(b, re.Sub[0]) {
				return false
			}
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !writeExample(b, sub) {
				return false
			}
		}
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			var alt strings.Builder
			if writeExample(&alt, sub) {
				b.WriteString(alt.String())
				return true
			}
		}
		return false
	}
	// Empty matches, anchors, word boundaries, * and ? add nothing.
	return true
}

// classRune picks a rune of a character class (pairs of lo, hi).
func classRune(ranges []rune) (rune, bool) {
	for _, want := range "a0b1cA" {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= want && want <= ranges[i+1] {
				return want, true
			}
		}
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i] <= ranges[i+1] && ranges[i] > ' ' {
			return ranges[i], true
		}
	}
	if len(ranges) >= 2 {
		return ranges[0], true
	}
	return 0, false
}
