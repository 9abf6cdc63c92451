package values

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Stand-ins for required variables whose fields ask for a format.
const (
	standInUUID   = "8f1c1b4e-6a0d-4c5e-9f3a-2b7d5e6c4a10" // a version 4 UUID
	standInBase64 = "Y2FwaXJlcG8tcGxhY2Vob2xkZXI="         // base64 of Placeholder
)

// formatStandIns are values of the string formats the server checks.
var formatStandIns = map[string]string{
	"uuid": standInUUID, "uuid4": standInUUID, "byte": standInBase64,
	"date-time": "2026-01-01T00:00:00Z", "date": "2026-01-01", "duration": "1s",
	"ipv4": "192.0.2.1", "ipv6": "2001:db8::1", "cidr": "10.0.0.0/16", "hostname": "placeholder.capirepo.invalid", "mac": "02:00:00:00:00:01",
	"uri": "https://capirepo.invalid", "url": "https://capirepo.invalid", "email": "placeholder@capirepo.invalid",
}

// genericStandIns are tried, in order, after the name's guess and what the
// field's schema suggests, for variables inside longer strings too.
var genericStandIns = []string{
	Placeholder, "1", "false", standInUUID, standInBase64, "10.0.0.0/16", "192.0.2.1", KubernetesVersion,
	PlaceholderRegistry + "/placeholder:v0.0.0", "https://capirepo.invalid", "capirepoplaceholder", "a", "0",
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
// others): the name's guess (placeholder, made distinct per variable) when
// it fits, else what the field's schema asks for (an enum value, an integer
// in range, a list of minItems items, a string matching the pattern or of
// the format), else a generic stand-in. A variable no value fits everywhere
// keeps the one that fits in the most places. A variable alone on its line
// that holds a YAML fragment gets the empty string, so the file stays YAML.
func standIns(raw []byte, given map[string]string, required []string, src *schemaSet) map[string]string {
	choice, _ := chooseStandIns(raw, "", given, required, src)
	return choice
}

// Place is a field a variable lands in: the object's kind and the field
// path as the API server writes it (spec.addresses[0]).
type Place struct {
	Kind, Field string
}

// chooseStandIns is standIns, also telling where each variable landed.
// fileClass is the class of a clusterclass-<class>.yaml file ("" for
// another file): the variable that names its ClusterClass gets it.
func chooseStandIns(raw []byte, fileClass string, given map[string]string, required []string, src *schemaSet) (map[string]string, map[string][]Place) {
	choice := distinctGuesses(required)
	places := map[string][]Place{}
	objs, occ, given, rest, err := markedOrFragments(raw, given, required)
	for _, name := range required {
		if !slices.Contains(rest, name) {
			choice[name] = "" // a YAML fragment
		}
	}
	if err != nil {
		return choice, places
	}
	required = rest
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
		at := occ[name]
		leafs := make([]*spec.Schema, len(at))
		constrained := false
		for i, o := range at {
			places[name] = append(places[name], Place{Kind: o.gvk.Kind, Field: fieldPath(o.path)})
			leafs[i] = classLeaf(o, fileClass)
			if leafs[i] == nil {
				leafs[i] = topologyLeaf(objs[o.doc].Object, o, name, &src.classes)
			}
			if leafs[i] == nil {
				leafs[i] = schemaFor(o.gvk).at(o.path)
			}
			constrained = constrained || leafs[i] != nil
		}
		if !constrained {
			continue
		}
		// score counts the places value fits in, with the other variables at
		// their current choice.
		score := func(value string) int {
			vals := maps.Clone(choice)
			vals[name] = value
			out, err := substitute(raw, given, func(n string) (string, bool) { v, ok := vals[n]; return v, ok })
			if err != nil {
				return -1
			}
			objs, err := toUnstructured(out)
			if err != nil {
				return -1
			}
			n := 0
			for i, o := range at {
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
		if bestScore == len(at) {
			continue
		}
		for _, c := range candidates(at, leafs) {
			if s := score(c); s > bestScore {
				best, bestScore = c, s
				if s == len(at) {
					break
				}
			}
		}
		choice[name] = best
	}
	return choice, places
}

// markedOccurrences substitutes each required variable with its marker
// and finds the fields the markers land in.
func markedOccurrences(raw []byte, given map[string]string, required []string) ([]unstructured.Unstructured, map[string][]occurrence, error) {
	marked, err := markVariables(raw, given, required)
	if err != nil {
		return nil, nil, err
	}
	objs, err := toUnstructured(marked)
	if err != nil {
		return nil, nil, err
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
	return objs, occ, nil
}

// markedOrFragments is markedOccurrences; where the marked file is no
// YAML, the variables alone on their line, which may hold a YAML fragment
// that no scalar keeps valid, are given the empty string, which does, and
// the others marked again. It returns given with those, and the variables
// still marked.
func markedOrFragments(raw []byte, given map[string]string, required []string) ([]unstructured.Unstructured, map[string][]occurrence, map[string]string, []string, error) {
	objs, occ, err := markedOccurrences(raw, given, required)
	if err == nil {
		return objs, occ, given, required, nil
	}
	frag := fragmentVariables(raw, required)
	if len(frag) == 0 {
		return nil, nil, given, required, err
	}
	given = maps.Clone(given)
	if given == nil {
		given = map[string]string{}
	}
	var rest []string
	for _, name := range required {
		if frag[name] {
			given[name] = ""
		} else {
			rest = append(rest, name)
		}
	}
	objs, occ, err = markedOccurrences(raw, given, rest)
	return objs, occ, given, rest, err
}

// markVariables substitutes each required variable with its marker, the
// others with given values or their defaults.
func markVariables(raw []byte, given map[string]string, required []string) ([]byte, error) {
	index := map[string]int{}
	for i, name := range required {
		index[name] = i
	}
	return substitute(raw, given, func(name string) (string, bool) {
		i, ok := index[name]
		return marker(i), ok
	})
}

// distinctGuesses are the names' guesses, each variable whose guess is the
// plain placeholder getting its own (capirepo-<name>), so that variables in
// one list keyed by name do not collide.
func distinctGuesses(required []string) map[string]string {
	choice := map[string]string{}
	for _, name := range required {
		v := Guess(name)
		if v == Placeholder {
			v = distinctPlaceholder(name)
		}
		choice[name] = v
	}
	return choice
}

// distinctPlaceholder is capirepo-<name> as a DNS-1123 label: lowercase,
// runs of other characters as one dash, at most 63 characters.
func distinctPlaceholder(name string) string {
	var b strings.Builder
	b.WriteString("capirepo-")
	dash := true
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	s := b.String()
	if len(s) > 63 {
		s = s[:63]
	}
	s = strings.TrimRight(s, "-")
	if s == "capirepo" {
		return Placeholder
	}
	return s
}

// fragmentLine is a line that holds only a variable.
var fragmentLine = regexp.MustCompile(`(?m)^[ \t]*\$\{([A-Za-z_][A-Za-z0-9_]*)[^}]*\}[ \t]*$`)

// fragmentVariables are the required variables alone on a line of raw.
func fragmentVariables(raw []byte, required []string) map[string]bool {
	out := map[string]bool{}
	for _, m := range fragmentLine.FindAllSubmatch(raw, -1) {
		if name := string(m[1]); slices.Contains(required, name) {
			out[name] = true
		}
	}
	return out
}

// fieldPath writes a path as the API server names fields: spec.a[0].b.
func fieldPath(path []any) string {
	var b strings.Builder
	for _, el := range path {
		switch k := el.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(k)
		case int:
			fmt.Fprintf(&b, "[%d]", k)
		}
	}
	return b.String()
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
		// An object with required properties (a ClusterClass variable
		// such as a load balancer's host and port) gets them, each a value
		// of its own schema.
		if len(s.Required) > 0 {
			if v, ok := example(s, 0); ok {
				if b, err := json.Marshal(v); err == nil {
					out = append(out, string(b))
				}
			}
		}
		out = append(out, "{}")
	}
	if s.Type.Contains("array") {
		out = append(out, listStandIns(s)...)
	}
	if s.MinLength != nil && *s.MinLength > int64(len(Placeholder)) && *s.MinLength <= 1024 {
		out = append(out, strings.Repeat("a", int(*s.MinLength)))
	}
	return out
}

// listStandIns are lists in flow style for an array field: first one of
// minItems items (at least one, for CEL rules on the list's size), each
// distinct (for lists that are sets or maps), then the empty list.
func listStandIns(s *spec.Schema) []string {
	n := int64(1)
	if s.MinItems != nil && *s.MinItems > n {
		n = *s.MinItems
	}
	var out []string
	if (s.MaxItems == nil || *s.MaxItems >= n) && n <= 64 {
		var items *spec.Schema
		if s.Items != nil {
			items = s.Items.Schema
		}
		vals := make([]string, n)
		ok := true
		for i := range vals {
			if vals[i], ok = nthStandIn(items, i); !ok {
				break
			}
		}
		if ok {
			out = append(out, "["+strings.Join(vals, ", ")+"]")
		}
	}
	if s.MinItems == nil || *s.MinItems == 0 {
		out = append(out, "[]")
	}
	return out
}

// nthStandIn is the i-th of distinct values for a list's items, in flow
// style: of their format, in their range, or an empty object; false when
// no such value is known (an enum too short, a pattern no example fits).
func nthStandIn(s *spec.Schema, i int) (string, bool) {
	switch {
	case s == nil:
		return fmt.Sprintf("%s-%d", Placeholder, i), true
	case len(s.Enum) > 0:
		if i >= len(s.Enum) {
			return "", false
		}
		return fmt.Sprint(s.Enum[i]), true
	case s.Type.Contains("object"):
		return "{}", true
	case s.Type.Contains("integer") || s.Type.Contains("number"):
		m := 0.0
		if s.Minimum != nil {
			m = math.Ceil(*s.Minimum)
			if s.ExclusiveMinimum && m == *s.Minimum {
				m++
			}
		}
		return strconv.FormatFloat(m+float64(i), 'f', -1, 64), true
	case s.Type.Contains("boolean"):
		return []string{"false", "true", ""}[min(i, 2)], i < 2
	}
	switch s.Format {
	case "ipv4":
		return fmt.Sprintf("192.0.2.%d", i+1), i < 254
	case "cidr":
		return fmt.Sprintf("10.%d.0.0/16", i), i < 256
	case "ipv6":
		return fmt.Sprintf("2001:db8::%x", i+1), true
	case "hostname":
		return fmt.Sprintf("placeholder-%d.capirepo.invalid", i), true
	}
	if v, ok := formatStandIns[s.Format]; ok {
		return v, i == 0
	}
	if s.Pattern != "" {
		ex, ok := regexExample(s.Pattern)
		return ex, ok && i == 0
	}
	v := fmt.Sprintf("%s-%d", Placeholder, i)
	if s.MinLength != nil && int64(len(v)) < *s.MinLength {
		v += strings.Repeat("a", int(*s.MinLength)-len(v))
	}
	return v, true
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

// example is a value the schema accepts, in JSON's types: an object holds
// its required properties only; false when none is known (a pattern no
// example fits, a schema too deep).
func example(s *spec.Schema, depth int) (any, bool) {
	if s == nil {
		return Placeholder, true
	}
	if depth > 8 {
		return nil, false
	}
	switch {
	case len(s.Enum) > 0:
		return s.Enum[0], true
	case s.Type.Contains("object"):
		m := map[string]any{}
		for _, name := range s.Required {
			p, ok := s.Properties[name]
			var sub *spec.Schema
			if ok {
				sub = &p
			} else if s.AdditionalProperties != nil {
				sub = s.AdditionalProperties.Schema
			}
			v, ok := example(sub, depth+1)
			if !ok {
				return nil, false
			}
			m[name] = v
		}
		return m, true
	case s.Type.Contains("array"):
		n := int64(0)
		if s.MinItems != nil {
			n = *s.MinItems
		}
		if n > 64 {
			return nil, false
		}
		l := []any{}
		for i := range n {
			var items *spec.Schema
			if s.Items != nil {
				items = s.Items.Schema
			}
			v, ok := nthStandIn(items, int(i))
			if !ok {
				return nil, false
			}
			var item any
			if err := json.Unmarshal([]byte(v), &item); err != nil {
				item = v
			}
			l = append(l, item)
		}
		return l, true
	case s.Type.Contains("integer") || s.Type.Contains("number"):
		m := 1.0
		if s.Minimum != nil {
			m = math.Ceil(*s.Minimum)
			if s.ExclusiveMinimum && m == *s.Minimum {
				m++
			}
		}
		return m, true
	case s.Type.Contains("boolean"):
		return false, true
	}
	for _, c := range schemaStandIns(s) {
		if fits(s, c) {
			return c, true
		}
	}
	if fits(s, Placeholder) {
		return Placeholder, true
	}
	return nil, false
}
