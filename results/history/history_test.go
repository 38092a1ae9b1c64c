package history

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"lab/internal/fixture"
	"lab/results"
	rclaims "lab/results/claims"
)

var day0 = time.Date(2026, 11, 20, 2, 0, 0, 0, time.UTC)

// night saves one night's runs into a store of its own under root and
// returns the directory (a matrix output directory: the store is its
// results/).
func night(t *testing.T, root string, i int, runs ...*results.Result) string {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprintf("night-%02d", i))
	for j, r := range runs {
		r.ID = fmt.Sprintf("%s-%d-%d", day0.AddDate(0, 0, i).Format("20060102T150405Z"), i, j)
		r.Started = day0.AddDate(0, 0, i).Add(time.Duration(j) * time.Minute)
		r.Finished = r.Started.Add(time.Minute)
		if _, err := results.Save(filepath.Join(dir, "results"), r); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// nights makes n nights of two cells: "slow" (fork_ms, 10 ms, 20% slower
// from night `at`) and "steady" (rate, 500 conn/s throughout); noise is
// a fixed +-0.1% pattern.
func nights(t *testing.T, n, at int) []string {
	t.Helper()
	root := t.TempDir()
	var dirs []string
	for i := 0; i < n; i++ {
		f := 1.0
		if i >= at {
			f = 1.2
		}
		wiggle := 1 + 0.001*float64(i%3-1)
		slow := fixture.Run("", "celeron-2.4", "icount:0", fixture.Series("fork_ms", "ms", nil, 10*f*wiggle, 10.01*f*wiggle, 9.99*f*wiggle))
		slow.Plugin = "forkbench"
		steady := fixture.Run("", "celeron-2.4", "icount:0", fixture.Series("rate", "conn/s", map[string]string{"mode": "thread"}, 500*wiggle, 501*wiggle))
		steady.Plugin = "netbench"
		dirs = append(dirs, night(t, root, i, slow, steady))
	}
	return dirs
}

func TestHistoryFindsTheChange(t *testing.T) {
	dirs := nights(t, 6, 3)
	// Given in another order: the nights are ordered by their runs.
	shuffled := []string{dirs[4], dirs[0], dirs[5], dirs[2], dirs[1], dirs[3]}
	ns, skipped, err := LoadNights(shuffled)
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	for i, n := range ns {
		if n.Name != filepath.Base(dirs[i]) {
			t.Errorf("night %d is %s, want %s", i, n.Name, dirs[i])
		}
	}
	h := Build(ns, Defaults(), nil)
	if len(h.Series) != 2 {
		t.Fatalf("series %+v, want 2", h.Series)
	}
	slow, steady := h.Series[0], h.Series[1]
	if slow.Metric != "fork_ms" || len(slow.Changes) != 1 || slow.Changes[0].Night != 3 || !slow.Changes[0].Worse {
		t.Errorf("fork_ms: changes %+v, want one at night index 3, worse", slow.Changes)
	}
	if c := slow.Changes[0].Change; c < 19.5 || c > 20.5 {
		t.Errorf("fork_ms change %.2f%%, want about +20%%", c)
	}
	if len(steady.Changes) != 0 || steady.Unstable || !steady.HigherIsBetter {
		t.Errorf("rate: %+v, want no change, stable, higher is better", steady)
	}
	if p := slow.Points[5]; p.N != 3 || p.Min > p.Median || p.Max < p.Median {
		t.Errorf("night 6 point %+v", p)
	}
	// The gate: the change began 3 nights before the last.
	if a := h.Alarms(3); len(a) != 1 || a[0].Series != "fork_ms" || a[0].Night != "night-03" {
		t.Errorf("alarms over the last 3 nights: %+v, want the fork_ms change", a)
	}
	if a := h.Alarms(2); len(a) != 0 {
		t.Errorf("alarms over the last 2 nights: %+v, want none (the change began before)", a)
	}
	var out bytes.Buffer
	if err := WriteText(&out, h, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"6 night(s)", "celeron-2.4/forkbench/e/n=10 (clock icount:0)", "night 4 (night-03): +20.0% worse", "none", "fork_ms, per night:", "<- +20.0% worse"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
	// The same nights give the same history.
	ns2, _, _ := LoadNights(dirs)
	if h2 := Build(ns2, Defaults(), nil); !reflect.DeepEqual(h2.Series, h.Series) {
		t.Errorf("the same nights in another order gave another history")
	}
}

// TestHistoryBetterAndUnstable: a rate that rises is a change for the
// better (no alarm); a series whose nights vary by more than half the
// smallest change asked for is unstable and not gated, and so is one
// whose repeats do: forkbench's user_s under icount (tick-sampled CPU
// time, 3 repeats a night, the real nights of
// TestIntegrationHistoryNights) has steady medians but repeats 28% apart,
// and its last night's median moved +28% with nothing changed.
func TestHistoryBetterAndUnstable(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	noise := []float64{1, 1.09, 0.93, 1.05, 0.9, 1.1, 0.95, 1.3}
	userS := [][]float64{{0.0089, 0.008902, 0.009022}, {0.008907, 0.008932, 0.009087}, {0.008991, 0.009084, 0.01154},
		{0.008991, 0.008993, 0.009114}, {0.008899, 0.008991, 0.01149}, {0.0089, 0.008902, 0.009022},
		{0.008907, 0.008932, 0.009087}, {0.009013, 0.01147, 0.01485}}
	for i := 0; i < 8; i++ {
		f := 1.0
		if i >= 5 {
			f = 1.3
		}
		r := fixture.Run("", "p3-450", "host", fixture.Series("rate", "req/s", nil, 100*f, 101*f), fixture.Series("t", "s", nil, 2*noise[i], 2*noise[i]),
			fixture.Series("user_s", "s", nil, userS[i]...), fixture.Series("jumpy", "s", nil, 1*f, 1.2*f))
		dirs = append(dirs, night(t, root, i, r))
	}
	ns, _, err := LoadNights(dirs)
	if err != nil {
		t.Fatal(err)
	}
	h := Build(ns, Defaults(), nil)
	jumpy, rate, tt, user := h.Series[0], h.Series[1], h.Series[2], h.Series[3]
	if !jumpy.Unstable || len(jumpy.Changes) != 1 || jumpy.Changes[0].Night != 5 {
		t.Errorf("jumpy: unstable %v, changes %+v; want unstable by its repeats, one change at night index 5", jumpy.Unstable, jumpy.Changes)
	}
	if !user.Unstable || user.RepeatNoise < 10 {
		t.Errorf("user_s: repeats vary %.1f%%, nights %.1f%%, unstable %v; want unstable by its repeats", user.RepeatNoise, user.Noise, user.Unstable)
	}
	if len(rate.Changes) != 1 || rate.Changes[0].Worse {
		t.Errorf("rate: %+v, want one change for the better", rate.Changes)
	}
	if !tt.Unstable {
		t.Errorf("t varies %.1f%% a night; want unstable", tt.Noise)
	}
	if a := h.Alarms(8); len(a) != 0 {
		t.Errorf("alarms %+v, want none", a)
	}
	// The unstable series' changes are shown as not gated: jumpy's (three
	// nights on its new level). user_s's tick-sampling jump on the last
	// night alone (+27%, its night's median varying 9% by its repeats
	// alone) is no change point at all (issue 31: it failed make test
	// under load): a single night needs 6 of its noise.
	if u := h.Ungated(8); len(u) != 1 || u[0].Series != "jumpy" {
		t.Errorf("ungated %+v, want jumpy's change only", u)
	}
	if len(user.Changes) != 0 {
		t.Errorf("user_s: changes %+v, want none from its last night alone", user.Changes)
	}
}

func TestLoadNightsRefuses(t *testing.T) {
	root := t.TempDir()
	good := night(t, root, 0, fixture.Run("", "celeron-2.4", "icount:0", fixture.Series("t", "s", nil, 1)))
	empty := filepath.Join(root, "empty")
	os.MkdirAll(empty, 0o755)
	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o644)
	for _, c := range []struct {
		dirs []string
		want string
	}{
		{nil, "no nights given"},
		{[]string{good, file}, "is not a directory"},
		{[]string{good, filepath.Join(root, "missing")}, "is not a directory"},
		{[]string{good, empty}, "holds no runs"},
		{[]string{good, good + "/results"}, "are the same night"},
	} {
		_, _, err := LoadNights(c.dirs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadNights(%v): %v, want %q", c.dirs, err, c.want)
		}
	}
}

// TestDirectoryOfNights: one directory whose subdirectories are the
// nights is those nights.
func TestDirectoryOfNights(t *testing.T) {
	dirs := nights(t, 4, 2)
	if err := os.MkdirAll(filepath.Join(filepath.Dir(dirs[0]), "not-a-night"), 0o755); err != nil {
		t.Fatal(err)
	}
	ns, _, err := LoadNights([]string{filepath.Dir(dirs[0])})
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 4 || ns[0].Name != "night-00" || ns[3].Name != "night-03" {
		t.Errorf("nights %+v, want night-00..night-03", ns)
	}
}

// TestOneStoreByDate: one store whose runs span nights is split by the
// UTC date they started.
func TestOneStoreByDate(t *testing.T) {
	root := t.TempDir()
	store := filepath.Join(root, "store")
	for i := 0; i < 4; i++ {
		r := fixture.Run(fmt.Sprintf("run-%d", i), "celeron-2.4", "icount:0", fixture.Series("t", "s", nil, 1))
		r.Started = day0.AddDate(0, 0, i/2).Add(time.Duration(i) * time.Hour)
		if _, err := results.Save(store, r); err != nil {
			t.Fatal(err)
		}
	}
	ns, _, err := LoadNights([]string{store})
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 2 || ns[0].Name != "2026-11-20" || ns[1].Name != "2026-11-21" || ns[0].Runs != 2 {
		t.Errorf("nights %+v, want 2026-11-20 and 2026-11-21 with 2 runs each", ns)
	}
}

// TestClaimFlips: a claim's verdict per night, not run where the night
// has none, and a flip each time it changes between nights that have one.
func TestClaimFlips(t *testing.T) {
	dirs := nights(t, 5, 5)
	ns, _, _ := LoadNights(dirs)
	verdicts := []string{results.Reproduced, results.Reproduced, "", results.NotReproduced, results.Reproduced}
	i := 0
	judge := func(runs []*results.Result) []rclaims.ClaimStatus {
		v := verdicts[i]
		i++
		if v == "" {
			v = results.NotRun
		}
		var c results.Claim
		c.ID, c.Statement = "E9.1", "a claim"
		return []rclaims.ClaimStatus{{Claim: c, Verdict: v}}
	}
	h := Build(ns, Defaults(), judge)
	if len(h.Claims) != 1 {
		t.Fatalf("claims %+v", h.Claims)
	}
	c := h.Claims[0]
	want := []Flip{{Night: 3, From: results.Reproduced, To: results.NotReproduced}, {Night: 4, From: results.NotReproduced, To: results.Reproduced}}
	if !reflect.DeepEqual(c.Flips, want) || c.Verdicts[2] != results.NotRun {
		t.Errorf("claim history %+v, want flips %+v and night 3 not run", c, want)
	}
	var out bytes.Buffer
	WriteText(&out, h, false)
	if !strings.Contains(out.String(), "E9.1   R  R  -  N  R  night 4: reproduced -> not reproduced; night 5: not reproduced -> reproduced") {
		t.Errorf("claims table:\n%s", out.String())
	}
}

// TestHistoryTickSampledNotGated: a metric the run says counts timer
// ticks (rusage CPU times) keeps its change points on show, and no gate
// fails on them; the same change in a metric that does not is an alarm
// (issue 31: tick-sampled times are not gated on).
func TestHistoryTickSampledNotGated(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for i := 0; i < 8; i++ {
		f := 1.0
		if i >= 5 {
			f = 1.5
		}
		r := fixture.Run("", "celeron-2.4", "icount:0", fixture.Series("sys_s", "s", nil, 0.2*f, 0.2*f, 0.2*f), fixture.Series("real_s", "s", nil, 0.3*f, 0.3*f, 0.3*f))
		r.TickSampled = []string{"sys_s"}
		dirs = append(dirs, night(t, root, i, r))
	}
	ns, _, err := LoadNights(dirs)
	if err != nil {
		t.Fatal(err)
	}
	h := Build(ns, Defaults(), nil)
	var sys, real *Series
	for i := range h.Series {
		switch h.Series[i].Metric {
		case "sys_s":
			sys = &h.Series[i]
		case "real_s":
			real = &h.Series[i]
		}
	}
	if sys == nil || real == nil || !sys.TickSampled || real.TickSampled || len(sys.Changes) != 1 || len(real.Changes) != 1 {
		t.Fatalf("series sys_s %+v, real_s %+v; want both with their change, sys_s tick-sampled", sys, real)
	}
	a, u := h.Alarms(5), h.Ungated(5)
	if len(a) != 1 || a[0].Series != "real_s" || len(u) != 1 || u[0].Series != "sys_s" {
		t.Errorf("alarms %+v, ungated %+v; want real_s gated, sys_s not", a, u)
	}
	var b strings.Builder
	if err := WriteText(&b, h, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "tick-sampled") {
		t.Errorf("lab history's table does not mark sys_s tick-sampled:\n%s", b.String())
	}
}

// TestHistoryFarChangeGatedOnNoisySeries: a series unstable by its
// repeats (one repeat 15% off under load: 4.7%) is still gated on a
// change far outside that noise (+99%, syscallbench slowed; issue 31:
// make test with a compiler beside it). TestHistoryBetterAndUnstable
// holds the other side: jumpy's +30% on repeats 13% apart is not gated.
func TestHistoryFarChangeGatedOnNoisySeries(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	nights := [][]float64{{392.1, 392.1, 398.5}, {392.1, 392.1, 398.6}, {392.1, 392.1, 392.1}, {779.1, 784.3, 785.5}, {779.1, 779.1, 785.4}, {779.1, 779.1, 895.6}}
	for i, v := range nights {
		r := fixture.Run("", "celeron-2.4", "icount:0", fixture.Series("syscall_ns", "ns", nil, v...))
		dirs = append(dirs, night(t, root, i, r))
	}
	ns, _, err := LoadNights(dirs)
	if err != nil {
		t.Fatal(err)
	}
	h := Build(ns, Defaults(), nil)
	var sys *Series
	for i := range h.Series {
		if h.Series[i].Metric == "syscall_ns" {
			sys = &h.Series[i]
		}
	}
	if sys == nil || !sys.Unstable || len(sys.Changes) != 1 {
		t.Fatalf("syscall_ns %+v, want unstable with one change", sys)
	}
	if a := h.Alarms(5); len(a) != 1 || a[0].Series != "syscall_ns" || a[0].Night != h.Nights[3].Name {
		t.Errorf("alarms %+v, want syscall_ns from the 4th night", a)
	}
}
