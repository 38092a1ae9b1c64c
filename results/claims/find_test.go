package claims

import (
	"strings"
	"testing"

	"lab/plugins/contract"
	"lab/results"
)

func TestFindParts(t *testing.T) {
	st := func(id, partOf string) ClaimStatus {
		return ClaimStatus{Claim: results.Claim{Claim: contract.Claim{ID: id, PartOf: partOf}}}
	}
	sts := []ClaimStatus{st("E2.1a", "E2.1"), st("E2.1b", "E2.1"), st("E1.6", ""), st("E2.1", "")}
	ids := func(found []ClaimStatus) string {
		var out []string
		for _, s := range found {
			out = append(out, s.Claim.ID)
		}
		return strings.Join(out, ",")
	}
	// An exact id wins over the parts of a compound claim of that id.
	if found, err := Find(sts, "e2.1"); err != nil || ids(found) != "E2.1" {
		t.Errorf("Find(e2.1) = %s, %v", ids(found), err)
	}
	if found, err := Find(sts[:3], "E2.1"); err != nil || ids(found) != "E2.1a,E2.1b" {
		t.Errorf("Find(E2.1) = %s, %v; want its parts", ids(found), err)
	}
	if _, err := Find(sts, "E9"); err == nil || !strings.Contains(err.Error(), "known: E2.1a, E2.1b, E1.6, E2.1") {
		t.Errorf("Find(E9) = %v", err)
	}
}
