package history

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
)

// noiseCVs are the run-to-run CVs BenchmarkReproducibility measured on
// celeron-2.4 (docs/measurements.md, "Reproducibility"): a night's value
// varies this much with nothing changed.
var noiseCVs = []struct {
	clock, series string
	cv            float64
}{
	{"icount:0", "fork+wait", 0.0005},
	{"icount:0", "create+join", 0.0033},
	{"icount:0", "hello, threads", 0.015},
	{"icount:0", "hello, processes", 0.053},
	{"host", "fork+wait", 0.068},
	{"host", "hello, processes", 0.16},
	{"host", "create+join", 0.27},
}

// BenchmarkChangePointNoise measures the detector on synthetic nights
// drawn from our own noise (log-normal, each clock's run-to-run CV), 400
// series a row: how often 30 nights of pure noise show a change point,
// how often a nightly gate over them fails at least once (run every
// night from the 10th to the 30th, over the last DefaultLast nights; a
// series Unstable that night is not gated),
// and, for a step of 2%, 5% and 10% the worse way after 20 clean nights,
// the share found within 10 nights and the median number of nights after
// the step's first night until it is found (0: that night).
func BenchmarkChangePointNoise(b *testing.B) {
	const series = 400
	opts := []Options{
		{Alpha: 0.01, MinChange: 5}, {Alpha: 0.001, MinChange: 2}, Defaults(),
		{Alpha: 0.001, MinChange: 10}, {Alpha: 0.0001, MinChange: 5},
	}
	var rows [][]string
	for _, nc := range noiseCVs {
		for _, o := range opts {
			anyCP, gate := 0, 0
			for s := 0; s < series; s++ {
				x := noisy(uint64(s)+1000, 30, 100, nc.cv)
				if len(Detect(x, o)) > 0 {
					anyCP++
				}
				for n := 10; n <= 30; n++ {
					if len(nightly(x[:n], o).inGate(n, DefaultLast, false)) > 0 {
						gate++
						break
					}
				}
			}
			row := []string{nc.clock + " " + nc.series, fmt.Sprintf("%.2f%%", nc.cv*100), fmt.Sprintf("%g", o.Alpha), fmt.Sprintf("%g%%", o.MinChange),
				pct(anyCP, series), pct(gate, series)}
			for _, step := range []float64{2, 5, 10} {
				found, delays := 0, []int{}
				for s := 0; s < series; s++ {
					x := noisy(uint64(s)+5000, 30, 100, nc.cv)
					for i := 20; i < 30; i++ {
						x[i] *= 1 + step/100
					}
					for n := 21; n <= 30; n++ {
						if slices.ContainsFunc(nightly(x[:n], o).inGate(n, n, false), func(c Change) bool { return c.Index >= 18 && c.Index <= 22 }) {
							found++
							delays = append(delays, n-21)
							break
						}
					}
				}
				row = append(row, pct(found, series)+" / "+medianDelay(delays))
			}
			rows = append(rows, row)
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nchange points on synthetic nights (log-normal noise at each clock's run-to-run CV, %d series a row; step: found within 10 nights / median nights to find)\n", series)
	tw := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NOISE\tCV\tALPHA\tMIN CHANGE\tANY CHANGE IN 30 NOISE NIGHTS\tGATE FAILS (NIGHTS 10-30)\tSTEP 2%\tSTEP 5%\tSTEP 10%")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	fmt.Print(sb.String())
	b.ReportMetric(0, "ns/op")
}

func pct(k, n int) string { return fmt.Sprintf("%.1f%%", 100*float64(k)/float64(n)) }

func medianDelay(d []int) string {
	if len(d) == 0 {
		return "-"
	}
	slices.Sort(d)
	return fmt.Sprint(d[len(d)/2])
}

// nightly is x as a series of nights, one run of one repeat a night,
// its change points found as Build finds them.
func nightly(x []float64, o Options) *Series {
	s := &Series{}
	for i, v := range x {
		s.Points = append(s.Points, Point{Night: i, Median: v, Min: v, Max: v, N: 1})
	}
	s.detect(x, o)
	return s
}
