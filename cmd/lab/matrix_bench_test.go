package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lab/results"
	"lab/results/matrix"
	"lab/results/stats"
)

// BenchmarkMatrixParallel: one matrix of 6 throwaway cells (forkbench
// forktime -p n=300 --repeat 5 on celeron-2.4, restored from its booted
// snapshot) at 1, 2 and 3 VMs at once, under the host clock and under
// icount:0: the matrix's wall time and cells per minute, and what running
// side by side does to what each cell measures, the spread of the cells'
// fork_wait_us medians (CV across cells) and their median against the
// one-at-a-time run's. The defaults of lab matrix --parallel come from
// this table.
func BenchmarkMatrixParallel(b *testing.B) {
	benchRoot(b)
	exe := filepath.Join(os.Getenv("LAB_LIBDIR"), "lab")
	if _, err := os.Stat(exe); err != nil {
		b.Fatalf("%s: %v (make build)", exe, err)
	}
	for _, clock := range []string{"host", "icount:0"} {
		file := filepath.Join(b.TempDir(), "m.yaml")
		body := "name: parallel\nclock: " + clock + "\ncells:\n  - plugin: forkbench\n    experiment: forktime\n    profiles: [celeron-2.4]\n    params: {n: [300, 301, 302, 303, 304, 305]}\n    repeat: 5\n"
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
		// One cell first: the booted snapshot, if there is none.
		if _, _, _, err := benchTry(b, "forkbench", "--profile", "celeron-2.4", "--clock", clock, "-p", "n=50"); err != nil {
			b.Fatal(err)
		}
		var rows [][]string
		var base float64
		for _, par := range []int{1, 2, 3} {
			out := filepath.Join(b.TempDir(), fmt.Sprintf("p%d", par))
			t := time.Now()
			cmd := exec.Command(exe, "matrix", file, "--out", out, "--parallel", strconv.Itoa(par))
			cmd.Env = environFor(b)
			if msg, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("lab matrix --parallel %d: %v\n%s", par, err, msg)
			}
			wall := time.Since(t).Seconds()
			runs, errs := results.LoadAll(results.StoreDir(out))
			if len(errs) > 0 || len(runs) != 6 {
				b.Fatalf("--parallel %d: %d runs, %v", par, len(runs), errs)
			}
			var med, cellWall []float64
			st, _, _ := matrix.LoadState(out)
			for _, c := range st.Cells {
				cellWall = append(cellWall, c.Seconds)
			}
			for _, r := range runs {
				med = append(med, stats.Median(r.Values("fork_wait_us", nil)))
			}
			m, lo, hi := benchStats(med)
			if par == 1 {
				base = m
			}
			cw, _, _ := benchStats(cellWall)
			rows = append(rows, []string{strconv.Itoa(par), fmt.Sprintf("%.1f", wall), fmt.Sprintf("%.1f", 6/wall*60), fmt.Sprintf("%.1f", cw),
				fmt.Sprintf("%.4g (%.4g..%.4g)", m, lo, hi), fmt.Sprintf("%.2f%%", stats.SummaryOf(med).CV*100), fmt.Sprintf("%.3f", m/base)})
		}
		benchTable(b, "lab matrix of 6 cells (forkbench forktime -p n=300 --repeat 5, celeron-2.4, TCG, restored boots), clock "+clock+", at 1, 2 and 3 VMs at once",
			"PARALLEL\tWALL S\tCELLS/MIN\tCELL S (MEDIAN)\tFORK_WAIT_US MEDIAN OF CELLS (RANGE)\tCV ACROSS CELLS\tVS 1 AT A TIME", rows)
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkReproducibility: run-to-run spread on celeron-2.4 under the
// host clock and under icount:0, with address-space randomization on (the
// kernel's default) and, under icount:0, off (the profile's setting): 10 runs each of forkbench forktime (-p n=500) and
// threadbench hello (-p workers=32 -p count=50), one VM per clock, the CV
// across the runs of each run's value. icount:0 makes guest time one
// instruction per ns, so what is left is what differs between runs in the
// guest itself.
func BenchmarkReproducibility(b *testing.B) {
	benchRoot(b)
	const runs = 10
	type series struct {
		metric, plugin string
		labels         map[string]string
	}
	wanted := []series{
		{"fork_wait_us", "forkbench", nil},
		{"thread_create_join_us", "forkbench", nil},
		{"real_s", "threadbench", map[string]string{"mode": "process"}},
		{"real_s", "threadbench", map[string]string{"mode": "thread"}},
	}
	var rows [][]string
	// The profile turns randomization off (2.4 had none); each variant
	// sets it explicitly.
	for _, clock := range []string{"host aslr on", "icount:0 aslr on", "icount:0 aslr off"} {
		name := "repro-" + strings.NewReplacer(":", "", " ", "-").Replace(clock)
		c, _, _ := strings.Cut(clock, " ")
		benchLab(b, "up", "--accel", "tcg", "--name", name, "--clock", c, benchProfile(b).Name)
		aslr := "2"
		if strings.HasSuffix(clock, "aslr off") {
			aslr = "0"
		}
		benchLab(b, "exec", name, "--", "sh", "-c", "echo "+aslr+" > /proc/sys/kernel/randomize_va_space")
		vals := map[int][]float64{}
		for i := 0; i < runs; i++ {
			for _, args := range [][]string{
				{"forkbench", "--vm", name, "-e", "forktime", "-p", "n=500"},
				{"threadbench", "--vm", name, "-e", "hello", "-p", "workers=32", "-p", "count=50"},
			} {
				res, _, _, err := benchTry(b, args...)
				if err != nil {
					b.Fatal(err)
				}
				for j, s := range wanted {
					if s.plugin == args[0] {
						vals[j] = append(vals[j], stats.Median(res.Values(s.metric, s.labels)))
					}
				}
			}
		}
		benchLab(b, "down", name)
		for j, s := range wanted {
			m, lo, hi := benchStats(vals[j])
			rows = append(rows, []string{clock, s.plugin + " " + results.SeriesBraced(s.metric, s.labels), fmt.Sprintf("%.4g", m),
				fmt.Sprintf("%.4g..%.4g", lo, hi), fmt.Sprintf("%.2f%%", stats.SummaryOf(vals[j]).CV*100), strconv.Itoa(len(vals[j]))})
		}
	}
	benchTable(b, fmt.Sprintf("run-to-run spread on celeron-2.4 (TCG), %d runs per clock, one VM each: forktime -p n=500, hello -p workers=32 -p count=50", runs),
		"CLOCK\tSERIES\tMEDIAN\tRANGE\tCV\tN", rows)
	b.ReportMetric(0, "ns/op")
}
