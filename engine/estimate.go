package engine

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"lab/plugins"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/matrix"
)

// Estimates are the experiments ("plugin/experiment") of the plugins'
// descriptions, for their cost: the rough wall time of one repeat at one
// point, from the experiment's cost model (plugins.Cost: a fixed part
// plus per-parameter terms, fitted from lab's own runs on its 2-core
// development host under TCG, FitCost) evaluated at the point's
// parameters, clock and profile, else its repeat_seconds whatever the
// parameters. They estimate plans, budgets and the matrix's order; they
// are never a measurement.
type Estimates map[string]*plugins.Experiment

// EstimatesOf are the estimates the descriptions declare.
func EstimatesOf(descs ...*plugins.Description) Estimates {
	e := Estimates{}
	for _, d := range descs {
		for i := range d.Experiments {
			e[d.Name+"/"+d.Experiments[i].Name] = &d.Experiments[i]
		}
	}
	return e
}

// cellOverhead is a throwaway VM's restore and plugin start, the time a
// cell takes beyond its points: the median over the fit's stored runs
// restored from a snapshot (CellOverheads of engine/testdata/costfit:
// 2.13 s of 19 on 2026-12-07).
const cellOverhead = 2100 * time.Millisecond

// unknownRepeat is the guess for an experiment that declares neither a
// cost model nor repeat_seconds.
const unknownRepeat = 30 * time.Second

// Repeat is the expected wall time of one repeat of plugin/experiment at
// a point with params (the parameters given; the others take their
// defaults) under clock on profile (either may be empty: not known).
func (e Estimates) Repeat(plugin, experiment string, params map[string]string, clock, profile string) time.Duration {
	x, ok := e[plugin+"/"+experiment]
	if !ok {
		return unknownRepeat
	}
	s, ok, err := x.RepeatCost(params, clock, profile)
	if err != nil || !ok {
		// A value the model cannot count (Validate checked the model,
		// not every value a user may give): the flat figure, if any.
		if x.RepeatSeconds <= 0 {
			return unknownRepeat
		}
		s = x.RepeatSeconds
	}
	return time.Duration(s * float64(time.Second))
}

// Run is how long run r is expected to take at repeat repeats (0:
// r.Repeat): each point's repeat time (Repeat at r.Params with the
// point's value) x repeats, plus a VM's overhead. A point is a value of
// r.SweepKey, or labels in results.FormatLabels form ("count=5
// mode=thread") when r has no sweep key.
func (e Estimates) Run(r rclaims.Run, repeat int) time.Duration {
	if repeat == 0 {
		repeat = r.Repeat
	}
	var per time.Duration
	for _, pt := range runPoints(r) {
		per += e.Repeat(r.Plugin, r.Experiment, pt, r.Clock, r.Profile)
	}
	return cellOverhead + time.Duration(repeat)*per
}

// runPoints are the parameters of each point of r (one, r.Params, when
// it has none).
func runPoints(r rclaims.Run) []map[string]string {
	if len(r.Points) == 0 {
		return []map[string]string{r.Params}
	}
	out := make([]map[string]string, len(r.Points))
	for i, pt := range r.Points {
		ps := maps.Clone(r.Params)
		if ps == nil {
			ps = map[string]string{}
		}
		if r.SweepKey != "" {
			ps[r.SweepKey] = pt
		} else {
			for _, kv := range strings.Fields(pt) {
				if k, v, ok := strings.Cut(kv, "="); ok {
					ps[k] = v
				}
			}
		}
		out[i] = ps
	}
	return out
}

// Cell is how long matrix cell c is expected to take: every point of its
// sweep's cross product, one repeat each when lab chooses the repeats.
func (e Estimates) Cell(c matrix.Cell) time.Duration {
	var axes []results.SweepAxis
	for _, k := range slices.Sorted(maps.Keys(c.Sweep)) {
		axes = append(axes, results.SweepAxis{Key: k, Values: c.Sweep[k]})
	}
	r := rclaims.Run{Plugin: c.Plugin, Experiment: c.Experiment, Profile: c.Profile, Clock: c.Clock, Params: c.Params}
	for _, pt := range results.SweepPoints(axes) {
		r.Points = append(r.Points, results.FormatLabels(pt))
	}
	return e.Run(r, max(c.Repeat, 1))
}

// FormatEstimate is an estimate in whole minutes ("about 3 min"), or
// seconds under a minute.
func FormatEstimate(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("about %d s", int(d.Round(time.Second)/time.Second))
	}
	return fmt.Sprintf("about %d min", int(d.Round(time.Minute)/time.Minute))
}

