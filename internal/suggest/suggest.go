// Package suggest finds the known name a misspelled one was probably
// meant to be, for the "did you mean ..." of error messages about
// config.toml keys and tree.json fields.
package suggest

import "strings"

// Closest returns the candidate nearest to name, compared without case,
// when it is at most limit(candidate) edits away (Distance); the first of
// equally near candidates wins; "" when none is near enough.
func Closest(name string, candidates []string, limit func(candidate string) int) string {
	lname := strings.ToLower(name)
	best, bestDist := "", -1
	for _, c := range candidates {
		d := Distance(lname, strings.ToLower(c))
		if d <= limit(c) && (bestDist < 0 || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b, in runes.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
