package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"lab/internal/fixture"
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
	setEnv(t, "LAB_LIBDIR", t.TempDir()) // no built-ins
	setEnv(t, "XDG_DATA_HOME", t.TempDir())
	setEnv(t, "LAB_PLUGIN_PATH", root)
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
				Range: &plugins.RangeClaim{Metric: "p", Min: plugins.Ptr(0.175), Max: plugins.Ptr(0.185), Unit: "ms"}},
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
	setEnv(t, "LAB_RESULTS_DIR", store)

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
		if s.Verdict != results.NotRun || len(s.Judged.Runs) != 0 || s.Rule == "" || s.Claim.Kind == "" {
			t.Errorf("claim %s with an empty store: %+v, want not run with its rule", s.Claim.ID, s)
		}
	}
	r = cliRun(t, "claims", "show", "E1.10")
	wantOutput(t, r, "claims show E1.10", 0, "stdout", "E1.10: p is 10+ times q", "source", "the paper", "Celeron (profile celeron-2.4)",
		"p / q at least 10", "signed-rank", "bounds from", "verdict      not run", "no stored run in scope decides it; this would: lab run cb -e create --profile celeron-2.4 --repeat 7")
	r = cliRun(t, "claims", "show", "E9.9")
	wantOutput(t, r, "claims show E9.9", 1, "stderr", `no claim "E9.9"`, "known: E1.7, E1.10")
	if _, err := os.Stat(store); err == nil {
		t.Errorf("lab claims created the result store %s", store)
	}

	// No plugins at all.
	setEnv(t, "LAB_PLUGIN_PATH", t.TempDir())
	r = cliRun(t, "claims")
	wantOutput(t, r, "claims (no plugins)", 0, "stdout", "no claims")
	r = cliRun(t, "claims", "--json")
	wantOutput(t, r, "claims --json (no plugins)", 0, "stdout", "[]")
}