// CostObservation is one point of a stored run, what a cost model is
// fitted to: the point's parameters (the run's, the point's labels over
// them), its repeats and its wall time on the host, all repeats.
type CostObservation struct {
	Result     string
	Plugin     string
	Experiment string
	Profile    string
	Clock      string
	Params     map[string]string
	Repeats    int
	Seconds    float64
}

// PerRepeat is the observation's wall time of one repeat.
func (o CostObservation) PerRepeat() float64 { return o.Seconds / float64(max(o.Repeats, 1)) }

// CostObservations are the points of the stored runs rs that ran to
// their end (ok, or the crash expected): a sweep's points with their
// recorded wall time; a run without a sweep, its time from the plugin's
// start to the result (Finished - Started - the harness's open time).
func CostObservations(rs []*results.Result) []CostObservation {
	var out []CostObservation
	for _, r := range rs {
		done := func(status string) bool {
			return status == results.StatusOK || status == results.StatusExpectedCrash
		}
		base := CostObservation{Result: r.ID, Plugin: r.Plugin, Experiment: r.Experiment,
			Profile: results.ProfileName(r.Machine), Clock: r.Machine.Clock}
		params := maps.Clone(r.Parameters)
		delete(params, results.RepeatParam)
		if r.Sweep != nil {
			for _, pt := range r.Sweep.Points {
				if !done(pt.Status) || pt.Repeats < 1 || pt.Seconds <= 0 {
					continue
				}
				o := base
				o.Params = maps.Clone(params)
				maps.Copy(o.Params, pt.Labels)
				o.Repeats, o.Seconds = pt.Repeats, pt.Seconds
				out = append(out, o)
			}
			continue
		}
		if !done(r.Outcome.Status) {
			continue
		}
		secs := r.Finished.Sub(r.Started).Seconds()
		if r.Harness != nil {
			secs -= r.Harness.OpenSeconds
		}
		n, err := strconv.Atoi(r.Parameters[results.RepeatParam])
		if err != nil || n < 1 || secs <= 0 {
			continue
		}
		o := base
		o.Params, o.Repeats, o.Seconds = params, n, secs
		out = append(out, o)
	}
	return out
}

// RunSeconds is a stored run's wall time as a cell's: from the plan's
// start (booting or restoring its VM) to its result, the time an
// estimate (Estimates.Run) stands for, teardown aside.
func RunSeconds(r *results.Result) float64 {
	s := r.Finished.Sub(r.Started).Seconds()
	if h := r.Harness; h != nil {
		// Started is when the run held its VM; the harness's start
		// counts from the plan's start, its open time from the push.
		s += max(h.StartSeconds-h.OpenSeconds, 0)
	}
	return s
}

// CostFit is a cost model fitted to observations: the fixed part and
// each term's seconds (a term the fit made negative is dropped, at 0),
// the observations it rests on and the worst ratio between fitted and
// measured among them (1: exact).
type CostFit struct {
	Seconds  float64
	Terms    []plugins.CostTerm
	N        int
	Worst    float64
	WorstObs CostObservation
}

// FitCost fits the fixed part and the seconds of each term per (the
// parameters whose product it counts, as e's cost model counts them: its
// weights hold) to the per-repeat wall times of obs, by least squares on
// the relative error (each observation weighed by 1/time^2, so a
// 5-second point counts as much as a 500-second one). A term whose
// coefficient comes out negative is dropped and the rest refitted, until
// none is. It fails when there are fewer distinct points than
// coefficients, or a factor does not count.
func FitCost(e *plugins.Experiment, obs []CostObservation, per [][]string) (CostFit, error) {
	k := len(per) + 1
	xs := make([][]float64, len(obs))
	ys := make([]float64, len(obs))
	for i, o := range obs {
		row := []float64{1}
		for _, p := range per {
			f, err := e.CostFactor(p, o.Params)
			if err != nil {
				return CostFit{}, fmt.Errorf("result %s: %w", o.Result, err)
			}
			row = append(row, f)
		}
		xs[i], ys[i] = row, o.PerRepeat()
	}
	active := make([]bool, k)
	for i := range active {
		active[i] = true
	}
	var coef []float64
	for {
		var err error
		coef, err = weightedLeastSquares(xs, ys, active)
		if err != nil {
			return CostFit{}, fmt.Errorf("experiment %s: %d observation(s) for %d coefficient(s): %w", e.Name, len(obs), countTrue(active), err)
		}
		worst := -1
		for j, c := range coef {
			if active[j] && c < 0 && (worst < 0 || c < coef[worst]) {
				worst = j
			}
		}
		if worst < 0 {
			break
		}
		active[worst] = false
	}
	fit := CostFit{Seconds: coef[0], N: len(obs), Worst: 1}
	for j, p := range per {
		fit.Terms = append(fit.Terms, plugins.CostTerm{Per: slices.Clone(p), Seconds: coef[j+1]})
	}
	for i, o := range obs {
		var est float64
		for j, x := range xs[i] {
			est += coef[j] * x
		}
		r := math.Max(est/ys[i], ys[i]/est)
		if est <= 0 {
			r = math.Inf(1)
		}
		if r > fit.Worst {
			fit.Worst, fit.WorstObs = r, o
		}
	}
	return fit, nil
}

