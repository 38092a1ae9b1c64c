package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"

	"lab/images"
	"lab/internal/labtest"
	"lab/results"
	"lab/vm"
)

// The benchmarks print tables (make bench); they assert nothing about
// speed: the machines are shared and noisy.

// benchStats is median and range of xs.
func benchStats(xs []float64) (med, lo, hi float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return results.Median(s), s[0], s[len(s)-1]
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
		boot := func(extra ...string) *vm.State {
			r := benchLab(b, append(append([]string{"up", "--accel", "tcg", "--json", "--name", "b"}, extra...), p.Name)...)
			var st vm.State
			if err := json.Unmarshal([]byte(r), &st); err != nil {
				b.Fatalf("lab up --json: %v", err)
			}
			benchLab(b, "down", "b")
			return &st
		}
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
	if code := run(b.Context(), append([]string{"lab"}, args...), nil, &out, &errb); code != 0 {
		b.Fatalf("lab %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// benchUp boots celeron-2.4 in a private state root for the benchmark.
func benchUp(b *testing.B) {
	b.Helper()
	p := images.Builtin()[0]
	for _, q := range images.Builtin() {
		if q.Name == "celeron-2.4" {
			p = q
		}
	}
	labtest.RequireBoot(b, p)
	labtest.LockBoots(b)
	root, err := os.MkdirTemp("", "labb")
	if err != nil {
		b.Fatal(err)
	}
	b.Setenv("LAB_STATE_DIR", root)
	b.Setenv("LAB_RESULTS_DIR", b.TempDir())
	b.Cleanup(func() {
		var out, errb strings.Builder
		run(b.Context(), []string{"lab", "down", "--all"}, nil, &out, &errb)
		labtest.KillProcs(root)
		os.RemoveAll(root)
	})
	benchLab(b, "up", "--accel", "tcg", "--name", "bench", p.Name)
}

func benchRun(b *testing.B, args ...string) *results.Result {
	b.Helper()
	out := benchLab(b, append([]string{"run", "--json"}, args...)...)
	var res results.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		b.Fatalf("lab run --json: %v", err)
	}
	if res.Outcome.Status != "ok" {
		b.Fatalf("lab run %v: %+v", args, res.Outcome)
	}
	return &res
}

// BenchmarkPluginStart: from `lab run` starting to the plugin's first RPC
// answered, 10 runs on celeron-2.4; the first pushes the plugin, the others
// find it in the guest.
func BenchmarkPluginStart(b *testing.B) {
	benchUp(b)
	const runs = 10
	var start, open, push []float64
	var first *results.Harness
	for i := 0; i < runs; i++ {
		res := benchRun(b, "forkbench", "-p", "n=10")
		h := res.Harness
		if i == 0 {
			first = h
			continue
		}
		start = append(start, h.StartSeconds)
		open = append(open, h.OpenSeconds)
		push = append(push, h.PushSeconds)
	}
	row := func(name string, xs []float64) []string {
		m, lo, hi := benchStats(xs)
		return []string{name, fmt.Sprintf("%.2f", m), fmt.Sprintf("%.2f..%.2f", lo, hi)}
	}
	benchTable(b, fmt.Sprintf("plugin push + start on celeron-2.4, TCG (seconds; first run pushed %d files in %.2fs and started in %.2fs; %d cached runs below)",
		first.FilesSent, first.PushSeconds, first.StartSeconds, runs-1),
		"WHAT\tMEDIAN\tRANGE", [][]string{
			row("`lab run` start -> first RPC answered", start),
			row("push (content-hash check only) -> first RPC", open),
			row("push (content-hash check only)", push),
		})
}

// BenchmarkHarnessOverhead: forktime through the plugin vs the same
// workload binary run with `lab exec` in the same VM, alternating, 5 each.
func BenchmarkHarnessOverhead(b *testing.B) {
	benchUp(b)
	// The noise under TCG on a shared host is large (CV ~20% per sample),
	// so each side gets rounds*per samples, interleaved.
	const rounds, per = 2, 10
	res := benchRun(b, "forkbench", "-p", "n=10") // puts the bundle in the guest
	_ = res
	bin := strings.TrimSpace(benchLab(b, "exec", "--", "sh", "-c", "ls /var/lib/lab/plugins/forkbench/*/workload/forktime | head -1"))
	var pf, pt, ef, et []float64
	for i := 0; i < rounds; i++ {
		r := benchRun(b, "forkbench", "-p", "n=2000", "--repeat", strconv.Itoa(per))
		for _, s := range r.Samples {
			switch s.Metric {
			case "fork_wait_us":
				pf = append(pf, s.Value)
			case "thread_create_join_us":
				pt = append(pt, s.Value)
			}
		}
		var out string
		for j := 0; j < per; j++ {
			out += benchLab(b, "exec", "--", bin, "2000")
		}
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				continue
			}
			switch f[0] {
			case "fork_wait_us":
				ef = append(ef, v)
			case "thread_create_join_us":
				et = append(et, v)
			}
		}
	}
	row := func(name string, plug, bare []float64) []string {
		pm, plo, phi := benchStats(plug)
		em, elo, ehi := benchStats(bare)
		return []string{name, fmt.Sprintf("%.1f", pm), fmt.Sprintf("%.1f..%.1f", plo, phi), fmt.Sprintf("%.1f", results.MAD(plug)),
			fmt.Sprintf("%.1f", em), fmt.Sprintf("%.1f..%.1f", elo, ehi), fmt.Sprintf("%.1f", results.MAD(bare)), fmt.Sprintf("%+.1f%%", (pm/em-1)*100)}
	}
	benchTable(b, fmt.Sprintf("harness overhead on celeron-2.4, TCG: forktime n=2000 through the plugin vs `lab exec` of the same binary, %d alternating rounds of %d (µs per call)", rounds, per),
		"METRIC\tPLUGIN MEDIAN\tRANGE\tMAD\tLAB EXEC MEDIAN\tRANGE\tMAD\tDIFFERENCE OF MEDIANS",
		[][]string{row("fork+wait", pf, ef), row("pthread_create+join", pt, et)})
}
