package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lab/results"
)

// TestIntegrationReproduceDeterministic: under icount, lab reproduce of a
// small selection (E1.3's parts and E1.4a, on split-3g1g: a range and two
// crash thresholds) run three times on fresh output directories gives the
// same verdict for every claim, each decided in the first round; the same
// command again on a finished directory runs no cell and gives the same
// verdicts; the report is written.
func TestIntegrationReproduceDeterministic(t *testing.T) {
	itBootEnv(t, itProfile(t, "split-3g1g"))
	type out struct {
		Rounds []struct {
			N       int      `json:"N"`
			Decided []string `json:"Decided"`
		} `json:"Rounds"`
		Statuses []struct {
			Claim   results.Claim `json:"claim"`
			Verdict string        `json:"verdict"`
		} `json:"Statuses"`
	}
	reproduce := func(dir string) (out, labResult) {
		r := itMust(t, 10*time.Minute, nil, "reproduce", "E1.3", "E1.4a", "--out", dir, "--json")
		var o out
		if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
			t.Fatalf("lab reproduce --json: %v\n%s", err, r.stdout)
		}
		return o, r
	}
	verdicts := func(o out) map[string]string {
		m := map[string]string{}
		for _, s := range o.Statuses {
			m[s.Claim.ID] = s.Verdict
		}
		return m
	}
	var first map[string]string
	var firstDir string
	for i := range 3 {
		dir := filepath.Join(t.TempDir(), "reproduce")
		o, r := reproduce(dir)
		v := verdicts(o)
		t.Logf("run %d: %v", i+1, v)
		if len(v) != 3 || len(o.Rounds) != 1 || len(o.Rounds[0].Decided) != 3 {
			t.Errorf("run %d: verdicts %v, rounds %+v; want E1.3a, E1.3b and E1.4a decided in round 1\n%s", i+1, v, o.Rounds, r.stderr)
		}
		for id, verdict := range v {
			if verdict == results.Inconclusive || verdict == results.NotRun {
				t.Errorf("run %d: %s %s", i+1, id, verdict)
			}
		}
		if i == 0 {
			first, firstDir = v, dir
			if _, err := os.Stat(filepath.Join(dir, "report", "index.html")); err != nil {
				t.Errorf("no report: %v", err)
			}
			continue
		}
		for id, verdict := range first {
			if v[id] != verdict {
				t.Errorf("run %d: %s %s, run 1 said %s", i+1, id, v[id], verdict)
			}
		}
	}
	// Resumed: nothing left to run.
	o, r := reproduce(firstDir)
	if !strings.Contains(r.stderr, "nothing to run; 5 already in the results, kept") || strings.Contains(r.stderr, "[1/") {
		t.Errorf("the same command on a finished directory ran cells again:\n%s", r.stderr)
	}
	for id, verdict := range verdicts(o) {
		if first[id] != verdict {
			t.Errorf("resumed: %s %s, was %s", id, verdict, first[id])
		}
	}
}