func countTrue(b []bool) int {
	n := 0
	for _, x := range b {
		if x {
			n++
		}
	}
	return n
}

// weightedLeastSquares solves min sum ((x_i . c - y_i) / y_i)^2 over the
// active coefficients (the others 0) by the normal equations, which at a
// handful of coefficients are well within float64.
func weightedLeastSquares(xs [][]float64, ys []float64, active []bool) ([]float64, error) {
	var idx []int
	for j, a := range active {
		if a {
			idx = append(idx, j)
		}
	}
	n := len(idx)
	// Each column scaled to at most 1, so a per-line factor of 1e5
	// and the fixed part's 1 pivot alike.
	scale := make([]float64, n)
	for r, j := range idx {
		for _, x := range xs {
			scale[r] = math.Max(scale[r], math.Abs(x[j]))
		}
		if scale[r] == 0 {
			return nil, fmt.Errorf("a term is 0 at every point (run sizes where it counts)")
		}
	}
	a := make([][]float64, n)
	for r := range a {
		a[r] = make([]float64, n+1)
	}
	for i, x := range xs {
		if ys[i] <= 0 {
			continue
		}
		w := 1 / (ys[i] * ys[i])
		for r, jr := range idx {
			for c, jc := range idx {
				a[r][c] += w * x[jr] / scale[r] * x[jc] / scale[c]
			}
			a[r][n] += w * x[jr] / scale[r] * ys[i]
		}
	}
	var trace float64
	for r := range a {
		trace += a[r][r]
	}
	// Gauss-Jordan with partial pivoting.
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-9*trace {
			return nil, fmt.Errorf("the points do not tell the coefficients apart (run more sizes)")
		}
		a[c], a[p] = a[p], a[c]
		for r := 0; r < n; r++ {
			if r == c {
				continue
			}
			f := a[r][c] / a[c][c]
			for cc := c; cc <= n; cc++ {
				a[r][cc] -= f * a[c][cc]
			}
		}
	}
	coef := make([]float64, len(active))
	for r, j := range idx {
		coef[j] = a[r][n] / a[r][r] / scale[r]
	}
	return coef, nil
}

// CaseFit is the fit of one part of an experiment's declared cost model
// (its own terms, Case 0, or Cases[Case-1]) to the observations it
// covers: the declared coefficients beside the fitted ones, or why it
// could not be fitted.
type CaseFit struct {
	Plugin, Experiment string
	Case               int
	Clock              string
	Profiles           []string
	DeclaredSeconds    float64
	Declared           []plugins.CostTerm
	Fit                CostFit
	Err                error
}

// Name is the part's name: "printfbench/targets" or
// "printfbench/targets [icount xeon5130-fb]".
func (f CaseFit) Name() string {
	n := f.Plugin + "/" + f.Experiment
	if f.Case == 0 {
		return n
	}
	var on []string
	if f.Clock != "" {
		on = append(on, f.Clock)
	}
	on = append(on, f.Profiles...)
	return n + " [" + strings.Join(on, " ") + "]"
}

