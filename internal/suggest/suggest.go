// Package suggest finds the name a person most likely meant, for the "did
// you mean" of an error about an unknown name.
package suggest

import "strings"

// Closest returns the candidate nearest to name by edit distance (letter
// case aside), or "" when none is near: within a third of name's length,
// and at least one edit. Ties go to the earlier candidate.
func Closest(name string, candidates []string) string {
	best, bestD := "", -1
	limit := max(1, len([]rune(name))/3)
	lower := strings.ToLower(name)
	for _, c := range candidates {
		if c == name {
			continue
		}
		d := distance(lower, strings.ToLower(c))
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance of a and b, with a transposition
// of two neighbouring letters counted as one edit.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
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
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
