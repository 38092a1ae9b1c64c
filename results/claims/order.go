package claims

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"lab/results"
)

// Sort orders claims by id, numeric parts as numbers (CompareIDs).
func Sort(claims []results.Claim) {
	slices.SortStableFunc(claims, func(a, b results.Claim) int { return CompareIDs(a.ID, b.ID) })
}

// CompareIDs orders claim ids with their numeric parts as numbers:
// E1.6 < E1.10 < E2.1.
func CompareIDs(a, b string) int {
	pa, pb := idParts(a), idParts(b)
	for i := range min(len(pa), len(pb)) {
		na, ea := strconv.Atoi(pa[i])
		nb, eb := strconv.Atoi(pb[i])
		if ea == nil && eb == nil {
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
			continue
		}
		if c := strings.Compare(pa[i], pb[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(pa), len(pb))
}

// idParts splits "E1.10" into "E", "1", "10": runs of digits and of the
// rest.
func idParts(s string) []string {
	var parts []string
	start := 0
	for i := 1; i <= len(s); i++ {
		if i == len(s) || isDigit(s[i]) != isDigit(s[i-1]) || s[i] == '.' || s[i-1] == '.' {
			if p := s[start:i]; p != "." {
				parts = append(parts, p)
			}
			start = i
		}
	}
	return parts
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
