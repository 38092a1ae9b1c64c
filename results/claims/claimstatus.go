package claims

import (
	"fmt"
	"strings"
	"time"

	"lab/results"
)

// ClaimRun is one stored run's verdict on a claim.
type ClaimRun struct {
	Run         string          `json:"run"`
	Started     time.Time       `json:"started"`
	Profile     string          `json:"profile"`
	Accelerator string          `json:"accelerator"`
	Clock       string          `json:"clock"`
	Verdict     results.Verdict `json:"verdict"`
}

// ClaimStatus is a claim with its latest verdict (NotRun when no stored
// run decided it) and every run that did, newest first.
type ClaimStatus struct {
	Claim   results.Claim `json:"claim"`
	Rule    string        `json:"rule"`
	Verdict string        `json:"verdict"`
	// Latest is the newest run that decided the claim; nil if none.
	Latest *ClaimRun  `json:"latest,omitempty"`
	Runs   []ClaimRun `json:"runs,omitempty"`
}

// ClaimStatuses joins claims with the verdicts store's runs (newest
// first, as LoadAll and Select return them) gave them: a claim's verdict
// is the newest one other than not run, from a run of the claim's own
// plugin and experiment. The result is in the order of claims.
func ClaimStatuses(claims []results.Claim, store []*results.Result) []ClaimStatus {
	out := make([]ClaimStatus, len(claims))
	for i, c := range claims {
		s := ClaimStatus{Claim: c, Rule: RuleText(&c), Verdict: results.NotRun}
		for _, r := range store {
			if r.Plugin != c.Plugin || r.Experiment != c.Bench {
				continue
			}
			for _, v := range r.Verdicts {
				if v.Claim == c.ID && v.Decided() {
					s.Runs = append(s.Runs, ClaimRun{Run: r.ID, Started: r.Started, Profile: results.ProfileName(r.Machine),
						Accelerator: r.Machine.Accelerator, Clock: r.Machine.Clock, Verdict: v})
				}
			}
		}
		if len(s.Runs) > 0 {
			latest := s.Runs[0]
			s.Latest, s.Verdict = &latest, latest.Verdict.Verdict
		}
		out[i] = s
	}
	return out
}

// Find is the statuses of the claims with id (case aside; two plugins
// may declare one id), or an error listing the ids sts has.
func Find(sts []ClaimStatus, id string) ([]ClaimStatus, error) {
	var found []ClaimStatus
	var ids []string
	for _, s := range sts {
		if strings.EqualFold(s.Claim.ID, id) {
			found = append(found, s)
		}
		ids = append(ids, s.Claim.ID)
	}
	if len(found) == 0 {
		known := "no installed plugin declares any"
		if len(ids) > 0 {
			known = "known: " + strings.Join(ids, ", ")
		}
		return nil, fmt.Errorf("no claim %q among the installed plugins' claims (%s); see `lab claims`", id, known)
	}
	return found, nil
}

// Counts says how many of sts have each verdict: "2 reproduced, 5 not
// run", or "none".
func Counts(sts []ClaimStatus) string {
	n := map[string]int{}
	for _, s := range sts {
		n[s.Verdict]++
	}
	var parts []string
	for _, v := range []string{results.Reproduced, results.NotReproduced, results.Inconclusive, results.NotComparable, results.NotRun} {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], v))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
