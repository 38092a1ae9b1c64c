package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/claims"
)

// WriteClaim writes claim status s for people: the claim's statement,
// source and words, machine, plugin, scope, the rule that decides it and
// where its bounds come from, what our machine cannot show, its verdict
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
	rows := [][2]string{{"source", c.Source}}
	if c.SourceWords != "" {
		rows = append(rows, [2]string{"words", "\"" + c.SourceWords + "\""})
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
	case c.Untestable != nil:
	case len(v.Strata) == 0:
		fmt.Fprintf(w, "no stored run in scope decides it; this would: %s\n", DecideCommand(&c))
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
	profiles := scopeProfiles(c)
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

// scopeProfiles are the profiles a claim is decided on: its scope's, and
// for a kind across two profiles the rule's two.
func scopeProfiles(c *results.Claim) []string {
	var ps []string
	if c.Scope != nil {
		ps = slices.Clone(c.Scope.Profiles)
	}
	add := func(p string) {
		if p != "" && !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	if k := c.Speedup; k != nil {
		add(k.Baseline)
		add(k.Profile)
	}
	if k := c.Equivalence; k != nil {
		add(k.Baseline)
		add(k.Profile)
	}
	return ps
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// DecideCommand is a `lab run` that makes a run in claim c's scope: its
// profiles (both of a kind across profiles), parameters, sweep points,
// a clock it allows (icount:0 where it may, being deterministic) and 7
// repeats: enough for a rule with up to 6 refuting tests (docs/claims.md,
// "The frame"); a verdict that needs more says how many.
func DecideCommand(c *results.Claim) string {
	parts := []string{"lab run", c.Plugin, "-e", c.Bench}
	profiles := scopeProfiles(c)
	if len(profiles) == 0 && c.Profile != "" {
		profiles = []string{c.Profile}
	}
	if claims.AcrossProfiles(c) || len(profiles) == 1 {
		for _, p := range profiles {
			parts = append(parts, "--profile", p)
		}
	} else if len(profiles) > 1 {
		parts = append(parts, "--profile", profiles[0])
	}
	var sweepKey string
	if s := c.Scope; s != nil {
		if sw := s.Sweep; sw != nil && len(sw.Points) > 0 {
			sweepKey = sw.Key
		}
		for _, k := range results.SortedKeys(s.Params) {
			if k != sweepKey {
				parts = append(parts, "-p", k+"="+s.Params[k])
			}
		}
		if sweepKey != "" {
			parts = append(parts, "--sweep", sweepKey+"="+strings.Join(s.Sweep.Points, ","))
		}
	}
	if x := c.Crossover; x != nil && sweepKey == "" {
		parts = append(parts, "--sweep", fmt.Sprintf("%s=%s,%s", x.Sweep, results.FormatValue(x.BandStart), results.FormatValue(x.BandEnd)))
	}
	if s := c.Scope; s != nil {
		if len(s.Clocks) == 0 || slices.Contains(s.Clocks, contract.ClockIcount) {
			if !claims.AcrossProfiles(c) {
				parts = append(parts, "--clock", "icount:0")
			}
		}
	}
	return strings.Join(append(parts, "--repeat", "7"), " ")
}
