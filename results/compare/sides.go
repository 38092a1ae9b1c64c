package compare

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"lab/results"
)

// SideOf reads one side from what the user typed: a filter (it has '='
// and is not a result file's path) picking runs of the store dir, whose
// samples are pooled, or one run (results.LoadRef). skipped are the
// result files that did not load, for the caller to name.
func SideOf(dir, arg string, now time.Time) (s Side, skipped []error, err error) {
	if strings.Contains(arg, "=") && !strings.HasSuffix(arg, ".json") {
		f, err := results.ParseFilter(arg, now)
		if err != nil {
			return Side{}, nil, err
		}
		runs, skipped := results.Select(dir, f)
		if len(runs) == 0 {
			return Side{}, skipped, fmt.Errorf("filter %s picks no run in %s; see `lab results`", arg, dir)
		}
		return Side{Name: arg, Runs: runs}, skipped, nil
	}
	r, skipped, err := results.LoadRef(dir, arg)
	if err != nil {
		return Side{}, skipped, err
	}
	if r.Outcome.Status == results.StatusFailed && len(r.Samples) == 0 {
		return Side{}, skipped, errors.New("run " + r.ID + " failed before measuring anything: " + r.Outcome.Reason)
	}
	return Side{Name: r.ID, Runs: []*results.Result{r}}, skipped, nil
}

// Report is two sides compared (`lab compare --json`).
type Report struct {
	A           ReportSide `json:"a"`
	B           ReportSide `json:"b"`
	Changes     []Change   `json:"changes"`
	Regressions []Change   `json:"regressions,omitempty"`
}

// ReportSide names a side and its runs.
type ReportSide struct {
	Name string   `json:"name"`
	Runs []string `json:"runs"`
}

func reportSide(s Side) ReportSide {
	out := ReportSide{Name: s.Name, Runs: []string{}}
	for _, r := range s.Runs {
		out.Runs = append(out.Runs, r.ID)
	}
	return out
}

// Sides compares b against a (CompareSides): runs that measure different
// things are refused unless force (CheckComparable), and so are sides
// that share no series. With pct >= 0, Regressions are the changes worse
// by more than pct percent.
func Sides(a, b Side, force bool, pct float64) (*Report, error) {
	if !force {
		if err := CheckComparable(a, b); err != nil {
			return nil, err
		}
	}
	changes := CompareSides(a, b)
	if len(changes) == 0 {
		return nil, fmt.Errorf("%s and %s have no samples to compare", a.Name, b.Name)
	}
	common := 0
	for _, ch := range changes {
		if ch.Only == "" {
			common++
		}
	}
	if common == 0 {
		return nil, fmt.Errorf("%s and %s share no metric (are they runs of the same experiment?); nothing to compare", a.Name, b.Name)
	}
	rep := &Report{A: reportSide(a), B: reportSide(b), Changes: changes}
	if pct >= 0 {
		rep.Regressions = Regressions(changes, pct)
	}
	return rep, nil
}

// Summaries are the changes cs a line each (Summary).
func Summaries(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Summary())
	}
	return out
}

// Summary is the change in a line: "forktime {n=50} +7.2%".
func (c Change) Summary() string {
	return fmt.Sprintf("%s %+.1f%%", results.SeriesBraced(c.Metric, c.Labels), c.Percent)
}
