package claims

import (
	"slices"
	"strings"
	"testing"
)

func TestCompareIDs(t *testing.T) {
	ids := []string{"E2.1", "E1.10", "anchor", "E1.7", "E1.6"}
	want := []string{"E1.6", "E1.7", "E1.10", "E2.1", "anchor"}
	slices.SortFunc(ids, CompareIDs)
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Errorf("sorted ids = %v, want %v", ids, want)
	}
}
