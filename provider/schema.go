package provider

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/internal/suggest"

	yamlv3 "go.yaml.in/yaml/v3"
)

// The shape of capirepo.yaml is read from the Go types by reflection (their
// json tags), so a field added to Config, Spec or below is known to the
// error messages ("did you mean") and to the JSON Schema without more code.

// field is one JSON field of a struct.
type field struct {
	name     string
	typ      reflect.Type
	required bool // no omitempty
	// enum lists the values a string field takes (its enum tag), for the
	// schema; the config's validation says the same in its errors.
	enum []string
}

// fieldsOf lists the JSON fields of a struct type, embedded structs' fields
// inlined as encoding/json does.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" || (!sf.IsExported() && !sf.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, fieldsOf(ft)...)
				continue
			}
		}
		if name == "" {
			name = sf.Name
		}
		f := field{name: name, typ: sf.Type, required: !slices.Contains(strings.Split(opts, ","), "omitempty")}
		if e := sf.Tag.Get("enum"); e != "" {
			f.enum = strings.Split(e, ",")
		}
		out = append(out, f)
	}
	return out
}

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	shorthandType   = reflect.TypeFor[shorthand]()
)

// shorthand is a struct capirepo.yaml takes either as an object of its
// fields or as a string that sets one of them (templates: templates is
// templates: {dir: templates}); its shape is still known here.
type shorthand interface {
	// shorthandField is the field the string sets.
	shorthandField() string
}

func isShorthand(t reflect.Type) bool {
	return t.Implements(shorthandType) || reflect.PointerTo(t).Implements(shorthandType)
}

// custom says whether t decodes itself in a shape not known here.
func custom(t reflect.Type) bool {
	return (t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)) && !isShorthand(t)
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// ConfigSchema returns the JSON Schema (draft 2020-12) of capirepo.yaml,
// generated from the Config type, for editors (yaml-language-server).
func ConfigSchema() ([]byte, error) {
	s := schemaOf(reflect.TypeFor[Config]())
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["$id"] = "https://github.com/capirepo/capirepo/docs/capirepo.schema.json"
	s["title"] = "capirepo.yaml"
	s["description"] = "capirepo's configuration of a provider tree; every key is described in docs/configuration.md"
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func schemaOf(t reflect.Type) map[string]any {
	t = deref(t)
	if custom(t) {
		return map[string]any{}
	}
	if isShorthand(t) {
		field := reflect.New(t).Interface().(shorthand).shorthandField()
		return map[string]any{"oneOf": []any{
			map[string]any{"type": "string", "description": "short for {" + field + ": <the string>}"},
			structSchema(t),
		}}
	}
	switch t.Kind() {
	case reflect.Struct:
		return structSchema(t)
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem())}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	}
	return map[string]any{}
}

// structSchema is the schema of a struct's JSON fields.
func structSchema(t reflect.Type) map[string]any {
	switch t.Kind() {
	case reflect.Struct:
		props := map[string]any{}
		var required []string
		for _, f := range fieldsOf(t) {
			props[f.name] = schemaOf(f.typ)
			if len(f.enum) > 0 {
				props[f.name] = map[string]any{"type": "string", "enum": f.enum}
			}
			if f.required {
				required = append(required, f.name)
			}
		}
		s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	return map[string]any{}
}

// ConfigKeys lists every key of capirepo.yaml as a path: providers[].name,
// providers[].image.newTag, lint.disable[].rule, ...
func ConfigKeys() []string {
	var out []string
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		t = deref(t)
		if custom(t) {
			return
		}
		switch t.Kind() {
		case reflect.Struct:
			for _, f := range fieldsOf(t) {
				p := f.name
				if prefix != "" {
					p = prefix + "." + f.name
				}
				out = append(out, p)
				walk(p, f.typ)
			}
		case reflect.Slice, reflect.Array:
			walk(prefix+"[]", t.Elem())
		case reflect.Map:
			walk(prefix+".*", t.Elem())
		}
	}
	walk("", reflect.TypeFor[Config]())
	return out
}

// configError is a mistake in a config file, at a line.
type configError struct {
	file string
	line int
	path string
	msg  string
}

func (e *configError) Error() string {
	loc := e.file
	if e.line > 0 {
		loc = fmt.Sprintf("%s:%d", e.file, e.line)
	}
	if e.path == "" {
		return loc + ": " + e.msg
	}
	return loc + ": " + e.path + ": " + e.msg
}

// checkShape compares a YAML document with the shape of t: unknown fields
// (with the nearest known name), a list or mapping where the type wants
// something else (with the expected form). It reports the first mistake with its line and path.
func checkShape(file string, data []byte, t reflect.Type) error {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	return checkNode(file, doc.Content[0], t, "")
}

