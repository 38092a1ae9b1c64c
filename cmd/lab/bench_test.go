package main

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"lab/images"
	"lab/internal/labtest"
	"lab/results"
	"lab/results/stats"
	"lab/vm"
)

// The benchmarks print tables (make bench); they assert nothing about
// speed: the machines are shared and noisy, so each row is a median with
// its range and the number of values, and ratios are only compared within
// one run. The one assertion is BenchmarkHarnessOverheadIcount's: under
// icount:0 guest time is deterministic, so the plugin and `lab exec` must
// agree within 1%.

// benchStats is median and range of xs.
func benchStats(xs []float64) (med, lo, hi float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return stats.Median(s), s[0], s[len(s)-1]
}

// statRow is name, median, range and n of xs, printed with format.
func statRow(name, format string, xs []float64) []string {
	m, lo, hi := benchStats(xs)
	f := func(v float64) string { return fmt.Sprintf(format, v) }
	return []string{name, f(m), f(lo) + ".." + f(hi), strconv.Itoa(len(xs))}
}

func benchTable(b *testing.B, title string, header string, rows [][]string) {
	b.Helper()
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%s\n", title)
	tw := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	fmt.Print(sb.String())
}

// benchMetrics reports the medians as the benchmark's metrics (in place of
// the meaningless ns/op of a function that runs once).
func benchMetrics(b *testing.B, kv ...any) {
	b.Helper()
	b.ReportMetric(0, "ns/op")
	for i := 0; i+1 < len(kv); i += 2 {
		xs := kv[i+1].([]float64)
		m, _, _ := benchStats(xs)
		b.ReportMetric(m, kv[i].(string))
	}
}

// BenchmarkBootToReady: per profile under TCG, QEMU start to agent ready
// (host wall time) for boots that restore the booted snapshot (5 each, the
// default) and for cold boots (--cold, 3 each), with the guest's own uptime
// at /init on the cold boots.
func BenchmarkBootToReady(b *testing.B) {
	const warm, cold = 5, 3
	var rows [][]string
	labtest.RequireBoot(b, images.Builtin()...)
	labtest.LockBoots(b)
	for _, p := range images.Builtin() {
		root, err := os.MkdirTemp("", "labb")
		if err != nil {
			b.Fatal(err)
		}
		b.Setenv("LAB_STATE_DIR", root)
		boot := func(extra ...string) *vm.State { return benchUpDown(b, p.Name, extra...) }
		boot() // makes the snapshot if there is none
		var restored, coldReady, coldInit []float64
		for i := 0; i < warm; i++ {
			st := boot()
			if st.Boot != "restored from snapshot" {
				b.Fatalf("%s: boot %q, want a restore", p.Name, st.Boot)
			}
			restored = append(restored, st.BootSeconds)
		}
		for i := 0; i < cold; i++ {
			st := boot("--cold")
			coldReady = append(coldReady, st.BootSeconds)
			coldInit = append(coldInit, st.Guest.UptimeAtInit)
		}
		os.RemoveAll(root)
		m, lo, hi := benchStats(restored)
		cm, clo, chi := benchStats(coldReady)
		gm, _, _ := benchStats(coldInit)
		rows = append(rows, []string{p.Name, p.Arch, fmt.Sprintf("%.2f", m), fmt.Sprintf("%.2f..%.2f", lo, hi),
			fmt.Sprintf("%.2f", cm), fmt.Sprintf("%.2f..%.2f", clo, chi), fmt.Sprintf("%.2f", gm)})
	}
	benchTable(b, fmt.Sprintf("boot to ready under TCG: QEMU start -> agent answering, seconds (%d restored boots, %d cold boots per profile)", warm, cold),
		"PROFILE\tARCH\tRESTORED MEDIAN\tRANGE\tCOLD MEDIAN\tRANGE\tCOLD: GUEST UPTIME AT /init", rows)
}

