// Package yamlsafe refuses YAML whose aliases would expand into far more
// nodes than the text holds (a "billion laughs" document). Parsers keep
// aliases as pointers, but kustomize expands every anchor into copies, so an
// unchecked file of a few KB can take all memory and time.
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
// past MaxExpandedNodes. Files without anchors are not parsed at all.
func CheckAliases(file string, data []byte) error {
	if !bytes.Contains(data, []byte("&")) || !bytes.Contains(data, []byte("*")) {
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
