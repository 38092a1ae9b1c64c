package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lab/internal/labtest"
	"lab/plugins"
	"lab/plugins/host"
	"lab/results"
	rclaims "lab/results/claims"
)

// claimsPlugin installs a plugin (guest build only) declaring two claims
// and returns it.
func claimsPlugin(t *testing.T) *plugins.Description {
	t.Helper()
	cliEnv(t)
	root := t.TempDir()
	t.Setenv("LAB_LIBDIR", t.TempDir()) // no built-ins
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("LAB_PLUGIN_PATH", root)
	dir := filepath.Join(root, "cb", "i386")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	labtest.WriteELF(t, filepath.Join(dir, "cb"), "i386", "")
	desc := &plugins.Description{Name: "cb", Version: "1", Experiments: []plugins.Experiment{{
		Name: "create", Metrics: []plugins.Metric{{Name: "p", Unit: "ms"}, {Name: "q", Unit: "ms"}},
		Claims: []plugins.Claim{
			{ID: "E1.10", Source: "the paper", Statement: "p is 10+ times q", Machine: "Celeron", Profile: "celeron-2.4",
				Rationale: "10+ times", Ratio: &plugins.RatioClaim{Numerator: "p", Denominator: "q", Min: 10}},
			{ID: "E1.7", Source: "the paper", Statement: "p is 0.18 ms", Machine: "Celeron",
				Near: &plugins.NearClaim{Metric: "p", Value: 0.18, Tolerance: 0.005, Unit: "ms"}},
		},
	}}}
	if err := host.WriteRecord(dir, desc); err != nil {
		t.Fatal(err)
	}
	return desc
}

func TestCLIClaimsEmptyStore(t *testing.T) {
	claimsPlugin(t)
	store := filepath.Join(t.TempDir(), "never-made")
	t.Setenv("LAB_RESULTS_DIR", store)

	r := cliRun(t, "claims")
	wantOutput(t, r, "claims", 0, "stdout", "CLAIM", "E1.7", "E1.10", "not run", "cb/create", "p is 10+ times q")
	if i, j := strings.Index(r.stdout, "E1.7"), strings.Index(r.stdout, "E1.10"); i > j {
		t.Errorf("E1.10 listed before E1.7:\n%s", r.stdout)
	}
	r = cliRun(t, "claims", "--json")
	var got []rclaims.ClaimStatus
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 2 {
		t.Fatalf("lab claims --json = %s (%v), want 2 claims", r.stdout, err)
	}
	for _, s := range got {
		if s.Verdict != results.NotRun || s.Latest != nil || s.Rule == "" || s.Claim.Kind == "" {
			t.Errorf("claim %s with an empty store: %+v, want not run with its rule", s.Claim.ID, s)
		}
	}
	r = cliRun(t, "claims", "show", "E1.10")
	wantOutput(t, r, "claims show E1.10", 0, "stdout", "E1.10: p is 10+ times q", "source", "the paper", "Celeron (profile celeron-2.4)",
		"p / q >= 10", "Mann-Whitney U", "rationale", "verdict    not run", "no stored run decided it")
	r = cliRun(t, "claims", "show", "E9.9")
	wantOutput(t, r, "claims show E9.9", 1, "stderr", `no claim "E9.9"`, "known: E1.7, E1.10")
	if _, err := os.Stat(store); err == nil {
		t.Errorf("lab claims created the result store %s", store)
	}

	// No plugins at all.
	t.Setenv("LAB_PLUGIN_PATH", t.TempDir())
	r = cliRun(t, "claims")
	wantOutput(t, r, "claims (no plugins)", 0, "stdout", "no claims")
	r = cliRun(t, "claims", "--json")
	wantOutput(t, r, "claims --json (no plugins)", 0, "stdout", "[]")
}

func TestCLIClaimsFromStore(t *testing.T) {
	desc := claimsPlugin(t)
	store := t.TempDir()
	t.Setenv("LAB_RESULTS_DIR", store)
	claims := host.Claims(desc.Name, &desc.Experiments[0])
	save := func(id, clock string, started time.Time, p, q []float64) {
		t.Helper()
		r := &results.Result{ID: id, Started: started, Plugin: "cb", Experiment: "create", Outcome: results.Outcome{Status: "ok"},
			Machine: results.MachineRecord{Profile: map[string]any{"name": "celeron-2.4"}, Accelerator: "tcg", Clock: clock}}
		for i := range p {
			r.Samples = append(r.Samples, results.Sample{Metric: "p", Value: p[i], Unit: "ms", Repeat: i},
				results.Sample{Metric: "q", Value: q[i], Unit: "ms", Repeat: i})
		}
		rclaims.Judge(r, claims, nil)
		if _, err := results.Save(store, r); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	six := func(v float64) []float64 { return []float64{v, v * 1.001, v * 0.999, v * 1.002, v * 0.998, v} }
	save("20260102T150000.000000Z-cb-create-aaaaaa", "icount:0", t0, six(0.217), six(0.05))
	save("20260102T160000.000000Z-cb-create-bbbbbb", "host", t0.Add(time.Hour), six(0.4), six(0.02))
	// A file that does not load is a warning, not the end of the listing.
	if err := os.WriteFile(filepath.Join(store, "broken.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}

	r := cliRun(t, "claims", "--json")
	var got []rclaims.ClaimStatus
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 2 {
		t.Fatalf("lab claims --json = %s (%v)", r.stdout, err)
	}
	wantOutput(t, r, "claims --json", 0, "stderr", "broken.json")
	byID := map[string]rclaims.ClaimStatus{}
	for _, s := range got {
		byID[s.Claim.ID] = s
	}
	// E1.10: the latest run (host clock, ratio 20) reproduced it.
	if s := byID["E1.10"]; s.Verdict != results.Reproduced || s.Latest == nil || s.Latest.Run != "20260102T160000.000000Z-cb-create-bbbbbb" {
		t.Errorf("E1.10 = %+v, want reproduced by the newer run", s)
	}
	// E1.7: the latest run's verdict (not comparable under the host clock).
	if s := byID["E1.7"]; s.Verdict != results.NotComparable || s.Latest.Clock != "host" {
		t.Errorf("E1.7 = %+v, want not comparable from the host-clock run", s)
	}
	r = cliRun(t, "claims", "show", "E1.7")
	wantOutput(t, r, "claims show E1.7", 0, "stdout", "runs that decided it, newest first:",
		"not comparable  20260102T160000.000000Z-cb-create-bbbbbb", "not reproduced  20260102T150000.000000Z-cb-create-aaaaaa",
		"above 0.185", "one instruction = 2^0 ns", "emulation speed")
	if i, j := strings.Index(r.stdout, "bbbbbb"), strings.Index(r.stdout, "aaaaaa"); i > j {
		t.Errorf("runs not newest first:\n%s", r.stdout)
	}
	r = cliRun(t, "claims", "show", "--json", "E1.7")
	var one rclaims.ClaimStatus
	if err := json.Unmarshal([]byte(r.stdout), &one); err != nil || len(one.Runs) != 2 || one.Runs[1].Verdict.Verdict != results.NotReproduced || len(one.Runs[1].Verdict.Numbers) == 0 {
		t.Errorf("lab claims show --json E1.7 = %s (%v)", r.stdout, err)
	}
}