// benchLab runs the CLI in-process and fails the benchmark on error.
func benchLab(b *testing.B, args ...string) string {
	b.Helper()
	var out, errb strings.Builder
	if code := run(b.Context(), append([]string{"lab"}, args...), getenvFor(b), nil, &out, &errb); code != 0 {
		b.Fatalf("lab %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// benchProfile is celeron-2.4, which every table here is measured on.
func benchProfile(b *testing.B) images.Profile {
	b.Helper()
	return itProfile(b, "celeron-2.4")
}

// benchUpDown boots profile as VM "b" (with extra `lab up` flags), takes
// it down again and returns the state `lab up --json` printed.
func benchUpDown(b *testing.B, profile string, extra ...string) *vm.State {
	b.Helper()
	out := benchLab(b, append(append([]string{"up", "--accel", "tcg", "--json", "--name", "b"}, extra...), profile)...)
	var st vm.State
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		b.Fatalf("lab up --json: %v", err)
	}
	benchLab(b, "down", "b")
	return &st
}

// benchRoot takes the boot lock for the rest of the benchmark and points
// lab at a private state root (and results directory), powering off and
// removing everything in it at the end. profiles are what the benchmark
// boots (default celeron-2.4).
func benchRoot(b *testing.B, profiles ...images.Profile) {
	b.Helper()
	if len(profiles) == 0 {
		profiles = []images.Profile{benchProfile(b)}
	}
	labtest.RequireBoot(b, profiles...)
	labtest.LockBoots(b)
	root, err := os.MkdirTemp("", "labb")
	if err != nil {
		b.Fatal(err)
	}
	b.Setenv("LAB_STATE_DIR", root)
	b.Setenv("LAB_RESULTS_DIR", b.TempDir())
	b.Cleanup(func() {
		var out, errb strings.Builder
		run(b.Context(), []string{"lab", "down", "--all"}, getenvFor(b), nil, &out, &errb)
		labtest.KillProcs(root)
		os.RemoveAll(root)
	})
}

// benchUp boots celeron-2.4 (with extra `lab up` flags) as VM "bench" in a
// private state root for the benchmark.
func benchUp(b *testing.B, extra ...string) *vm.State {
	b.Helper()
	benchRoot(b)
	out := benchLab(b, append(append([]string{"up", "--accel", "tcg", "--json", "--name", "bench"}, extra...), benchProfile(b).Name)...)
	var st vm.State
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		b.Fatalf("lab up --json: %v", err)
	}
	return &st
}

// benchTry is `lab run --json ARGS`: the result, its stderr and wall time
// in seconds, or an error saying why the run failed.
func benchTry(b *testing.B, args ...string) (res *results.Result, stderr string, wall float64, err error) {
	b.Helper()
	args = append([]string{"run", "--json"}, args...)
	var out, errb strings.Builder
	t := time.Now()
	code := run(b.Context(), append([]string{"lab"}, args...), getenvFor(b), nil, &out, &errb)
	wall = time.Since(t).Seconds()
	var r results.Result
	jerr := json.Unmarshal([]byte(out.String()), &r)
	switch {
	case code != 0 && jerr == nil:
		return nil, errb.String(), wall, fmt.Errorf("lab %s: exit %d: %s: %s", strings.Join(args, " "), code, r.Outcome.Status, r.Outcome.Reason)
	case code != 0:
		return nil, errb.String(), wall, fmt.Errorf("lab %s: exit %d: %s", strings.Join(args, " "), code, lastLines(errb.String(), 6))
	case jerr != nil:
		return nil, errb.String(), wall, fmt.Errorf("lab %s: --json: %v", strings.Join(args, " "), jerr)
	case r.Outcome.Status != "ok":
		return nil, errb.String(), wall, fmt.Errorf("lab %s: %+v", strings.Join(args, " "), r.Outcome)
	case r.Harness == nil:
		return nil, errb.String(), wall, fmt.Errorf("lab %s: no harness figures in the result", strings.Join(args, " "))
	}
	return &r, errb.String(), wall, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// benchFails counts the runs of a benchmark that failed: the benchmark
// goes on without them (up to maxFails), says so in its table and fails
// at the end. A failed `lab run` is a bug, not noise.
type benchFails struct {
	errs []error
}

const maxFails = 3

func (f *benchFails) add(b *testing.B, err error) {
	b.Helper()
	b.Logf("run failed (not counted): %v", err)
	f.errs = append(f.errs, err)
	if len(f.errs) > maxFails {
		b.Fatalf("%d runs failed; giving up", len(f.errs))
	}
}

// note is "" or what to add to the table's title.
func (f *benchFails) note() string {
	if len(f.errs) == 0 {
		return ""
	}
	return fmt.Sprintf("; %d FAILED RUNS not counted, the first: %s", len(f.errs), lastLines(f.errs[0].Error(), 1))
}

func (f *benchFails) check(b *testing.B) {
	b.Helper()
	if len(f.errs) > 0 {
		b.Errorf("%d runs failed, the first: %v", len(f.errs), f.errs[0])
	}
}

// benchRuns does `lab run --json ARGS` until want runs succeeded, the
// failures going to fails, and returns the results and wall times.
func benchRuns(b *testing.B, fails *benchFails, want int, args ...string) ([]*results.Result, []float64) {
	b.Helper()
	var rs []*results.Result
	var walls []float64
	for len(rs) < want {
		res, _, wall, err := benchTry(b, args...)
		if err != nil {
			fails.add(b, err)
			continue
		}
		rs = append(rs, res)
		walls = append(walls, wall)
	}
	return rs, walls
}

// sampleValues is the values of metric among the samples, in order.
func sampleValues(ss []results.Sample, metric string) []float64 {
	var xs []float64
	for _, s := range ss {
		if s.Metric == metric {
			xs = append(xs, s.Value)
		}
	}
	return xs
}

// BenchmarkPluginStart: from `lab run` starting to the plugin's first RPC
// answered (harness.start_seconds; open_seconds from the push on), on
// celeron-2.4 that is up: the first run after the boot, then 10 more.
func BenchmarkPluginStart(b *testing.B) {
	benchUp(b)
	const runs = 10
	var fails benchFails
	args := []string{"forkbench", "-p", "n=10"}
	first, _ := benchRuns(b, &fails, 1, args...)
	rs, _ := benchRuns(b, &fails, runs, args...)
	var start, open, push []float64
	for _, r := range rs {
		start = append(start, r.Harness.StartSeconds)
		open = append(open, r.Harness.OpenSeconds)
		push = append(push, r.Harness.PushSeconds)
	}
	h := first[0].Harness
	benchTable(b, fmt.Sprintf("plugin start, `lab run forkbench -p n=10` on celeron-2.4 that is up, TCG, seconds (the first run after the boot, not counted: sent %d files, %d already there, push %.2fs, start %.2fs; then %d runs%s)",
		h.FilesSent, h.FilesCached, h.PushSeconds, h.StartSeconds, runs, fails.note()),
		"WHAT\tMEDIAN\tRANGE\tN", [][]string{
			statRow("`lab run` start -> first RPC answered (harness.start_seconds)", "%.2f", start),
			statRow("push -> first RPC answered (harness.open_seconds)", "%.2f", open),
			statRow("push (content-hash check only)", "%.2f", push),
		})
	benchMetrics(b, "start_s", start, "open_s", open)
	fails.check(b)
}

// BenchmarkRunVMUp: the wall time of `lab run forkbench -p n=200` on
// celeron-2.4 that is up: the first run after the boot, then 10 more.
func BenchmarkRunVMUp(b *testing.B) {
	benchUp(b)
	const runs = 10
	var fails benchFails
	args := []string{"forkbench", "-p", "n=200"}
	first, wall0 := benchRuns(b, &fails, 1, args...)
	rs, wall := benchRuns(b, &fails, runs, args...)
	var start, real []float64
	for _, r := range rs {
		start = append(start, r.Harness.StartSeconds)
		real = append(real, sampleValues(r.Samples, "real_s")...)
	}
	benchTable(b, fmt.Sprintf("`lab run forkbench -p n=200` on celeron-2.4 that is up, TCG, wall seconds (the first run after the boot, not counted: %.2fs, sent %d files; then %d runs%s)",
		wall0[0], first[0].Harness.FilesSent, runs, fails.note()),
		"WHAT\tMEDIAN\tRANGE\tN", [][]string{
			statRow("wall: `lab run` called -> returned", "%.2f", wall),
			statRow("of which start -> first RPC answered", "%.2f", start),
			statRow("of which the workload (real_s, timed by itself)", "%.2f", real),
		})
	benchMetrics(b, "wall_s", wall, "start_s", start)
	fails.check(b)
}

var upInRE = regexp.MustCompile(`up in ([0-9.]+)s`)

// BenchmarkRunThrowaway: a whole cell of a matrix, `lab run forkbench
// --profile celeron-2.4 -p n=200`: boot from the snapshot, push, run,
// power off. One run first (it makes the booted snapshot if there is none),
// then 10 timed: issue 21's figure is their median (target: under 1.2 s
// on the 2-core developer machine; it was 1.71 s).
func BenchmarkRunThrowaway(b *testing.B) {
	benchRoot(b)
	const runs = 10
	var fails benchFails
	args := []string{"forkbench", "--profile", benchProfile(b).Name, "-p", "n=200"}
	cell := func() (res *results.Result, wall, boot float64) {
		for {
			res, errs, wall, err := benchTry(b, args...)
			if err == nil {
				m := upInRE.FindStringSubmatch(errs)
				if m == nil {
					b.Fatalf("lab run %s: no boot time in its stderr: %s", strings.Join(args, " "), errs)
				}
				boot, _ = strconv.ParseFloat(m[1], 64)
				return res, wall, boot
			}
			fails.add(b, err)
		}
	}
	res0, wall0, _ := cell()
	var wall, boot, open, after []float64
	var boots []string
	for i := 0; i < runs; i++ {
		res, w, bt := cell()
		if res.Machine.Boot != "restored from snapshot" {
			boots = append(boots, res.Machine.Boot)
		}
		wall = append(wall, w)
		boot = append(boot, bt)
		open = append(open, res.Harness.OpenSeconds)
		after = append(after, w-res.Harness.StartSeconds)
	}
	note := "all restored from the snapshot"
	if len(boots) > 0 {
		note = fmt.Sprintf("%d not restored from the snapshot: %q", len(boots), boots)
	}
	benchTable(b, fmt.Sprintf("throwaway cell `lab run forkbench --profile celeron-2.4 -p n=200`, TCG, wall seconds (the first cell, not counted: %.2fs, %s; then %d cells, %s%s)",
		wall0, res0.Machine.Boot, runs, note, fails.note()),
		"WHAT\tMEDIAN\tRANGE\tN", [][]string{
			statRow("wall: boot, push, run, power off", "%.2f", wall),
			statRow("of which boot to agent ready", "%.2f", boot),
			statRow("of which push -> first RPC answered", "%.2f", open),
			statRow("of which first RPC -> returned (run, save, power off)", "%.2f", after),
		})
	benchMetrics(b, "wall_s", wall)
	fails.check(b)
}

// BenchmarkPluginSize: the size of forkbench's plugin binaries as built
// (make plugins), and whether they are stripped (no symbol table, no
// DWARF). No guest.
func BenchmarkPluginSize(b *testing.B) {
	var rows [][]string
	var i386 float64
	for _, arch := range []string{"i386", "x86_64"} {
		path := filepath.Join(labtest.LibDir(), "plugins", "forkbench", arch, "forkbench")
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatalf("%v (run `make plugins`)", err)
		}
		f, err := elf.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		stripped := "yes"
		for _, s := range f.Sections {
			if s.Name == ".symtab" || strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_") {
				stripped = "no (" + s.Name + ")"
				break
			}
		}
		f.Close()
		if arch == "i386" {
			i386 = float64(fi.Size())
		}
		rows = append(rows, []string{path, strconv.FormatInt(fi.Size(), 10), fmt.Sprintf("%.1f", float64(fi.Size())/1e6), stripped})
	}
	benchTable(b, "forkbench plugin binaries (MB = 10^6 bytes)", "BINARY\tBYTES\tMB\tSTRIPPED", rows)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(i386/1e6, "i386_MB")
}

