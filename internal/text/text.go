// Package text holds the small helpers for what capirepo prints that every
// layer needs the same way: a count with its noun, a size in bytes, and a
// list printed as [] rather than null. It is not for formatting reports or tables: those
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

// Bytes is a size as people read it: 512 B, 1.5 KiB, 3.2 MiB.
func Bytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
