package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"lab/results"
	"lab/results/compare"
)

// WriteProfiles prints the comparison of runs on several profiles as a
// table: per series the median on each, and the speed-up (or ratio) over
// the first with its p-value.
func WriteProfiles(w io.Writer, c *compare.Profiles) error {
	fmt.Fprintf(w, "\ncomparison of %s (speed-up: median time on %s / median time on the other; above 1 = faster than %s; r: ratio other / %s for quantities that are not times; p: Mann-Whitney U that the two differ)\n",
		strings.Join(c.Profiles, ", "), c.Baseline, c.Baseline, c.Baseline)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	head := []string{"metric", "labels", "unit"}
	head = append(head, c.Profiles...)
	for _, p := range c.Profiles[1:] {
		head = append(head, "speed-up "+p, "p")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range c.Rows {
		cells := []string{r.Metric, results.LabelCell(r.Labels), r.Unit}
		for _, p := range c.Profiles {
			if m, ok := r.Medians[p]; ok {
				cells = append(cells, results.FormatValue(m))
			} else {
				cells = append(cells, "-")
			}
		}
		for _, p := range c.Profiles[1:] {
			switch {
			case r.Speedup != nil && r.Speedup[p] != 0:
				cells = append(cells, results.FormatValue(r.Speedup[p])+"x")
			case r.Ratio != nil && r.Ratio[p] != 0:
				cells = append(cells, "r "+results.FormatValue(r.Ratio[p]))
			default:
				cells = append(cells, "-")
			}
			if pv, ok := r.P[p]; ok {
				cells = append(cells, fmt.Sprintf("%.3g", pv))
			} else {
				cells = append(cells, "-")
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range c.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
	return nil
}
