package main

import (
	"strings"
	"testing"
)

// TestIntegrationHeadline: `lab up celeron-2.4 && lab run forkbench`, the
// first thing a user types, runs create (the experiment whose claims the
// Celeron stands for), says so, and its summary ends with E1.6's, E1.7's
// and E1.10's verdicts, E1.6 decided (reproduced or not, not for want of
// repeats) and E1.7's published 0.18 ms band with why it is not
// comparable under the host clock.
func TestIntegrationHeadline(t *testing.T) {
	const profile = "celeron-2.4"
	itBootEnv(t, itProfile(t, profile))
	itUp(t, profile, "headline")
	r := itMust(t, itRunTimeout, nil, "run", "forkbench", "--vm", "headline", "--out", itResultsDir(t))
	t.Logf("lab run forkbench: %.1fs", r.took.Seconds())
	if !strings.Contains(r.stderr, "experiment: create with m=2000, which decides E1.6, E1.7 and E1.10") {
		t.Errorf("lab run does not say which experiment it chose:\n%s", r.stderr)
	}
	_, recap, ok := strings.Cut(r.stdout, "the verdicts on celeron-2.4's claims, ours beside the published:\n")
	if !ok {
		t.Fatalf("the summary does not end with the Celeron's verdicts:\n%s", r.stdout)
	}
	lines := strings.Split(strings.TrimRight(recap, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("recap %q, want E1.6, E1.10 and E1.7, the summary's last lines", lines)
	}
	got := map[string]string{}
	for _, l := range lines {
		f := strings.Fields(l)
		got[f[0]] = l
	}
	if l := got["E1.6"]; !(strings.Contains(l, " reproduced ") || strings.Contains(l, " not reproduced ")) || !strings.Contains(l, "claimed at least 10") {
		t.Errorf("E1.6 %q: want it decided, ours against the claimed 10", l)
	}
	if l := got["E1.7"]; !strings.Contains(l, "not comparable") || !strings.Contains(l, "ours: process_ms ") || !strings.Contains(l, "[0.175, 0.185] ms") {
		t.Errorf("E1.7 %q: want not comparable, ours beside the published band", l)
	}
	if _, ok := got["E1.10"]; !ok {
		t.Errorf("no E1.10 in the recap %q", lines)
	}
}
