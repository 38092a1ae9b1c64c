package main

import (
	"strings"
	"testing"
)

// TestIntegrationRunRefusesImplausible: what a plugin returns is checked
// in the host before it is saved (issue 31): a negative time, or a
// sample at a repeat index past the run's repeats, fails the run, naming
// the metric and the repeat; the plausible samples are kept, a signed
// metric's negative values among them, and nothing refused is judged.
func TestIntegrationRunRefusesImplausible(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itTestPlugins(t)
	itBootEnv(t, p)
	itUp(t, p.Name, "liar")
	for _, tc := range []struct{ lie, want string }{
		{"negative", "2 sample(s) with a negative value of a metric that is not signed (a difference the plugin declares \"signed\" may be negative), first metric took_ms repeat 0: -1 ms"},
		{"repeat", "2 sample(s) with a repeat index outside the run's 2 repeat(s) (0 to 1), first metric took_ms repeat 2"},
	} {
		t.Run(tc.lie, func(t *testing.T) {
			res, _ := itRunJSON(t, 1, "labtest", "-e", "liar", "-p", "lie="+tc.lie, "--repeat", "2")
			if res.Outcome.Status != "failed" || !strings.Contains(res.Outcome.Reason, "samples refused, not measurements of this run: "+tc.want) {
				t.Errorf("outcome %+v, want failed, saying %q", res.Outcome, tc.want)
			}
			if got := itSeries(res, "took_ms", nil); len(got) != 0 {
				t.Errorf("took_ms kept: %v", got)
			}
			if got := itSeries(res, "delta_ms", nil); len(got) != 2 || got[0] != -1 {
				t.Errorf("delta_ms (signed) = %v, want its two -1 samples kept", got)
			}
		})
	}
}