func TestCLIClaimsFromStore(t *testing.T) {
	desc := claimsPlugin(t)
	store := t.TempDir()
	setEnv(t, "LAB_RESULTS_DIR", store)
	claims := host.Claims(desc.Name, &desc.Experiments[0])
	save := func(id, clock string, started time.Time, p, q []float64) {
		t.Helper()
		r := &results.Result{ID: id, Started: started, Plugin: "cb", Experiment: "create", Outcome: results.Outcome{Status: "ok"},
			Machine: results.MachineRecord{Profile: map[string]any{"name": "celeron-2.4"}, Accelerator: "tcg", Clock: clock}}
		for i := range p {
			r.Samples = append(r.Samples, results.Sample{Metric: "p", Value: p[i], Unit: "ms", Repeat: i},
				results.Sample{Metric: "q", Value: q[i], Unit: "ms", Repeat: i})
		}
		rclaims.Judge(r, claims, nil, nil)
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
	// E1.10: every in-scope run decides, each clock apart: reproduced
	// under the host clock (ratio 20), not under icount (4.34).
	const host, icount = "20260102T160000.000000Z-cb-create-bbbbbb", "20260102T150000.000000Z-cb-create-aaaaaa"
	if s := byID["E1.10"]; s.Verdict != results.ClockDependent || strings.Join(s.Judged.Runs, " ") != icount+" "+host ||
		!strings.Contains(s.Judged.Reason, "reproduced under host (20x") || !strings.Contains(s.Judged.Reason, "not reproduced under icount:0 (4.34x") {
		t.Errorf("E1.10 = %+v, want clock-dependent from both runs", s)
	}
	// E1.7: an absolute time, not comparable under either clock (the
	// host clock's is TCG's speed; celeron-2.4 has no calibration here).
	if s := byID["E1.7"]; s.Verdict != results.NotComparable || len(s.Judged.Strata) != 2 || s.Judged.Strata[0].Clock != "host" {
		t.Errorf("E1.7 = %+v, want not comparable in a host and an icount stratum", s)
	}
	r = cliRun(t, "claims", "show", "E1.7")
	wantOutput(t, r, "claims show E1.7", 0, "stdout", "decided in each stratum (profile, clock, accelerator; never pooled):",
		"not comparable  celeron-2.4, clock host, tcg", "not comparable  celeron-2.4, clock icount:0, tcg", "runs: "+host, "runs: "+icount,
		"median p 0.4 ms", "under the host clock an absolute time is TCG's speed")
	if i, j := strings.Index(r.stdout, "clock host"), strings.Index(r.stdout, "clock icount:0"); i > j {
		t.Errorf("strata not in their fixed order (host before icount:0):\n%s", r.stdout)
	}
	r = cliRun(t, "claims", "show", "--json", "E1.7")
	var one rclaims.ClaimStatus
	if err := json.Unmarshal([]byte(r.stdout), &one); err != nil || len(one.Judged.Strata) != 2 || one.Judged.Strata[1].Verdict != results.NotComparable || len(one.Judged.Strata[0].Numbers) == 0 {
		t.Errorf("lab claims show --json E1.7 = %s (%v)", r.stdout, err)
	}
}

// TestCLIClaimsShuffledStore: the same stored runs give byte-identical
// `lab claims --json` whatever their file names, modification times and
// the order of the samples inside them (issue 20: no verdict depends on
// file order), the ids (a file's name is its run's id) mapped back. Two runs of one cell are told apart by their finish time,
// never by their files.
func TestCLIClaimsShuffledStore(t *testing.T) {
	desc := claimsPlugin(t)
	store := t.TempDir()
	setEnv(t, "LAB_RESULTS_DIR", store)
	claims := host.Claims(desc.Name, &desc.Experiments[0])
	t0 := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	var runs []*results.Result
	for i, c := range []struct {
		clock string
		p, q  float64
	}{{"icount:0", 0.217, 0.05}, {"icount:0", 0.3, 0.01}, {"host", 0.4, 0.02}, {"host", 0.41, 0.021}} {
		r := &results.Result{ID: fmt.Sprintf("20260102T1%d0000.000000Z-cb-create-%06d", i, i), Started: t0.Add(time.Duration(i) * time.Hour),
			Finished: t0.Add(time.Duration(i)*time.Hour + time.Minute), Plugin: "cb", Experiment: "create", Outcome: results.Outcome{Status: "ok"},
			Machine: results.MachineRecord{Profile: map[string]any{"name": "celeron-2.4"}, Accelerator: "tcg", Clock: c.clock}}
		for k := range 6 {
			f := 1 + 0.001*float64(k%3)
			r.Samples = append(r.Samples, results.Sample{Metric: "p", Value: c.p * f, Unit: "ms", Repeat: k},
				results.Sample{Metric: "q", Value: c.q / f, Unit: "ms", Repeat: k})
		}
		rclaims.Judge(r, claims, nil, nil)
		runs = append(runs, r)
	}
	write := func(names []string, reverse bool, mtime func(int) time.Time) {
		t.Helper()
		entries, _ := os.ReadDir(store)
		for _, e := range entries {
			os.Remove(filepath.Join(store, e.Name()))
		}
		for i, r := range runs {
			c := *r
			// A store's file is named for its run's id (issue 31): a
			// renamed run carries its new name as its id.
			c.ID = strings.TrimSuffix(names[i], ".json")
			c.Samples = slices.Clone(r.Samples)
			if reverse {
				slices.Reverse(c.Samples)
			}
			b, err := json.Marshal(&c)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(store, names[i])
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(path, mtime(i), mtime(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	judged := func() string {
		t.Helper()
		r := cliRun(t, "claims", "--json")
		wantOutput(t, r, "claims --json", 0, "stdout", `"claim"`)
		return r.stdout
	}
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.ID + ".json"
	}
	write(names, false, func(i int) time.Time { return t0.Add(time.Duration(i) * time.Hour) })
	want := judged()
	rng := rand.New(rand.NewPCG(20, 1))
	for round := range 3 {
		perm := rng.Perm(len(runs))
		shuffled := make([]string, len(runs))
		for i := range runs {
			// Names that sort in another order than the runs finished.
			shuffled[i] = fmt.Sprintf("%02d-renamed.json", perm[i])
		}
		write(shuffled, round%2 == 0, func(i int) time.Time { return t0.Add(-time.Duration(perm[i]) * 24 * time.Hour) })
		got := judged()
		for i, r := range runs {
			got = strings.ReplaceAll(got, strings.TrimSuffix(shuffled[i], ".json"), r.ID)
		}
		// Runs are listed in id order: compare them as sets.
		if got, want := sortedRuns(t, got), sortedRuns(t, want); got != want {
			t.Fatalf("round %d: lab claims --json moved with file names, times and sample order:\n got %s\nwant %s", round, got, want)
		}
	}
	// And the verdicts are the latest runs' of each cell: the earlier
	// icount and host runs are out of scope, superseded.
	var sts []rclaims.ClaimStatus
	if err := json.Unmarshal([]byte(want), &sts); err != nil {
		t.Fatal(err)
	}
	for _, s := range sts {
		if s.Claim.ID == "E1.10" && strings.Join(s.Judged.Runs, " ") != runs[1].ID+" "+runs[3].ID {
			t.Errorf("E1.10 decided by %v, want the latest run of each clock", s.Judged.Runs)
		}
	}
}

// sortedRuns is the JSON doc with every list of runs ("runs",
// "out_of_scope"), which are in id order, sorted.
func sortedRuns(t *testing.T, doc string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("%v: %s", err, doc)
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if l, ok := e.([]any); ok && (k == "runs" || k == "out_of_scope") {
					slices.SortFunc(l, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCLIStoreWithFIFO: a FIFO named like a result in the store (or a
// night of it) does not hang any command that reads the store: each
// returns within a few seconds, names it and goes on with the rest
// (issue 31).
func TestCLIStoreWithFIFO(t *testing.T) {
	cliEnv(t)
	nights := t.TempDir()
	store := filepath.Join(nights, "2026-01-02", "results")
	setEnv(t, "LAB_RESULTS_DIR", store)
	good := fixture.Result()
	if _, err := results.Save(store, good); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(store, "zz-fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"results"},
		{"claims"},
		{"report", "--out", t.TempDir()},
		{"history", nights},
		{"compare", good.ID, "latest"},
	} {
		r := runLab(t, 20*time.Second, strings.NewReader(""), args...)
		if r.took > 10*time.Second {
			t.Errorf("lab %s took %v with a FIFO in the store", strings.Join(args, " "), r.took)
		}
		if !strings.Contains(r.stderr, fifo) || !strings.Contains(r.stderr, "not a regular file (a named pipe)") {
			t.Errorf("lab %s: exit %d, stderr %q; want the FIFO named as not a regular file", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}