// guestWorkload is the path in the guest of the forkbench workload binary
// the plugin runs, found by its content: the file named forktime whose
// sha256 is that of the i386 build's workload/forktime. Run it after a
// `lab run forkbench` (which puts the bundle in the guest).
func guestWorkload(b *testing.B) string {
	b.Helper()
	local, err := os.ReadFile(filepath.Join(labtest.LibDir(), "plugins", "forkbench", "i386", "workload", "forktime"))
	if err != nil {
		b.Fatalf("%v (run `make plugins`)", err)
	}
	sum := sha256.Sum256(local)
	want := hex.EncodeToString(sum[:])
	out := benchLab(b, "exec", "--", "sh", "-c",
		`find / \( -path /proc -o -path /sys -o -path /dev \) -prune -o -type f -name forktime -print 2>/dev/null | while read -r f; do sha256sum "$f"; done`)
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == want {
			return f[1]
		}
	}
	b.Fatalf("no file in the guest is the plugin's workload forktime (sha256 %s); found:\n%s", want, out)
	return ""
}

// execWorkload runs the workload binary with `lab exec` and returns its
// `metric value` lines.
func execWorkload(b *testing.B, bin string, args ...string) map[string]float64 {
	b.Helper()
	out := benchLab(b, append([]string{"exec", "--", bin}, args...)...)
	vals := map[string]float64{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			vals[f[0]] = v
		}
	}
	return vals
}