func checkNode(file string, n *yamlv3.Node, t reflect.Type, path string) error {
	t = deref(t)
	// An alias is not followed (a few nested ones would be walked an
	// exponential number of times); the strict decode checks what it holds.
	if n.Kind == yamlv3.AliasNode || custom(t) || (n.Kind == yamlv3.ScalarNode && n.Tag == "!!null") {
		return nil
	}
	if isShorthand(t) && n.Kind == yamlv3.ScalarNode && n.Tag == "!!str" {
		return nil // the string form
	}
	bad := func(format string, args ...any) error {
		return &configError{file: file, line: n.Line, path: path, msg: fmt.Sprintf(format, args...)}
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yamlv3.MappingNode && isShorthand(t) {
			return bad("expected a string (%s) or a mapping with %s, not %s", reflect.New(t).Interface().(shorthand).shorthandField(), fieldNames(t), describeNode(n))
		}
		if n.Kind != yamlv3.MappingNode {
			return bad("expected a mapping like %s, not %s", expectedForm(t), describeNode(n))
		}
		fields := fieldsOf(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" { // a merge key: its fields are checked where they are written
				continue
			}
			j := slices.IndexFunc(fields, func(f field) bool { return f.name == k.Value })
			if j < 0 {
				names := make([]string, len(fields))
				for i, f := range fields {
					names[i] = f.name
				}
				msg := fmt.Sprintf("unknown field %q", k.Value)
				if s := suggest.Nearest(k.Value, names); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", s)
				} else {
					msg += " (known: " + strings.Join(names, ", ") + ")"
				}
				return &configError{file: file, line: k.Line, path: path, msg: msg}
			}
			if err := checkNode(file, v, fields[j].typ, join(path, k.Value)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yamlv3.SequenceNode {
			return bad("expected a list, not %s", describeNode(n))
		}
		for i, c := range n.Content {
			if err := checkNode(file, c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yamlv3.MappingNode {
			return bad("expected a mapping, not %s", describeNode(n))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkNode(file, n.Content[i+1], t.Elem(), join(path, n.Content[i].Value)); err != nil {
				return err
			}
		}
	case reflect.String:
		// A whole number or boolean is taken as its text, as sigs.k8s.io/yaml
		// does (newTag: 20240101); a decimal number would lose its text
		// (1.10 reads as 1.1).
		switch {
		case n.Kind != yamlv3.ScalarNode:
			return bad("expected a string, not %s", describeNode(n))
		case n.Tag == "!!float" && n.Style == 0:
			return bad("expected a string, not %s: quote it (%q), or YAML reads a number", describeNode(n), n.Value)
		}
	case reflect.Bool:
		if n.Kind != yamlv3.ScalarNode || n.Tag != "!!bool" {
			return bad("expected true or false, not %s", describeNode(n))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind != yamlv3.ScalarNode || n.Tag != "!!int" {
			return bad("expected a whole number, not %s", describeNode(n))
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fieldNames lists a struct's JSON field names: "dir, flavors, ...".
func fieldNames(t reflect.Type) string {
	var names []string
	for _, f := range fieldsOf(t) {
		names = append(names, f.name)
	}
	return strings.Join(names, ", ")
}

// expectedForm writes a struct's fields as a flow mapping: {rule: ..., reason: ...}.
func expectedForm(t reflect.Type) string {
	var parts []string
	for _, f := range fieldsOf(t) {
		if f.required {
			parts = append(parts, f.name+": ...")
		}
	}
	if len(parts) == 0 {
		for _, f := range fieldsOf(t) {
			parts = append(parts, f.name+": ...")
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func describeNode(n *yamlv3.Node) string {
	switch n.Kind {
	case yamlv3.MappingNode:
		return "a mapping"
	case yamlv3.SequenceNode:
		return "a list"
	}
	switch n.Tag {
	case "!!str":
		return fmt.Sprintf("the string %q", n.Value)
	case "!!int", "!!float":
		return "the number " + n.Value
	case "!!bool":
		return "the boolean " + n.Value
	}
	return n.Value
}

// lineOf returns the line of a path (providers[0].componentsFile) in a YAML
// config file, or 0, for messages about values that parsed but are wrong.
func lineOf(data []byte, path string) int {
	var doc yamlv3.Node
	if yamlv3.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	n := doc.Content[0]
	line := n.Line
	for _, part := range strings.Split(strings.ReplaceAll(path, "[", ".["), ".") {
		if part == "" {
			continue
		}
		var idx int
		if _, err := fmt.Sscanf(part, "[%d]", &idx); err == nil {
			if n.Kind != yamlv3.SequenceNode || idx >= len(n.Content) {
				return line
			}
			n = n.Content[idx]
			line = n.Line
			continue
		}
		if n.Kind != yamlv3.MappingNode {
			return line
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == part {
				line, n, found = n.Content[i].Line, n.Content[i+1], true
				break
			}
		}
		if !found {
			return line
		}
	}
	return line
}
