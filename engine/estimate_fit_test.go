package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"

	"lab/plugins"
	"lab/plugins/host"
	"lab/results"
	rclaims "lab/results/claims"
)

// The stored runs the cost models are fitted to (testdata/costfit) and
// the cells of lab reproduce all they are checked against
// (testdata/costcheck): lab's own runs on its 2-core development host
// (docs/measurements.md, "Estimates from parameters"), each kept as lab
// saved it but for its samples, summaries, comparisons and verdicts,
// which no estimate reads.
const (
	costFitStore   = "testdata/costfit"
	costCheckStore = "testdata/costcheck"
)

// sourceDescriptions are the plugins' description.json of this tree.
func sourceDescriptions(t testing.TB) []*plugins.Description {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "plugins", "*", "description.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no plugin descriptions: %v", err)
	}
	var out []*plugins.Description
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d, err := plugins.ParseDescription(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, d)
	}
	return out
}

// loadStores are the runs stored in dirs.
func loadStores(t testing.TB, dirs ...string) []*results.Result {
	t.Helper()
	var out []*results.Result
	for _, dir := range dirs {
		rs, errs := results.LoadAll(dir)
		for _, err := range errs {
			t.Errorf("%s: %v", dir, err)
		}
		out = append(out, rs...)
	}
	return out
}

// reproduceAllRuns are lab reproduce all's runs (without --variants).
func reproduceAllRuns(descs []*plugins.Description) []rclaims.Run {
	var claims []results.Claim
	for _, d := range descs {
		claims = append(claims, host.AllClaims(d)...)
	}
	rclaims.Sort(claims)
	runs, _ := rclaims.Plan(claims, nil)
	return runs
}

// TestDeclaredCostsAreFitted: every cost model the plugins declare is
// the least-squares fit of the stored runs (FitCosts over
// testdata/costfit), its coefficients rounded to 3 significant digits.
// After new runs: fit again (make bench prints the fit), and put the
// new coefficients and the runs in description.json and
// docs/measurements.md.
func TestDeclaredCostsAreFitted(t *testing.T) {
	descs := sourceDescriptions(t)
	fits := FitCosts(descs, loadStores(t, costFitStore))
	fitted := map[string]bool{}
	for _, f := range fits {
		fitted[f.Name()] = true
		if f.Err != nil {
			t.Errorf("%s: %v", f.Name(), f.Err)
			continue
		}
		check := func(what string, declared, fit float64) {
			if math.Abs(declared-fit) > 0.005*math.Abs(fit)+1e-9 {
				t.Errorf("%s: %s: declared %.3g, fitted %.3g", f.Name(), what, declared, fit)
			}
		}
		check("seconds", f.DeclaredSeconds, f.Fit.Seconds)
		for i, term := range f.Declared {
			check("per "+strings.Join(term.Per, " x "), term.Seconds, f.Fit.Terms[i].Seconds)
		}
	}
	// Every part of every model rests on runs.
	for _, d := range descs {
		for i := range d.Experiments {
			e := &d.Experiments[i]
			if e.Cost == nil {
				continue
			}
			f := CaseFit{Plugin: d.Name, Experiment: e.Name}
			if !fitted[f.Name()] {
				t.Errorf("%s declares a cost model that no stored run fits", f.Name())
			}
			for j, k := range e.Cost.Cases {
				f := CaseFit{Plugin: d.Name, Experiment: e.Name, Case: j + 1, Clock: k.Clock, Profiles: k.Profiles}
				if !fitted[f.Name()] {
					t.Errorf("%s declares a case that no stored run fits", f.Name())
				}
			}
		}
	}
}

// TestCellOverheadIsMeasured: cellOverhead is the median overhead of
// the fit's restored runs, within 0.1 s.
func TestCellOverheadIsMeasured(t *testing.T) {
	ov := CellOverheads(loadStores(t, costFitStore))
	if len(ov) < 5 {
		t.Fatalf("%d restored swept runs in %s; want 5 or more", len(ov), costFitStore)
	}
	slices.Sort(ov)
	med := ov[len(ov)/2]
	if len(ov)%2 == 0 {
		med = (ov[len(ov)/2-1] + ov[len(ov)/2]) / 2
	}
	if math.Abs(cellOverhead.Seconds()-med) > 0.1 {
		t.Errorf("cellOverhead %v; the median of %d restored runs is %.2f s", cellOverhead, len(ov), med)
	}
}

// TestEstimatesOfStoredCells: each cell of lab reproduce all stored in
// testdata/costcheck is estimated within 2x of its measured time, and
// all but the three docs/measurements.md names (two host-clock cells on
// two vCPUs, one at 0.665) within 1.5x.
func TestEstimatesOfStoredCells(t *testing.T) {
	descs := sourceDescriptions(t)
	checks := CheckEstimates(EstimatesOf(descs...), reproduceAllRuns(descs), loadStores(t, costCheckStore))
	n, outside := 0, 0
	for _, c := range checks {
		if c.Result == "" {
			continue
		}
		n++
		q := c.Ratio()
		if q < 1/1.5 || q > 1.5 {
			outside++
		}
		if q < 0.5 || q > 2 {
			t.Errorf("%s: estimated %v, measured %v (%.2f)", c.Run.Key(), c.Estimate, c.Measured, q)
		}
	}
	// 35: E5.1b's cell runs designs 1 to 5 since 2026-12-07, and its one
	// run so far booted cold (the stored cell of all nine designs is
	// another cell now).
	if n < 35 || outside > 3 {
		t.Errorf("%d stored cells, %d outside 1.5x; want 35 or more, at most 3", n, outside)
	}
}

