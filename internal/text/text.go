// Package text holds the small helpers for what capirepo prints that every
// layer needs the same way: a count with its noun, and a list printed as []
// rather than null. It is not for formatting reports or tables: those
// belong to the package whose report they are.
package text

import "fmt"

// Plural is "1 one" or "N many".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// NonNil is s, or an empty slice for nil, so JSON prints [] rather than null.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
