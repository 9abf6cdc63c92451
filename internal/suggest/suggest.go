package suggest

import "strings"

// Nearest returns the name closest to s when it is close enough to be a
// slip (a letter or two, or a different case), else "".
func Nearest(s string, names []string) string {
	best, bestD := "", 0
	for _, n := range names {
		if strings.EqualFold(n, s) {
			return n
		}
		d := Distance(strings.ToLower(s), strings.ToLower(n))
		if best == "" || d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" || bestD > max(2, len(s)/3) {
		return ""
	}
	return best
}

// Distance is the edit distance between a and b, in runes: the fewest
// insertions, deletions, substitutions and swaps of two neighbours that
// turn one into the other (optimal string alignment; a swap, the commonest
// slip, counts once).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
