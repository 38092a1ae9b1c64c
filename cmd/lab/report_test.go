package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lab/plugins/host"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/compare"
)

// TestCLIReport: lab report writes index.html into --out, prints its
// path, names a corrupt result file on stderr and skips it, uses the
// latest run of each key plus the runs of the verdicts shown, and with
// no store still lists every claim as not run.
func TestCLIReport(t *testing.T) {
	desc := claimsPlugin(t)
	store := t.TempDir()
	claims := host.Claims(desc.Name, &desc.Experiments[0])
	save := func(id string, started time.Time, p, q float64) {
		t.Helper()
		r := &results.Result{ID: id, Started: started, Plugin: "cb", Experiment: "create", Outcome: results.Outcome{Status: "ok"},
			Parameters: map[string]string{"repeat": "6"},
			Machine:    results.MachineRecord{Profile: map[string]any{"name": "celeron-2.4"}, Accelerator: "tcg", Clock: "host", QEMUVersion: "QEMU emulator version 7.2.22"}}
		for i := range 6 {
			f := 1 + float64(i)/1000
			r.Samples = append(r.Samples, results.Sample{Metric: "p", Value: p * f, Unit: "ms", Repeat: i},
				results.Sample{Metric: "q", Value: q * f, Unit: "ms", Repeat: i})
		}
		compare.Analyze(r, nil)
		rclaims.Judge(r, claims, nil, nil)
		if _, err := results.Save(store, r); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	save("20260102T150000.000000Z-cb-create-aaaaaa", t0, 0.4, 0.02)
	save("20260102T160000.000000Z-cb-create-bbbbbb", t0.Add(time.Hour), 0.4, 0.02)
	if err := os.WriteFile(filepath.Join(store, "20260102T170000.000000Z-cb-create-broken.json"), []byte(`{"id": "x`), 0o644); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "new", "report")
	r := cliRun(t, "report", "--out", out, "--results", store)
	wantOutput(t, r, "report", 0, "stderr", "20260102T170000.000000Z-cb-create-broken.json", "2 claim(s)", "1 of 2 stored run(s) used")
	if got, want := strings.TrimSpace(r.stdout), filepath.Join(out, "index.html"); got != want {
		t.Errorf("lab report printed %q, want %q", got, want)
	}
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="run-20260102T160000.000000Z-cb-create-bbbbbb"`, "QEMU emulator version 7.2.22",
		`<a href="#claim-E1.10">E1.10</a></td><td><span class="badge v-ok">reproduced</span>`,
		`<a href="#claim-E1.7">E1.7</a></td><td><span class="badge v-nc">not comparable</span>`, "20260102T170000.000000Z-cb-create-broken.json"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(string(page), `id="run-20260102T150000.000000Z-cb-create-aaaaaa"`) {
		t.Error("the older run of the same key is used")
	}
	r = cliRun(t, "report", "--out", out, "--results", store, "--all-runs")
	wantOutput(t, r, "report --all-runs", 0, "stderr", "2 of 2 stored run(s) used")

	// No store: every claim not run, and the store is not created.
	none := filepath.Join(t.TempDir(), "none")
	r = cliRun(t, "report", "--out", out, "--results", none)
	wantOutput(t, r, "report (no store)", 0, "stderr", "2 claim(s) (2 not run), 0 of 0 stored run(s) used")
	if _, err := os.Stat(none); err == nil {
		t.Errorf("lab report created the result store %s", none)
	}

	// Filters: a profile with no runs, a bad outcome.
	r = cliRun(t, "report", "--out", out, "--results", store, "--profile", "p4-2.4")
	wantOutput(t, r, "report --profile p4-2.4", 0, "stderr", "0 of 0 stored run(s) used")
	r = cliRun(t, "report", "--out", out, "--results", store, "--outcome", "fine")
	wantOutput(t, r, "report --outcome fine", 1, "stderr", "--outcome fine: want one of")
	r = cliRun(t, "report", "extra")
	wantOutput(t, r, "report extra", 1, "stderr", "takes no arguments")
}

// TestCLIReportHistory: lab report --history adds the History section
// over the nights, given as a directory of nights or once a night, with
// a plot of the series that changed; a night that does not read is an
// error naming it, and no page is written.
func TestCLIReportHistory(t *testing.T) {
	cliEnv(t)
	dirs := historyNights(t, 6, 4, 1.25)
	store := t.TempDir()
	out := filepath.Join(t.TempDir(), "report")
	r := cliRun(t, "report", "--history", filepath.Dir(dirs[0]), "--out", out, "--results", store)
	wantOutput(t, r, "report --history", 0, "stderr", "report: history of 6 night(s), 1 of 1 series with a change point")
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<a href="#history">History of 6 nights</a>`, "<h2>History of 6 nights</h2>",
		"celeron-2.4/forkbench/forktime/n=500 (clock host): real_s", "night 4 (night-4): &#43;25.0% worse"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report --history lacks %q", want)
		}
	}
	if n := strings.Count(string(page), "<svg"); n != 1 {
		t.Errorf("report --history: %d plots, want 1 (the series that changed)", n)
	}

	// Once a night, in any order, with the detector's thresholds.
	args := []string{"report", "--out", out, "--results", store, "--min-change", "30"}
	for _, i := range []int{3, 0, 5, 1, 4, 2} {
		args = append(args, "--history", dirs[i])
	}
	r = cliRun(t, args...)
	wantOutput(t, r, "report --history x6 --min-change 30", 0, "stderr", "history of 6 night(s), 0 of 1 series with a change point")
	if page, _ := os.ReadFile(filepath.Join(out, "index.html")); !strings.Contains(string(page), "No change point in any of the 1 series.") {
		t.Error("report --history --min-change 30: the page does not say there is no change point")
	}

	// Refused: a night that is not one, the thresholds without nights.
	bad := filepath.Join(t.TempDir(), "no-such-night")
	fresh := filepath.Join(t.TempDir(), "report")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--history", dirs[0], "--history", bad}, []string{"--history", bad, "is not a directory"}},
		{[]string{"--history", dirs[0], "--alpha", "2"}, []string{"--alpha 2", "between 0 and 1"}},
		{[]string{"--alpha", "0.01"}, []string{"--alpha sets the change points of --history"}},
	} {
		r := cliRun(t, append([]string{"report", "--out", fresh, "--results", store}, c.args...)...)
		wantOutput(t, r, "report "+strings.Join(c.args, " "), 1, "stderr", c.want...)
		if _, err := os.Stat(fresh); err == nil {
			t.Errorf("lab report %s wrote %s", strings.Join(c.args, " "), fresh)
		}
	}
}
