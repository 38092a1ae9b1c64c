package matrix

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"lab/results"
	"lab/results/render"
)

// WriteCells lists cells and the lab run each is (`lab matrix
// --dry-run`): all is the number in the whole matrix, shard the one
// listed.
func WriteCells(w io.Writer, cells []Cell, all int, shard Shard) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tCOMMAND")
	for _, c := range cells {
		fmt.Fprintf(tw, "%s\tlab %s\n", c.ID, strings.Join(c.Args(), " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d of %d cells (shard %s)\n", len(cells), all, shard)
	return nil
}

// WriteState lists the cells of s a line each: status, time, attempts,
// result and its claims' verdicts (runs are the results by ID).
func WriteState(w io.Writer, s *State, runs map[string]*results.Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tSTATUS\tSECONDS\tATTEMPTS\tRESULT\tCLAIMS")
	for _, c := range s.Cells {
		claims := "-"
		if r := runs[c.Result]; r != nil {
			claims = render.VerdictCounts(r)
		}
		result := c.Result
		if result == "" {
			result = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%d\t%s\t%s\n", c.ID, c.Status, c.Seconds, c.Attempts, result, claims)
	}
	return tw.Flush()
}