// overheadSamples runs pairs of forktime n=N: one through the plugin (`lab
// run forkbench -e forktime`), then the same binary by `lab exec`,
// alternating, in the VM that is up. It returns each side's values per
// metric, in order.
func overheadSamples(b *testing.B, fails *benchFails, pairs int, n string) (plugin, exec map[string][]float64) {
	b.Helper()
	benchRuns(b, fails, 1, "forkbench", "-e", "forktime", "-p", "n=10") // puts the bundle in the guest
	bin := guestWorkload(b)
	plugin, exec = map[string][]float64{}, map[string][]float64{}
	for i := 0; i < pairs; i++ {
		rs, _ := benchRuns(b, fails, 1, "forkbench", "-e", "forktime", "-p", "n="+n)
		vals := execWorkload(b, bin, n)
		for _, m := range overheadMetrics {
			p := sampleValues(rs[0].Samples, m.metric)
			e, ok := vals[m.metric]
			if len(p) != 1 || !ok {
				b.Fatalf("pair %d: %s: plugin gave %v, lab exec gave %v", i, m.metric, p, vals)
			}
			plugin[m.metric] = append(plugin[m.metric], p[0])
			exec[m.metric] = append(exec[m.metric], e)
		}
	}
	for _, m := range overheadMetrics {
		b.Logf("%s, in order: plugin %v; lab exec %v", m.metric, plugin[m.metric], exec[m.metric])
	}
	return plugin, exec
}

