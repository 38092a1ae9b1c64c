package main

// lab run --sweep and lab run --profile A --profile B through the real
// plugin path in real guests, with small sizes.

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lab/internal/labtest"
	"lab/results"
)

// itCheckSVG checks that path is a well-formed SVG whose text has every
// one of wants.
func itCheckSVG(t *testing.T, path string, wants ...string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("plot: %v", err)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	root := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("plot %s is not well-formed XML: %v", path, err)
		}
		if el, ok := tok.(xml.StartElement); ok && root == "" {
			root = el.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("plot %s: root element %q, want svg", path, root)
	}
	for _, w := range wants {
		if !bytes.Contains(data, []byte(w)) {
			t.Errorf("plot %s has no %q", path, w)
		}
	}
}

// itPrinted returns the path lab printed after prefix ("plot: ").
func itPrinted(t *testing.T, stderr, prefix string) string {
	t.Helper()
	i := strings.LastIndex(stderr, "\n"+prefix)
	if i < 0 {
		t.Fatalf("lab run did not print %q:\n%s", prefix, stderr)
	}
	p, _, _ := strings.Cut(stderr[i+1+len(prefix):], "\n")
	return strings.TrimSpace(p)
}

// pointSamples counts res's samples of metric at each value of key.
func pointSamples(res *results.Result, metric, key string) map[string]int {
	n := map[string]int{}
	for _, s := range res.Samples {
		if s.Metric == metric {
			n[s.Labels[key]]++
		}
	}
	return n
}

// TestIntegrationRunSweep: forkbench forktime over n=50,100 in one VM and
// one plugin start, one result with both points, and its plot.
func TestIntegrationRunSweep(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itBootEnv(t, p)
	itUp(t, p.Name, "sweep")
	res, r := itRunJSON(t, 0, "forkbench", "--vm", "sweep", "-e", "forktime", "--sweep", "n=50,100", "--repeat", "2")
	if res.Outcome.Status != "ok" {
		t.Fatalf("outcome %+v", res.Outcome)
	}
	if res.Sweep == nil || len(res.Sweep.Points) != 2 || res.Sweep.Done() != 2 {
		t.Fatalf("sweep record %+v, want 2 points done", res.Sweep)
	}
	if res.Parameters["n"] != "50,100" || res.Parameters["repeat"] != "2" {
		t.Errorf("parameters %v, want n=50,100 repeat=2", res.Parameters)
	}
	for _, m := range []string{"fork_wait_us", "thread_create_join_us"} {
		if got := pointSamples(res, m, "n"); got["50"] != 2 || got["100"] != 2 || len(got) != 2 {
			t.Errorf("%s samples per point %v, want 2 at n=50 and 2 at n=100, none unlabelled", m, got)
		}
	}
	var fork50, fork100 bool
	for _, s := range res.Summary {
		if s.Metric == "fork_wait_us" {
			fork50 = fork50 || s.Labels["n"] == "50"
			fork100 = fork100 || s.Labels["n"] == "100"
		}
	}
	if !fork50 || !fork100 {
		t.Errorf("no summary per point: %+v", res.Summary)
	}
	// One plugin start for the whole sweep, progress per point.
	if n := strings.Count(r.stderr, "plugin forkbench started"); n != 1 {
		t.Errorf("the plugin started %d times, want once for the sweep:\n%s", n, r.stderr)
	}
	for _, w := range []string{"2 sweep point(s) x 2 repeat(s)", "point 1/2: n=50", "point 2/2: n=100", "[point 2/2 n=100] [2/2]"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("progress does not show %q:\n%s", w, r.stderr)
		}
	}
	// A swept run is one run: one verdict per claim, from every point
	// in the claim's scope (E2.1's scope is n=2000, so none here).
	count := map[string]int{}
	for _, v := range res.Verdicts {
		count[v.Claim]++
	}
	if count["E2.1a"] != 1 || count["E2.1c"] != 1 {
		t.Errorf("verdicts per claim %v, want one each", count)
	}
	plot := itPrinted(t, r.stderr, "plot: ")
	if want := filepath.Join(itResultsDir(t), res.ID+".svg"); plot != want {
		t.Errorf("plot written to %s, want %s beside the result", plot, want)
	}
	itCheckSVG(t, plot, "fork_wait_us", "thread_create_join_us", "time (µs)", "n (iterations of each loop)",
		"profile celeron-2.4", "kernel "+res.Machine.KernelID, "clock host", "2 of 2 points done")
}

