package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"lab/results"
	"lab/results/claims"
)

// WriteClaim writes claim status s for people: the claim's statement,
// source, machine, plugin, kind, the rule that decides it and its
// verdict, then every run that decided it, newest first (or the command
// that would).
func WriteClaim(w io.Writer, s claims.ClaimStatus) {
	c := s.Claim
	fmt.Fprintf(w, "%s: %s\n\n", c.ID, c.Statement)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	machine := c.Machine
	if c.Profile != "" {
		machine += " (profile " + c.Profile + ")"
	}
	rows := [][2]string{{"source", c.Source}, {"machine", machine}, {"plugin", c.Plugin + ", experiment " + c.Bench},
		{"kind", c.Kind}, {"decided", s.Rule}}
	if c.Rationale != "" {
		rows = append(rows, [2]string{"rationale", c.Rationale})
	}
	if len(c.ScopeParams()) > 0 {
		rows = append(rows, [2]string{"only runs with", results.FormatLabels(c.ScopeParams())})
	}
	rows = append(rows, [2]string{"verdict", s.Verdict})
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", r[0], r[1])
	}
	tw.Flush()
	fmt.Fprintln(w)
	if len(s.Runs) == 0 {
		fmt.Fprintf(w, "no stored run decided it: `lab run %s -e %s` (see `lab claims show %s` after)\n", c.Plugin, c.Bench, c.ID)
		return
	}
	fmt.Fprintln(w, "runs that decided it, newest first:")
	for _, r := range s.Runs {
		fmt.Fprintf(w, "  %s  %s  (%s, %s, clock %s)\n", r.Verdict.Verdict, r.Run, r.Profile, r.Accelerator, r.Clock)
		fmt.Fprintf(w, "      %s\n", r.Verdict.Reason)
		if r.Verdict.Note != "" {
			fmt.Fprintf(w, "      note: %s\n", r.Verdict.Note)
		}
		if len(r.Verdict.Runs) > 1 {
			fmt.Fprintf(w, "      runs: %s\n", strings.Join(r.Verdict.Runs, ", "))
		}
	}
}