var overheadMetrics = []struct{ metric, name string }{
	{"fork_wait_us", "fork+wait"},
	{"thread_create_join_us", "pthread_create+join"},
}

// BenchmarkHarnessOverheadIcount: under --clock icount:0 (one guest
// instruction = 1 ns) forktime through the plugin and the same workload
// binary by `lab exec` in the same VM, 15 alternating pairs. Issue 7: the
// medians must agree within 1%. Guest time is not exactly deterministic
// even there (host I/O reaches the guest at varying instruction counts:
// single samples spread by 1-3%), so the benchmark fails, after printing
// the table, only when the medians differ by more than 1% and the
// Mann-Whitney U test tells the two sides apart (p < 0.05).
func BenchmarkHarnessOverheadIcount(b *testing.B) {
	st := benchUp(b, "--clock", "icount:0")
	const pairs, n = 15, "2000"
	var fails benchFails
	plugin, exec := overheadSamples(b, &fails, pairs, n)
	var rows [][]string
	var bad []string
	for _, m := range overheadMetrics {
		p, e := plugin[m.metric], exec[m.metric]
		pm, plo, phi := benchStats(p)
		em, elo, ehi := benchStats(e)
		rel := (pm/em - 1) * 100
		u, err := stats.MannWhitneyU(p, e)
		if err != nil {
			b.Fatal(err)
		}
		ok := "yes"
		if rel > 1 || rel < -1 {
			ok = fmt.Sprintf("no (p = %.2g)", u.P)
			if u.P < 0.05 {
				bad = append(bad, fmt.Sprintf("%s: plugin %.2f µs, lab exec %.2f µs (%+.2f%%, p = %.2g)", m.name, pm, em, rel, u.P))
			}
		}
		rows = append(rows, []string{m.name, fmt.Sprintf("%.2f", pm), fmt.Sprintf("%.2f..%.2f", plo, phi),
			fmt.Sprintf("%.2f", em), fmt.Sprintf("%.2f..%.2f", elo, ehi), strconv.Itoa(len(p)), fmt.Sprintf("%+.2f%%", rel),
			fmt.Sprintf("%.2g", u.P), ok})
	}
	benchTable(b, fmt.Sprintf("harness overhead under --clock icount:0 on celeron-2.4 (%s, %s): forktime n=%s through the plugin vs `lab exec` of the same binary, %d alternating pairs (µs per call, guest time); Mann-Whitney U, two-sided%s",
		st.Clock, st.Boot, n, pairs, fails.note()),
		"METRIC\tPLUGIN MEDIAN\tRANGE\tLAB EXEC MEDIAN\tRANGE\tN\tPLUGIN/EXEC - 1\tP\tWITHIN 1%", rows)
	benchMetrics(b, "fork_plugin_us", plugin["fork_wait_us"], "fork_exec_us", exec["fork_wait_us"])
	fails.check(b)
	if len(bad) > 0 {
		b.Errorf("under icount:0 the plugin and lab exec must agree within 1%%: %s", strings.Join(bad, "; "))
	}
}