// TestIntegrationRunSweepCtrlC: SIGINT to bin/lab in the middle of a
// sweep saves the point that finished, says the run was interrupted,
// exits 130, and leaves the VM usable with no plugin running.
func TestIntegrationRunSweepCtrlC(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itBootEnv(t, p)
	labBin := filepath.Join(labtest.LibDir(), "lab")
	if _, err := os.Stat(labBin); err != nil {
		labtest.Unavailable(t, "%s missing: run `make build`", labBin)
	}
	itUp(t, p.Name, "sweepint")
	out := t.TempDir()
	// n=50 takes a fraction of a second; n=300000 forks minutes.
	cmd, stdout, stderr, done := itStartLab(t, labBin, "run", "forkbench", "--vm", "sweepint", "--out", out, "--json", "-e", "forktime", "--sweep", "n=50,300000")
	itAwait(t, stderr, "point 2/2: n=300000", 2*time.Minute)
	time.Sleep(time.Second) // well into the second point
	itInterrupt(t, cmd, done, stderr)
	t.Logf("stderr:\n%s", stderr.String())
	var res results.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("lab run --json printed no document: %v\n%s", err, stdout.String())
	}
	saved, err := results.Load(itPrinted(t, stderr.String(), "result: "))
	if err != nil {
		t.Fatal(err)
	}
	if saved.ID != res.ID {
		t.Errorf("saved %s, printed %s", saved.ID, res.ID)
	}
	if saved.Outcome.Status != results.StatusInterrupted || !strings.Contains(saved.Outcome.Reason, "after 1 of 2 sweep points") {
		t.Errorf("outcome %+v, want interrupted after 1 of 2 points", saved.Outcome)
	}
	if saved.Sweep == nil || len(saved.Sweep.Points) != 2 || saved.Sweep.Points[0].Status != "ok" || saved.Sweep.Points[1].Status != results.StatusInterrupted {
		t.Fatalf("sweep record %+v, want n=50 ok and n=300000 interrupted", saved.Sweep)
	}
	if got := pointSamples(saved, "fork_wait_us", "n"); got["50"] != 1 || got["300000"] != 0 {
		t.Errorf("fork_wait_us samples per point %v, want the finished n=50 one only", got)
	}
	if !strings.Contains(stderr.String(), "interrupted (Ctrl-C) after 1 of 2 sweep points") {
		t.Errorf("lab run does not say what it kept:\n%s", stderr.String())
	}
	itCheckSVG(t, itPrinted(t, stderr.String(), "plot: "), "fork_wait_us", "1 of 2 points done", "interrupted")
	if left := itGuestProcs(t, "forkbench"); left != "" {
		t.Errorf("the plugin still runs in the guest after Ctrl-C: %s", left)
	}
	// The VM is usable: a small run there works.
	again, _ := itRunJSON(t, 0, "forkbench", "--vm", "sweepint", "-e", "forktime", "-p", "n=50")
	if again.Outcome.Status != "ok" {
		t.Errorf("a run after the interrupted sweep: %+v", again.Outcome)
	}
}

