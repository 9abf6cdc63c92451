package markdown

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	headingRE   = regexp.MustCompile(`^#{1,6} \S`)
	delimiterRE = regexp.MustCompile(`^\|( *:?-{3,}:? *\|)+$`)
	summaryRE   = regexp.MustCompile(`^<summary>[^<]*</summary>$`)
)

// Check says whether md renders on GitHub as it was written, and returns the
// first fault with its line: ATX headings with a space and a blank line
// before; tables set off by blank lines, with a delimiter row and as many
// cells in every row as in the header; <details> blocks balanced, each with
// its <summary> line and the blank lines GitHub needs to render Markdown
// inside; code fences closed; no HTML tag but those, and no raw < outside
// code. It checks the shape capirepo's reports write, not all of Markdown.
func Check(md string) error {
	lines := strings.Split(strings.TrimSuffix(md, "\n"), "\n")
	blank := func(i int) bool { return i < 0 || i >= len(lines) || strings.TrimSpace(lines[i]) == "" }
	depth, fence, tableCells := 0, false, 0
	for i := 0; i < len(lines); i++ {
		l, n := lines[i], i+1
		if strings.HasPrefix(l, "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		if tableCells > 0 && !strings.HasPrefix(l, "|") {
			if !blank(i) {
				return fmt.Errorf("line %d: the table above is not followed by a blank line: %q", n, l)
			}
			tableCells = 0
		}
		switch {
		case strings.HasPrefix(l, "#"):
			if !headingRE.MatchString(l) {
				return fmt.Errorf("line %d: not a heading (# then a space): %q", n, l)
			}
			if !blank(i - 1) {
				return fmt.Errorf("line %d: a heading needs a blank line before it: %q", n, l)
			}
		case l == "<details>" || l == "<details open>":
			depth++
			if i+2 >= len(lines) || !summaryRE.MatchString(lines[i+1]) || !blank(i+2) {
				return fmt.Errorf("line %d: <details> needs a <summary>...</summary> line and a blank line after it", n)
			}
			i++
			continue
		case l == "</details>":
			if depth == 0 {
				return fmt.Errorf("line %d: </details> without <details>", n)
			}
			if !blank(i - 1) {
				return fmt.Errorf("line %d: </details> needs a blank line before it", n)
			}
			depth--
			continue
		case strings.HasPrefix(l, "|"):
			cells := countCells(l)
			if tableCells == 0 {
				if !blank(i - 1) {
					return fmt.Errorf("line %d: a table needs a blank line before it: %q", n, l)
				}
				if i+1 >= len(lines) || !delimiterRE.MatchString(lines[i+1]) || countCells(lines[i+1]) != cells {
					return fmt.Errorf("line %d: the table's header is not followed by a delimiter row of %d cells", n, cells)
				}
				tableCells = cells
				i++
				continue
			}
			if cells != tableCells {
				return fmt.Errorf("line %d: %d cells in a table of %d: %q", n, cells, tableCells, l)
			}
		}
		if err := checkInline(l); err != nil {
			return fmt.Errorf("line %d: %w: %q", n, err, l)
		}
	}
	switch {
	case fence:
		return fmt.Errorf("a code fence is not closed")
	case depth != 0:
		return fmt.Errorf("%d <details> not closed", depth)
	}
	return nil
}

// countCells counts a table row's cells: the | not escaped with a
// backslash, less one.
func countCells(row string) int {
	n := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n - 1
}

// checkInline refuses a < that is no escaped character and not in a code
// span: GitHub would read it as HTML (and drop it, or what follows). Code
// spans are found as CommonMark finds them: a run of backticks closed by a
// run of the same length; a backslash escapes outside them only.
func checkInline(l string) error {
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case '\\':
			i++
		case '`':
			n := 0
			for i+n < len(l) && l[i+n] == '`' {
				n++
			}
			run := strings.Repeat("`", n)
			end := -1
			for j := i + n; j < len(l); {
				k := strings.Index(l[j:], run)
				if k < 0 {
					break
				}
				k += j
				if (k+n == len(l) || l[k+n] != '`') && (k == 0 || l[k-1] != '`') {
					end = k
					break
				}
				j = k + 1
			}
			if end < 0 {
				i += n - 1 // no span: the backticks are text
				continue
			}
			i = end + n - 1
		case '<':
			return fmt.Errorf("raw < outside code")
		}
	}
	return nil
}
