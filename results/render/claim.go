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
// source and words, machine, plugin, scope, the rule that decides it and
// where its bounds come from, what our machine cannot show, its verdict
// and why, then each stratum that decided it and the stored runs out of
// its scope (or the command that would decide it).
// DigestNote says whose a claim's DigestWords are.
const DigestNote = "SEEDS.md's wording, not a quote: lab has no verbatim words of the write-up for it"

func WriteClaim(w io.Writer, s claims.ClaimStatus) {
	c, v := s.Claim, s.Judged
	fmt.Fprintf(w, "%s: %s\n\n", c.ID, c.Statement)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	machine := c.Machine
	if c.Profile != "" {
		machine += " (profile " + c.Profile + ")"
	}
	rows := [][2]string{{"source", c.Source}}
	if c.SourceWords != "" {
		rows = append(rows, [2]string{"words", "\"" + c.SourceWords + "\""})
	}
	if c.DigestWords != "" {
		rows = append(rows, [2]string{"digest", c.DigestWords + " (" + DigestNote + ")"})
	}
	if c.PartOf != "" {
		rows = append(rows, [2]string{"part of", c.PartOf})
	}
	rows = append(rows, [2]string{"machine", machine}, [2]string{"plugin", c.Plugin + ", experiment " + c.Bench},
		[2]string{"scope", ScopeText(&c)}, [2]string{"kind", c.Kind}, [2]string{"decided", s.Rule})
	if c.Rationale != "" {
		rows = append(rows, [2]string{"bounds from", c.Rationale})
	}
	if len(c.Conventions) > 0 {
		rows = append(rows, [2]string{"conventions", strings.Join(c.Conventions, ", ") + " (docs/claims.md)"})
	}
	if c.Fidelity != "" {
		rows = append(rows, [2]string{"fidelity", c.Fidelity})
	}
	if c.ByConstruction != "" {
		rows = append(rows, [2]string{"by construction", c.ByConstruction})
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
	switch {
	case claims.Untestable(&c):
	case len(v.Strata) == 0:
		fmt.Fprintf(w, "no stored run in scope decides it; this would: %s\n", claims.DecideCommand(&c))
	default:
		fmt.Fprintln(w, "decided in each stratum (profile, clock, accelerator; never pooled):")
		for _, st := range v.Strata {
			fmt.Fprintf(w, "  %s  %s, clock %s, %s\n", st.Verdict, st.Profile, results.OrUnknown(st.Clock), results.OrUnknown(st.Accelerator))
			fmt.Fprintf(w, "      %s\n", st.Reason)
			if len(st.Runs) > 0 {
				fmt.Fprintf(w, "      runs: %s\n", strings.Join(st.Runs, ", "))
			}
		}
	}
	if len(v.OutOfScope) > 0 {
		fmt.Fprintf(w, "stored runs of %s/%s that do not decide it (%d):\n", c.Plugin, c.Bench, len(v.OutOfScope))
		for _, o := range v.OutOfScope {
			fmt.Fprintf(w, "  %s  %s\n", o.Run, o.Reason)
		}
	}
}

// ScopeText is claim c's scope in words: "profiles celeron-2.4 and its
// variants; workers=255; count at 5, 500, 1000 (needs 500, 1000);
// clocks host, icount; plugin 0.2.0 or later".
func ScopeText(c *results.Claim) string {
	s := c.Scope
	if s == nil {
		return "every run of the experiment"
	}
	var parts []string
	profiles := claims.DecidingProfiles(c)
	switch {
	case len(profiles) == 0:
		parts = append(parts, "any profile")
	case s.Variants:
		parts = append(parts, "profiles "+strings.Join(profiles, ", ")+" and their variants (era kernels)")
	default:
		parts = append(parts, "profiles "+strings.Join(profiles, ", "))
	}
	if len(s.Params) > 0 {
		parts = append(parts, results.FormatLabels(s.Params))
	}
	if len(s.Run) > 0 {
		parts = append(parts, "run with "+results.FormatLabels(s.Run)+" (a run with other values decides too)")
	}
	if sw := s.Sweep; sw != nil {
		t := sw.Key + " at any value"
		if len(sw.Points) > 0 {
			t = sw.Key + " at " + strings.Join(sw.Points, ", ")
		}
		if len(sw.Required) > 0 {
			t += " (needs " + strings.Join(sw.Required, ", ") + ")"
		}
		parts = append(parts, t)
	}
	clocks := "clocks host, icount"
	if len(s.Clocks) > 0 {
		clocks = plural(len(s.Clocks), "clock ", "clocks ") + strings.Join(s.Clocks, ", ")
	}
	parts = append(parts, clocks)
	if s.MinPluginVersion != "" {
		parts = append(parts, c.Plugin+" "+s.MinPluginVersion+" or later")
	}
	return strings.Join(parts, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