// TestIntegrationRunProfiles: the 1-core/2-core comparison in one
// command, over a small sweep: one throwaway VM and result per profile,
// then the comparison and one plot with both.
func TestIntegrationRunProfiles(t *testing.T) {
	one, two := itProfile(t, "xeon5130-1core"), itProfile(t, "xeon5130-2core")
	root := itBootEnv(t, one, two)
	dir := itResultsDir(t)
	args := []string{"run", "--json", "--out", dir, "forkbench", "--profile", one.Name, "--profile", two.Name, "-e", "forktime", "--sweep", "n=50,100", "--repeat", "2"}
	r := itLab(t, 2*itRunTimeout, nil, args...)
	if r.code != 0 {
		t.Fatalf("lab %s: exit %d\n%s\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	var out profilesOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("lab run --profile A --profile B --json: %v\n%s", err, r.stdout)
	}
	if len(out.Results) != 2 || len(out.Paths) != 2 {
		t.Fatalf("%d results, %d paths; want one per profile", len(out.Results), len(out.Paths))
	}
	for i, p := range []string{one.Name, two.Name} {
		res := out.Results[i]
		if got := results.ProfileName(res.Machine); got != p || res.Outcome.Status != "ok" || res.Sweep.Done() != 2 {
			t.Errorf("result %d: profile %s outcome %+v sweep %+v; want %s ok with 2 points", i, got, res.Outcome, res.Sweep, p)
		}
		if res.Guest.OnlineCPUs != i+1 {
			t.Errorf("result on %s saw %d online CPUs", p, res.Guest.OnlineCPUs)
		}
		if saved, err := results.Load(out.Paths[i]); err != nil || saved.ID != res.ID {
			t.Errorf("result %d not saved at %s: %v", i, out.Paths[i], err)
		}
	}
	if !out.Results[1].Started.After(out.Results[0].Finished) {
		t.Errorf("the runs overlap: %v..%v and %v..", out.Results[0].Started, out.Results[0].Finished, out.Results[1].Started)
	}
	c := out.Comparison
	if c == nil || c.Baseline != one.Name || len(c.Profiles) != 2 {
		t.Fatalf("comparison %+v", c)
	}
	found := false
	for _, row := range c.Rows {
		if row.Metric == "fork_wait_us" && row.Labels["n"] == "50" {
			found = true
			b, o := row.Medians[one.Name], row.Medians[two.Name]
			if b <= 0 || o <= 0 || row.Speedup[two.Name] != b/o {
				t.Errorf("fork_wait_us at n=50: medians %v speed-up %v", row.Medians, row.Speedup)
			}
			t.Logf("fork_wait_us at n=50: %s %.0f µs, %s %.0f µs, speed-up %.2f", one.Name, b, two.Name, o, row.Speedup[two.Name])
		}
	}
	if !found {
		t.Errorf("no fork_wait_us n=50 row in %+v", c.Rows)
	}
	if want := strings.TrimSuffix(out.Paths[0], ".json") + ".profiles.svg"; out.Plot != want {
		t.Errorf("combined plot %q, want %q", out.Plot, want)
	}
	itCheckSVG(t, out.Plot, one.Name+": fork_wait_us", two.Name+": thread_create_join_us", "profile "+one.Name, "profile "+two.Name)
	for _, w := range []string{"== profile 1 of 2: " + one.Name, "== profile 2 of 2: " + two.Name} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr does not say %q", w)
		}
	}
	if st := itMust(t, itCallTimeout, nil, "status", "--json"); strings.TrimSpace(st.stdout) != "[]" {
		t.Errorf("throwaway VMs still listed:\n%s", st.stdout)
	}
	if procs := labtest.WaitNoProcs(root, 5*time.Second); len(procs) > 0 {
		t.Errorf("the throwaway VMs left processes: %v", procs)
	}
	// Without --json: each run's summary, then the comparison table.
	r = itLab(t, 2*itRunTimeout, nil, "run", "--out", dir, "forkbench", "--profile", one.Name, "--profile", two.Name, "-e", "forktime", "-p", "n=50")
	if r.code != 0 || !strings.Contains(r.stdout, "comparison of "+one.Name+", "+two.Name) || !strings.Contains(r.stdout, "speed-up "+two.Name) {
		t.Errorf("lab run --profile A --profile B: exit %d, no comparison table:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestIntegrationRunSweepFailures: in one guest, a point whose workload
// fails is recorded and the sweep goes on; a plugin that dies at a point
// ends the sweep there, keeping the points before; --timeout ends a sweep
// at the point it reaches. After each the VM works.
func TestIntegrationRunSweepFailures(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	dir := itTestPlugins(t)
	repo, err := labtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	itMust(t, 5*time.Minute, nil, "plugin", "build", "--out", dir, filepath.Join(repo, "internal", "testplugins", "sweeptest"))
	itBootEnv(t, p)
	itUp(t, p.Name, "sweepfail")
	statuses := func(res *results.Result) string {
		var s []string
		for _, pt := range res.Sweep.Points {
			s = append(s, results.FormatLabels(pt.Labels)+":"+pt.Status)
		}
		return strings.Join(s, " ")
	}

	t.Run("a point fails, the sweep goes on", func(t *testing.T) {
		res, _ := itRunJSON(t, 1, "sweeptest", "--sweep", "point=ok,fail,expected-crash", "--sweep", "value=2", "--repeat", "2")
		if got, want := statuses(res), "point=ok value=2:ok point=fail value=2:failed point=expected-crash value=2:expected-crash"; got != want {
			t.Errorf("points %s, want %s", got, want)
		}
		if res.Outcome.Status != "failed" || !strings.Contains(res.Outcome.Reason, "1 of 3 sweep points failed: point=fail value=2: repeat 1/2: sweeptest: failing on purpose") {
			t.Errorf("outcome %+v", res.Outcome)
		}
		// Every repeat runs after an expected crash (a flaky point shows).
		if got := pointSamples(res, "t_ms", "point"); got["ok"] != 2 || got["fail"] != 0 || got["expected-crash"] != 2 {
			t.Errorf("samples per point %v, want 2 at ok, none at fail, both repeats at the expected crash", got)
		}
	})

	t.Run("the plugin dies at a point", func(t *testing.T) {
		res, r := itRunJSON(t, 1, "sweeptest", "--sweep", "point=ok,crash,fail")
		if got, want := statuses(res), "point=ok:ok point=crash:failed point=fail:not run"; got != want {
			t.Errorf("points %s, want %s", got, want)
		}
		for _, w := range []string{"sweep point 2 of 3 (point=crash)", "the plugin crashed", "the 1 point(s) after it were not run"} {
			if !strings.Contains(res.Outcome.Reason, w) {
				t.Errorf("reason %q does not say %q", res.Outcome.Reason, w)
			}
		}
		if !strings.Contains(r.stderr, "sweeptest: about to crash") {
			t.Errorf("lab run does not quote the plugin's stderr:\n%s", r.stderr)
		}
		if got := pointSamples(res, "t_ms", "point"); got["ok"] != 1 {
			t.Errorf("samples per point %v, want the ok point's kept", got)
		}
	})

	t.Run("--timeout mid-sweep", func(t *testing.T) {
		start := time.Now()
		res, _ := itRunJSON(t, 1, "labtest", "-e", "slow", "--sweep", "seconds=1,60", "--timeout", "10s")
		if took := time.Since(start); took > 40*time.Second {
			t.Errorf("--timeout 10s took %v", took)
		}
		if got, want := statuses(res), "seconds=1:ok seconds=60:failed"; got != want {
			t.Errorf("points %s, want %s", got, want)
		}
		if !strings.Contains(res.Outcome.Reason, "sweep point 2 of 2 (seconds=60): timed out after 10s") {
			t.Errorf("outcome %+v, want the second point timed out", res.Outcome)
		}
		if got := pointSamples(res, "tick", "seconds"); got["1"] != 1 || got["60"] < 3 {
			t.Errorf("samples per point %v, want 1 at seconds=1 and those measured before the timeout at 60", got)
		}
		if left := itGuestProcs(t, "labtest"); left != "" {
			t.Errorf("the plugin still runs in the guest: %s", left)
		}
	})

	res, _ := itRunJSON(t, 0, "sweeptest", "--sweep", "value=1,2")
	if res.Outcome.Status != "ok" || res.Sweep.Done() != 2 {
		t.Errorf("the VM is not usable after the failures: %+v %s", res.Outcome, statuses(res))
	}
}

// TestIntegrationRunProfilesOneFails: a profile whose guest fails to boot
// does not stop the next; the run exits 1 naming it, with the other's
// result saved.
func TestIntegrationRunProfilesOneFails(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	root := itBootEnv(t, p)
	file := itProfileFile(t, "it-broken", "lab.stack=bogus")
	dir := itResultsDir(t)
	r := itLab(t, itRunTimeout, nil, "run", "--json", "--out", dir, "--profile-file", file, "forkbench",
		"--profile", "it-broken", "--profile", p.Name, "-e", "forktime", "-p", "n=50")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "profile it-broken:") || !strings.Contains(r.stderr, "failed to boot") {
		t.Errorf("the error does not name the profile that failed and why:\n%s", r.stderr)
	}
	var out profilesOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	if len(out.Results) != 1 || results.ProfileName(out.Results[0].Machine) != p.Name || out.Results[0].Outcome.Status != "ok" {
		t.Fatalf("results %+v, want the %s run only, ok", out.Results, p.Name)
	}
	if _, err := results.Load(out.Paths[0]); err != nil {
		t.Errorf("the %s result was not saved: %v", p.Name, err)
	}
	if st := itMust(t, itCallTimeout, nil, "status", "--json"); strings.TrimSpace(st.stdout) != "[]" {
		t.Errorf("VMs still listed:\n%s", st.stdout)
	}
	if procs := labtest.WaitNoProcs(root, 5*time.Second); len(procs) > 0 {
		t.Errorf("processes left: %v", procs)
	}
}
