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
// source, machine, plugin, kind, the rule that decides it, its verdict
// and why, then each stratum that decided it and the stored runs out of
// its scope (or the command that would decide it).
func WriteClaim(w io.Writer, s claims.ClaimStatus) {
	c, v := s.Claim, s.Judged
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
	if v.Reason != "" {
		rows = append(rows, [2]string{"why", v.Reason})
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", r[0], r[1])
	}
	tw.Flush()
	fmt.Fprintln(w)
	if len(v.Runs) == 0 {
		fmt.Fprintf(w, "no stored run decided it: `lab run %s -e %s` (see `lab claims show %s` after)\n", c.Plugin, c.Bench, c.ID)
	} else {
		fmt.Fprintln(w, "decided in each stratum (profile, clock, accelerator):")
		for _, st := range v.Strata {
			fmt.Fprintf(w, "  %s  %s, clock %s, %s\n", st.Verdict, st.Profile, results.OrUnknown(st.Clock), results.OrUnknown(st.Accelerator))
			fmt.Fprintf(w, "      %s\n", st.Reason)
			fmt.Fprintf(w, "      runs: %s\n", strings.Join(st.Runs, ", "))
		}
	}
	if len(v.OutOfScope) > 0 {
		fmt.Fprintln(w, "stored runs that do not decide it:")
		for _, o := range v.OutOfScope {
			fmt.Fprintf(w, "  %s  %s\n", o.Run, o.Reason)
		}
	}
}