// FitCosts fits every declared cost model of descs to the stored runs
// (FitCost of each part with its own terms): a case to the observations
// of its clock and profiles that no earlier case took, the model's own
// terms to the rest. A part with no observation is left out.
func FitCosts(descs []*plugins.Description, store []*results.Result) []CaseFit {
	all := CostObservations(store)
	var out []CaseFit
	for _, d := range descs {
		for i := range d.Experiments {
			e := &d.Experiments[i]
			if e.Cost == nil {
				continue
			}
			parts := make([][]CostObservation, len(e.Cost.Cases)+1)
			for _, o := range all {
				if o.Plugin != d.Name || o.Experiment != e.Name {
					continue
				}
				part := 0
				for j := range e.Cost.Cases {
					if e.Cost.Cases[j].Matches(o.Clock, o.Profile) {
						part = j + 1
						break
					}
				}
				parts[part] = append(parts[part], o)
			}
			for part, obs := range parts {
				if len(obs) == 0 {
					continue
				}
				f := CaseFit{Plugin: d.Name, Experiment: e.Name, Case: part, DeclaredSeconds: e.Cost.Seconds, Declared: e.Cost.Terms}
				if part > 0 {
					k := e.Cost.Cases[part-1]
					f.Clock, f.Profiles, f.DeclaredSeconds, f.Declared = k.Clock, k.Profiles, k.Seconds, k.Terms
				}
				per := make([][]string, len(f.Declared))
				for j, t := range f.Declared {
					per[j] = t.Per
				}
				f.Fit, f.Err = FitCost(e, obs, per)
				out = append(out, f)
			}
		}
	}
	return out
}

// EstimateCheck is a planned run beside a stored run of it: the estimate
// at the stored run's repeats and its measured wall time (RunSeconds);
// Result is "" when the store holds no run of it.
type EstimateCheck struct {
	Run      rclaims.Run
	Result   string
	Repeats  int
	Estimate time.Duration
	Measured time.Duration
}

// Ratio is the estimate over the measured time (0 when not measured).
func (c EstimateCheck) Ratio() float64 {
	if c.Measured <= 0 {
		return 0
	}
	return c.Estimate.Seconds() / c.Measured.Seconds()
}

// CheckEstimates puts each run of runs beside the latest stored run of
// exactly it (sameCell) that ran to its end: the estimate at that run's
// repeats against its wall time.
func CheckEstimates(est Estimates, runs []rclaims.Run, store []*results.Result) []EstimateCheck {
	out := make([]EstimateCheck, len(runs))
	for i, r := range runs {
		c := EstimateCheck{Run: r}
		var found *results.Result
		for _, res := range store {
			if sameCell(res, r, est) && (found == nil || res.Started.After(found.Started)) {
				found = res
			}
		}
		if found != nil {
			n, _ := strconv.Atoi(found.Parameters[results.RepeatParam])
			c.Result, c.Repeats = found.ID, n
			c.Estimate = est.Run(r, n)
			c.Measured = time.Duration(RunSeconds(found) * float64(time.Second))
		}
		out[i] = c
	}
	return out
}

// sameCell says whether res is a finished run of exactly r, as a cell
// runs it: its plugin, experiment, profile and clock, r's parameters and
// every other at its default, r's sweep points and no others, on a VM
// not booted cold.
func sameCell(res *results.Result, r rclaims.Run, est Estimates) bool {
	if res.Plugin != r.Plugin || res.Experiment != r.Experiment || results.ProfileName(res.Machine) != r.Profile ||
		res.Machine.Clock != r.Clock || res.Outcome.Status != results.StatusOK && res.Outcome.Status != results.StatusExpectedCrash {
		return false
	}
	if strings.HasPrefix(res.Machine.Boot, "cold") {
		return false // its time holds the boot that made the snapshot, which a cell does not
	}
	e := est[r.Plugin+"/"+r.Experiment]
	if e == nil {
		return false
	}
	for i := range e.Params {
		p := &e.Params[i]
		if p.Name == r.SweepKey {
			continue
		}
		want, ok := r.Params[p.Name]
		if !ok {
			want = p.Default
		}
		canon := func(v string) string {
			if c, err := p.Check(v); err == nil {
				return c
			}
			return v
		}
		if got, ok := res.Parameters[p.Name]; ok && canon(got) != canon(want) {
			return false
		}
	}
	if r.SweepKey == "" {
		return res.Sweep == nil
	}
	if res.Sweep == nil || len(res.Sweep.Axes) != 1 || res.Sweep.Axes[0].Key != r.SweepKey {
		return false
	}
	got := slices.Clone(res.Sweep.Axes[0].Values)
	want := slices.Clone(r.Points)
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(got, want)
}

// CellOverheads are, of the stored swept runs whose VM was restored from
// a booted snapshot, each run's wall time (RunSeconds) beyond its points'
// recorded times: what a cell costs besides its points.
func CellOverheads(store []*results.Result) []float64 {
	var out []float64
	for _, r := range store {
		if r.Sweep == nil || !strings.HasPrefix(r.Machine.Boot, "restored") {
			continue
		}
		s := RunSeconds(r)
		for _, pt := range r.Sweep.Points {
			s -= pt.Seconds
		}
		out = append(out, s)
	}
	return out
}
