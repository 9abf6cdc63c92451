package builder

import (
	"bytes"
	"encoding/json"
	"runtime"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// asYAML returns exactly what rm.AsYaml() returns, faster.
//
// kustomize encodes each resource by a round trip: the node tree is written
// as YAML, parsed into Go maps (yaml.v3), marshalled to JSON, parsed again
// (yaml.v2) and finally marshalled by yaml.v2 (Resource.AsYAML, then
// sigs.k8s.io/yaml.JSONToYAML). The last step alone decides the bytes, so
// asYAML builds the Go value yaml.v2 would have parsed straight from the
// node tree and hands it to the same yaml.v2 marshaller. Whatever the round
// trip could change is left to it: a resource holding a non-string key, a
// merge key, an alias, a duplicate key, or a string the JSON and yaml.v2
// steps could alter or refuse is encoded the slow way, so errors stay
// kustomize's too. Non-string scalars (numbers, booleans, timestamps, ...)
// take the exact round trip one value at a time; they are few.
func asYAML(rm resmap.ResMap) ([]byte, error) {
	rs := rm.Resources()
	if len(rs) == 0 {
		return rm.AsYaml()
	}
	outs := make([][]byte, len(rs))
	// Resources encode independently: spread them over the cores. The
	// render before this point is single-threaded inside krusty.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(rs)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(rs); i = int(next.Add(1) - 1) {
				outs[i], _ = fastResourceYAML(rs[i])
			}
		})
	}
	wg.Wait()
	size := 0
	for i, r := range rs {
		if outs[i] == nil {
			out, err := r.AsYAML()
			if err != nil {
				return rm.AsYaml() // kustomize's own error, with its wording
			}
			outs[i] = out
		}
		size += len(outs[i]) + 4
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	for i, out := range outs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(out)
	}
	return buf.Bytes(), nil
}

func fastResourceYAML(r *resource.Resource) ([]byte, bool) {
	n := r.YNode()
	if n == nil || (n.Kind != yaml.MappingNode && n.Kind != yaml.SequenceNode) {
		return nil, false
	}
	v, ok := plainValue(n)
	if !ok {
		return nil, false
	}
	out, err := yamlv2.Marshal(v)
	if err != nil {
		return nil, false
	}
	return out, true
}

// plainValue is the value yaml.v2 parses from the JSON encoding of n, or
// false when n holds anything the fast path does not reproduce exactly.
func plainValue(n *yaml.Node) (any, bool) {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != yaml.NodeTagString || !jsonSafe(k.Value) {
				return nil, false
			}
			if _, dup := m[k.Value]; dup {
				return nil, false
			}
			v, ok := plainValue(n.Content[i+1])
			if !ok {
				return nil, false
			}
			m[k.Value] = v
		}
		return m, true
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, ok := plainValue(c)
			if !ok {
				return nil, false
			}
			s[i] = v
		}
		return s, true
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case yaml.NodeTagString:
			return n.Value, jsonSafe(n.Value)
		case yaml.NodeTagNull:
			return nil, true
		}
		// The exact round trip, for one value.
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, false
		}
		if s, isString := v.(string); isString && !jsonSafe(s) {
			return nil, false
		}
		j, err := json.Marshal(v)
		if err != nil {
			return nil, false
		}
		var out any
		if err := yamlv2.Unmarshal(j, &out); err != nil {
			return nil, false
		}
		return out, true
	}
	return nil, false // aliases, documents, unknown kinds
}

// jsonSafe reports whether s surely survives the round trip unchanged: valid
// UTF-8 (JSON replaces bad bytes), only characters the yaml.v2 reader accepts
// in its input (JSON escapes the C0 controls, not DEL, the C1 controls, a
// byte order mark or the non-characters U+FFFE, U+FFFF), and none of the line
// breaks a YAML block scalar would normalise (CR, NEL, U+2028, U+2029).
func jsonSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\r':
			return false
		case c >= 0x7f:
			return runesSafe(s[i:])
		}
	}
	return true
}

func runesSafe(s string) bool {
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			return false // invalid UTF-8 (or a literal U+FFFD: rare, and slow is fine)
		case r == '\r':
			return false
		case r < 0x7f:
		case r < 0xa0, r == 0x2028, r == 0x2029, r == 0xfeff, r == 0xfffe, r == 0xffff:
			return false
		}
	}
	return true
}
