package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"lab/results"
)

// WriteRuns lists runs a line each (`lab results`): ID, start, profile,
// plugin and experiment, outcome, repeats, clock and the claims'
// verdicts.
func WriteRuns(w io.Writer, runs []*results.Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tPROFILE\tPLUGIN/EXPERIMENT\tOUTCOME\tREPEATS\tCLOCK\tCLAIMS")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s/%s\t%s\t%d\t%s\t%s\n", r.ID, r.Started.Local().Format("2006-01-02 15:04"),
			orDashText(results.ProfileName(r.Machine)), r.Plugin, r.Experiment, orDashText(r.Outcome.Status), repeats(r),
			orDashText(r.Machine.Clock), VerdictCounts(r))
	}
	return tw.Flush()
}

// repeats is how many repeats a run's samples span.
func repeats(r *results.Result) int {
	n := 0
	for _, s := range r.Samples {
		n = max(n, s.Repeat+1)
	}
	return n
}

// VerdictCounts is "2 reproduced, 1 inconclusive", "-" without claims.
func VerdictCounts(r *results.Result) string {
	order := results.VerdictOrder
	n := map[string]int{}
	for _, v := range r.Verdicts {
		n[v.Verdict]++
	}
	var parts []string
	for _, k := range order {
		if n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