// BenchmarkEstimates prints the cost models fitted again from the
// stored runs beside the declared ones, then per cell of lab reproduce
// all its estimate against its measured wall time (the stored runs of
// testdata/costcheck, and of the stores LAB_ESTIMATE_RESULTS names,
// separated by colons) and their ratio; a cell with no stored run is
// "not run here".
func BenchmarkEstimates(b *testing.B) {
	descs := sourceDescriptions(b)
	fits := FitCosts(descs, loadStores(b, costFitStore))
	dirs := []string{costCheckStore}
	if extra := os.Getenv("LAB_ESTIMATE_RESULTS"); extra != "" {
		dirs = append(dirs, strings.Split(extra, ":")...)
	}
	ests := EstimatesOf(descs...)
	checks := CheckEstimates(ests, reproduceAllRuns(descs), loadStores(b, dirs...))
	for range b.N {
	}
	if path := os.Getenv("LAB_ESTIMATE_FIT_JSON"); path != "" {
		writeFits(b, path, descs, fits)
	}
	w := tabwriter.NewWriter(os.Stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(w, "\ncost model\tpoints\tterm\tdeclared s\tfitted s\tworst fit/measured")
	for _, f := range fits {
		if f.Err != nil {
			fmt.Fprintf(w, "%s\t\t\t\t%v\t\n", f.Name(), f.Err)
			continue
		}
		at := map[string]string{}
		for _, t := range f.Declared {
			for _, p := range t.Per {
				at[p] = f.Fit.WorstObs.Params[p]
			}
		}
		fmt.Fprintf(w, "%s\t%d\tfixed\t%.3g\t%.3g\t%.2f (%s)\n", f.Name(), f.Fit.N, f.DeclaredSeconds, f.Fit.Seconds, f.Fit.Worst, results.FormatLabels(at))
		for i, t := range f.Declared {
			fmt.Fprintf(w, "\t\tper %s\t%.3g\t%.3g\t\n", strings.Join(t.Per, " x "), t.Seconds, f.Fit.Terms[i].Seconds)
		}
	}
	w.Flush()
	w = tabwriter.NewWriter(os.Stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(w, "\ncell\tclock\trepeats\testimate\tmeasured\testimate/measured")
	checked, within := 0, 0
	for _, c := range checks {
		r := c.Run
		cell := r.Profile + " " + r.Plugin + "/" + r.Experiment + " " + results.FormatLabels(r.Params)
		if r.SweepKey != "" {
			cell += " " + r.SweepKey + "=" + strings.Join(r.Points, ",")
		}
		if c.Result == "" {
			fmt.Fprintf(w, "%s\t%s\t%d\t%.0f s\tnot run here\t\n", cell, r.Clock, r.Repeat, ests.Run(r, 0).Seconds())
			continue
		}
		checked++
		mark := ""
		if q := c.Ratio(); q >= 1/1.5 && q <= 1.5 {
			within++
		} else {
			mark = "  outside 1.5x"
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%.0f s\t%.0f s\t%.2f%s\n", cell, r.Clock, c.Repeats, c.Estimate.Seconds(), c.Measured.Seconds(), c.Ratio(), mark)
	}
	w.Flush()
	fmt.Printf("%d of %d cells run here, %d of them estimated within 1.5x\n", checked, len(checks), within)
}

// writeFits writes the fitted models to path as JSON, by
// "plugin/experiment", each the declared model with its coefficients
// replaced by the fit's (3 significant digits): what description.json's
// "cost" should say after new runs.
func writeFits(t testing.TB, path string, descs []*plugins.Description, fits []CaseFit) {
	t.Helper()
	round := func(x float64) float64 {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 3, 64), 64)
		return v
	}
	out := map[string]*plugins.Cost{}
	for _, d := range descs {
		for i := range d.Experiments {
			if c := d.Experiments[i].Cost; c != nil {
				cp := *c
				cp.Terms = slices.Clone(c.Terms)
				cp.Cases = slices.Clone(c.Cases)
				for j := range cp.Cases {
					cp.Cases[j].Terms = slices.Clone(c.Cases[j].Terms)
				}
				out[d.Name+"/"+d.Experiments[i].Name] = &cp
			}
		}
	}
	for _, f := range fits {
		if f.Err != nil {
			continue
		}
		c := out[f.Plugin+"/"+f.Experiment]
		secs, terms := &c.Seconds, c.Terms
		if f.Case > 0 {
			secs, terms = &c.Cases[f.Case-1].Seconds, c.Cases[f.Case-1].Terms
		}
		*secs = round(f.Fit.Seconds)
		for j := range terms {
			terms[j].Seconds = round(f.Fit.Terms[j].Seconds)
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