// BenchmarkHarnessOverhead: under the host clock, forktime through the
// plugin vs the same workload binary by `lab exec` in the same VM, 20
// alternating pairs; the median of the pairs' differences and the
// two-sided Mann-Whitney U test of the two sides.
func BenchmarkHarnessOverhead(b *testing.B) {
	benchUp(b)
	const pairs, n = 20, "2000"
	var fails benchFails
	plugin, exec := overheadSamples(b, &fails, pairs, n)
	var rows [][]string
	for _, m := range overheadMetrics {
		p, e := plugin[m.metric], exec[m.metric]
		pm, plo, phi := benchStats(p)
		em, elo, ehi := benchStats(e)
		d := make([]float64, len(p))
		for i := range p {
			d[i] = p[i] - e[i]
		}
		dm, _, _ := benchStats(d)
		u, err := stats.MannWhitneyU(p, e)
		if err != nil {
			b.Fatal(err)
		}
		rows = append(rows, []string{m.name, fmt.Sprintf("%.1f", pm), fmt.Sprintf("%.1f..%.1f", plo, phi),
			fmt.Sprintf("%.1f", em), fmt.Sprintf("%.1f..%.1f", elo, ehi), strconv.Itoa(len(p)),
			fmt.Sprintf("%+.1f (%+.1f%%)", dm, dm/em*100), fmt.Sprintf("%.0f", u.U), fmt.Sprintf("%.3g", u.P)})
	}
	benchTable(b, fmt.Sprintf("harness overhead on celeron-2.4, TCG, host clock: forktime n=%s through the plugin vs `lab exec` of the same binary, %d alternating pairs (µs per call); Mann-Whitney U of plugin vs exec, two-sided%s",
		n, pairs, fails.note()),
		"METRIC\tPLUGIN MEDIAN\tRANGE\tLAB EXEC MEDIAN\tRANGE\tN\tMEDIAN PAIR DIFFERENCE (PLUGIN - EXEC)\tU\tP", rows)
	benchMetrics(b, "fork_plugin_us", plugin["fork_wait_us"], "fork_exec_us", exec["fork_wait_us"])
	fails.check(b)
}
