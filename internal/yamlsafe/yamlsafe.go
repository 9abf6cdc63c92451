package yamlsafe

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// MaxExpandedNodes bounds the nodes a document may expand to through aliases.
const MaxExpandedNodes = 4_000_000

// CheckAliases returns an error naming file when a document's aliases expand
// past MaxExpandedNodes. Files without an anchor and an alias are not parsed.
func CheckAliases(file string, data []byte) error {
	if !mayHave(data, '&') || !mayHave(data, '*') {
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for doc := 1; ; doc++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return nil // not YAML: the real parser reports it with its own words
		}
		memo := map[*yaml.Node]int{}
		if size := expanded(&n, memo, 0); size > MaxExpandedNodes {
			return fmt.Errorf("%s: document %d: YAML aliases expand to more than %d nodes (an alias bomb?)", file, doc, MaxExpandedNodes)
		}
	}
}

// expanded counts the nodes n stands for with every alias replaced by a copy
// of its anchor; sizes are memoized, so the walk is linear in the text.
func expanded(n *yaml.Node, memo map[*yaml.Node]int, depth int) int {
	if n == nil {
		return 0
	}
	if s, ok := memo[n]; ok {
		return s
	}
	if depth > 10_000 {
		return MaxExpandedNodes + 1
	}
	memo[n] = MaxExpandedNodes + 1 // an alias cycle counts as infinite
	size := 1
	if n.Kind == yaml.AliasNode {
		size = expanded(n.Alias, memo, depth+1)
	}
	for _, c := range n.Content {
		size += expanded(c, memo, depth+1)
		if size > MaxExpandedNodes {
			break
		}
	}
	memo[n] = size
	return size
}

// mayHave reports whether data may hold an anchor (c = '&') or an alias
// (c = '*'). Both are node properties, so they start a node: the indicator
// follows the start of the text, whitespace, a flow indicator, or ':' (a
// JSON-like key in flow context), and a name character follows it. Text
// like "R&D", "a & b" or "*metav1.Time" inside descriptions does not count.
// The test errs towards true: a false positive costs only a parse.
func mayHave(data []byte, c byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], c)
		if j < 0 {
			return false
		}
		i += j
		if (i == 0 || startsNode(data[i-1])) && i+1 < len(data) && isNameByte(data[i+1]) {
			return true
		}
		i++
	}
}

func startsNode(b byte) bool {
	switch b {
	case ' ', '\t', '\n', '\r', '[', '{', ',', ':', '?', '-', 0xBF: // 0xBF ends a UTF-8 byte order mark
		return true
	}
	return false
}

func isNameByte(b byte) bool {
	switch b {
	case ' ', '\t', '\n', '\r', '[', ']', '{', '}', ',':
		return false
	}
	return true
}
