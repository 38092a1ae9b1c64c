package history

import (
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/compare"
	"lab/results/stats"
)

// Night is one night of a history: the runs of one directory, or of one
// UTC date of a single store.
type Night struct {
	Name string `json:"name"`
	// Dir is where its runs were read from.
	Dir string `json:"dir"`
	// Start is when its first run started.
	Start time.Time `json:"start"`
	Runs  int       `json:"runs"`
	runs  []*results.Result
}

// Point is one night of a series: the median of the night's samples
// (every run of the cell that night, pooled) and their range.
type Point struct {
	Night  int     `json:"night"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// Change is a change point of a series: the night its new level began.
type Change struct {
	ChangePoint
	Night int `json:"night"`
	// Worse: the change is the worse way (up for times, down for rates).
	Worse bool `json:"worse"`
}

// Series is one metric (and label set) of one cell across the nights.
type Series struct {
	// Cell is the matrix's cell: profile/plugin/experiment/params (clock).
	Cell           string            `json:"cell"`
	Metric         string            `json:"metric"`
	Unit           string            `json:"unit"`
	Labels         map[string]string `json:"labels,omitempty"`
	HigherIsBetter bool              `json:"higher_is_better"`
	Points         []Point           `json:"points"`
	Changes        []Change          `json:"changes"`
	// Noise is how much the nights' medians vary around their levels
	// (between change points), in percent; RepeatNoise how much a
	// night's samples vary around their night's mean (pooled over the
	// nights), in percent. Unstable when either is more than half the
	// smallest change asked for: a gate does not fail on it.
	Noise       float64 `json:"noise_pct"`
	RepeatNoise float64 `json:"repeat_noise_pct"`
	Unstable    bool    `json:"unstable"`
	// TickSampled: the metric counts timer ticks (a night's run says
	// so): its changes are shown, and no gate fails on them.
	TickSampled bool `json:"tick_sampled,omitempty"`
}

// gated says whether a gate fails on the series' change c: never on a
// tick-sampled metric; on an unstable series only when c lies far
// outside its noise, SingleNightZ times the larger of the nights' and
// the repeats' (a doubling on a series whose repeats vary 5% under load
// is no noise).
func (s *Series) gated(c ChangePoint) bool {
	if s.TickSampled {
		return false
	}
	return !s.Unstable || math.Abs(c.Change) >= SingleNightZ*math.Max(s.Noise, s.RepeatNoise)
}

// detect finds the series' change points from its nights' medians med
// (one a point), with its RepeatNoise set, and says how noisy it is:
// Noise, Unstable.
func (s *Series) detect(med []float64, o Options) {
	od := o
	if n := medianRepeats(s.Points); n > 0 {
		od.MedianNoise = s.RepeatNoise / math.Sqrt(n)
	}
	cps := Detect(med, od)
	s.Changes = []Change{}
	for _, c := range cps {
		s.Changes = append(s.Changes, Change{ChangePoint: c, Night: s.Points[c.Index].Night, Worse: Worse(c, s.HigherIsBetter)})
	}
	s.Noise = Noise(med, cps)
	s.Unstable = len(med) >= 3 && (Unstable(s.Noise, o) || Unstable(s.RepeatNoise, o))
}

// inGate are the series' changes the worse way that began in the last
// `last` of n nights and that a gate fails on (gated), or with ungated
// those it shows and does not fail on: the gate's one rule
// (History.Alarms, and BenchmarkChangePointNoise measures it).
func (s *Series) inGate(n, last int, ungated bool) []Change {
	var out []Change
	for _, c := range s.Changes {
		if s.gated(c.ChangePoint) != ungated && c.Worse && c.Night >= n-last {
			out = append(out, c)
		}
	}
	return out
}

// Name is the series' metric with its labels: "real_s {mode=thread}".
func (s *Series) Name() string { return results.SeriesBraced(s.Metric, s.Labels) }

// Flip is a claim's verdict changing from one night with a verdict to
// the next.
type Flip struct {
	Night int    `json:"night"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// ClaimHistory is a claim's verdict each night ("not run" where no run
// of the night is in its scope) and its flips.
type ClaimHistory struct {
	ID        string   `json:"id"`
	Statement string   `json:"statement"`
	Verdicts  []string `json:"verdicts"`
	Flips     []Flip   `json:"flips"`
}

// Tested says whether some night's runs tested the claim: gave it a
// verdict other than not run or untestable here.
func (c ClaimHistory) Tested() bool {
	for _, v := range c.Verdicts {
		if v != results.NotRun && v != results.Untestable {
			return true
		}
	}
	return false
}

// History is a series of nights read as series.
type History struct {
	Nights  []Night        `json:"nights"`
	Options Options        `json:"options"`
	Series  []Series       `json:"series"`
	Claims  []ClaimHistory `json:"claims"`
}

// Alarm is a change point a gate fails on.
type Alarm struct {
	Cell   string `json:"cell"`
	Series string `json:"series"`
	Night  string `json:"night"`
	Change Change `json:"change"`
	// Ungated says why no gate fails on it ("unstable", "tick-sampled");
	// empty for an alarm.
	Ungated string `json:"ungated,omitempty"`
}

func (a Alarm) String() string {
	return fmt.Sprintf("%s: %s %+.1f%% from %s", a.Cell, a.Series, a.Change.Change, a.Night)
}

// LoadNights reads the nights of dirs: result stores or lab matrix
// output directories (their results/), one a night, ordered by their
// first run's start. A single directory is a directory of nights (its
// subdirectories that are stores or matrix outputs, when it holds no
// result itself), or else a store split by the UTC date its runs
// started. skipped are the result files that did not load.
func LoadNights(dirs []string) (nights []Night, skipped []error, err error) {
	if len(dirs) == 0 {
		return nil, nil, fmt.Errorf("no nights given: name result stores or lab matrix output directories, one a night (or one store whose runs span nights)")
	}
	if len(dirs) == 1 {
		if sub := nightsUnder(dirs[0]); len(sub) > 0 {
			dirs = sub
		}
	}
	seen := map[string]string{}
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() {
			return nil, skipped, fmt.Errorf("night %s is not a directory: give result stores or lab matrix output directories, one a night", d)
		}
		store := results.StoreIn(d)
		abs, _ := filepath.Abs(store)
		if prev, ok := seen[abs]; ok {
			return nil, skipped, fmt.Errorf("%s and %s are the same night (%s): name each night once", prev, d, store)
		}
		seen[abs] = d
		runs, bad := results.LoadAll(store)
		skipped = append(skipped, bad...)
		if len(runs) == 0 {
			return nil, skipped, fmt.Errorf("night %s holds no runs (looked in %s)", d, store)
		}
		if len(dirs) == 1 {
			return byDate(store, runs), skipped, nil
		}
		nights = append(nights, newNight(strings.TrimSuffix(filepath.Clean(d), string(filepath.Separator)+"results"), store, runs))
	}
	// A night is named by its directory's base name, unless two share
	// one: then by the path as given.
	base := map[string]int{}
	for _, n := range nights {
		base[filepath.Base(n.Name)]++
	}
	if len(base) == len(nights) {
		for i := range nights {
			nights[i].Name = filepath.Base(nights[i].Name)
		}
	}
	slices.SortStableFunc(nights, func(a, b Night) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return nights, skipped, nil
}

// nightsUnder are the nights of a directory of nights: when dir holds
// no result of its own (nor a results/), its subdirectories that are
// result stores or matrix outputs, in name order.
func nightsUnder(dir string) []string {
	if results.StoreIn(dir) != dir {
		return nil
	}
	if paths, err := results.List(dir); err != nil || len(paths) > 0 {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if paths, err := results.List(results.StoreIn(sub)); err == nil && len(paths) > 0 {
			out = append(out, sub)
		}
	}
	return out
}

func newNight(name, dir string, runs []*results.Result) Night {
	n := Night{Name: name, Dir: dir, Runs: len(runs), runs: runs}
	for _, r := range runs {
		if n.Start.IsZero() || r.Started.Before(n.Start) {
			n.Start = r.Started
		}
	}
	return n
}

// byDate splits one store's runs by the UTC date they started.
func byDate(dir string, runs []*results.Result) []Night {
	by := map[string][]*results.Result{}
	for _, r := range runs {
		d := r.Started.UTC().Format("2006-01-02")
		by[d] = append(by[d], r)
	}
	var out []Night
	for _, d := range slices.Sorted(maps.Keys(by)) {
		out = append(out, newNight(d, dir, by[d]))
	}
	return out
}

// repeatNoise is how much each night's samples vary around that night's
// mean, pooled over the nights (pooledCV), in night order: the same sums
// whatever the map's order.
func repeatNoise(nights map[int][]float64) float64 {
	var groups [][]float64
	for _, i := range slices.Sorted(maps.Keys(nights)) {
		groups = append(groups, nights[i])
	}
	return pooledCV(groups)
}

// Judge gives the claims' verdicts from one night's runs.
type Judge func(runs []*results.Result) []rclaims.ClaimStatus

// Build reads nights as series: per cell and series each night's median,
// the change points (Detect with o) and whether the series is unstable;
// per claim (when judge is not nil) each night's verdict and its flips.
// The series are ordered by cell, then metric and labels; the same
// nights give the same history whatever order their runs are in.
func Build(nights []Night, o Options, judge Judge) *History {
	h := &History{Nights: nights, Options: o, Series: []Series{}, Claims: []ClaimHistory{}}
	type key struct{ cell, series string }
	vals := map[key]map[int][]float64{}
	proto := map[key]Series{}
	ticked := map[key]bool{}
	for i, n := range nights {
		for _, r := range n.runs {
			cell := results.CellKey(r)
			for _, x := range r.Samples {
				k := key{cell, results.SeriesKey(x.Metric, x.Unit, x.Labels)}
				if vals[k] == nil {
					vals[k] = map[int][]float64{}
					proto[k] = Series{Cell: cell, Metric: x.Metric, Unit: x.Unit, Labels: results.CloneLabels(x.Labels),
						HigherIsBetter: compare.HigherIsBetter(x.Metric, x.Unit)}
				}
				vals[k][i] = append(vals[k][i], x.Value)
				if slices.Contains(r.TickSampled, x.Metric) {
					ticked[k] = true
				}
			}
		}
	}
	keys := slices.SortedFunc(maps.Keys(vals), func(a, b key) int {
		if c := strings.Compare(a.cell, b.cell); c != 0 {
			return c
		}
		return results.NaturalCompare(a.series, b.series) // count=5 before count=500
	})
	for _, k := range keys {
		s := proto[k]
		var med []float64
		for i := range nights {
			v, ok := vals[k][i]
			if !ok {
				continue
			}
			p := Point{Night: i, Median: stats.Median(v), Min: slices.Min(v), Max: slices.Max(v), N: len(v)}
			s.Points = append(s.Points, p)
			med = append(med, p.Median)
		}
		// A single night off is held against the noise of a night's
		// median from its own repeats too: quantised values (CPU times
		// sampled at the timer tick) can repeat night after night and
		// make a spread of 0.
		s.RepeatNoise = repeatNoise(vals[k])
		s.detect(med, o)
		s.TickSampled = ticked[k]
		h.Series = append(h.Series, s)
	}
	if judge != nil {
		h.Claims = claimHistories(nights, judge)
	}
	return h
}

func claimHistories(nights []Night, judge Judge) []ClaimHistory {
	var out []ClaimHistory
	index := map[string]int{}
	for i, n := range nights {
		for _, st := range judge(n.runs) {
			j, ok := index[st.Claim.ID]
			if !ok {
				j = len(out)
				index[st.Claim.ID] = j
				c := ClaimHistory{ID: st.Claim.ID, Statement: st.Claim.Statement, Verdicts: make([]string, len(nights)), Flips: []Flip{}}
				for k := range c.Verdicts {
					c.Verdicts[k] = results.NotRun
				}
				out = append(out, c)
			}
			if st.Verdict != "" {
				out[j].Verdicts[i] = st.Verdict
			}
		}
	}
	for j := range out {
		last := -1
		for i, v := range out[j].Verdicts {
			if v == results.NotRun {
				continue
			}
			if last >= 0 && out[j].Verdicts[last] != v {
				out[j].Flips = append(out[j].Flips, Flip{Night: i, From: out[j].Verdicts[last], To: v})
			}
			last = i
		}
	}
	return out
}

// Alarms are the change points a gate over the last `last` nights fails
// on: a change whose new level began in one of them, the worse way, of a
// series that is not unstable. (Every change point is significant and at
// least Options.MinChange by construction.)
func (h *History) Alarms(last int) []Alarm { return h.inGate(last, false) }

// Ungated are the change points the worse way in the last `last` nights
// of unstable or tick-sampled series: shown, but no gate fails on them.
func (h *History) Ungated(last int) []Alarm { return h.inGate(last, true) }

// inGate are the worse changes that began in the last `last` nights, of
// the series that are gated or not as asked.
func (h *History) inGate(last int, ungated bool) []Alarm {
	var out []Alarm
	for _, s := range h.Series {
		for _, c := range s.inGate(len(h.Nights), last, ungated) {
			a := Alarm{Cell: s.Cell, Series: s.Name(), Night: h.Nights[c.Night].Name, Change: c}
			if ungated {
				a.Ungated = "the series is unstable"
				if s.TickSampled {
					a.Ungated = "the metric is tick-sampled"
				}
			}
			out = append(out, a)
		}
	}
	return out
}

// Changed are the series with at least one change point.
func (h *History) Changed() []Series {
	var out []Series
	for _, s := range h.Series {
		if len(s.Changes) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// medianRepeats is the median number of samples a night of the series
// holds.
func medianRepeats(ps []Point) float64 {
	var ns []float64
	for _, p := range ps {
		ns = append(ns, float64(p.N))
	}
	if len(ns) == 0 {
		return 0
	}
	return stats.Median(ns)
}
