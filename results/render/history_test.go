package render

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"lab/internal/fixture"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/history"
)

// historyFixture is a history of 6 nights, each its own store: forkbench's
// fork_ms 25% slower from night 4, netbench's rate 30% higher from night
// 3, a steady series, and a cell run only the last two nights; claim E2.1
// reproduced, not reproduced on night 4, reproduced again, E1.6 not
// run on night 2, and E3.1 not run on any night.
func historyFixture(t *testing.T) *history.History {
	t.Helper()
	root := t.TempDir()
	day0 := time.Date(2026, 11, 20, 2, 0, 0, 0, time.UTC)
	var dirs []string
	for i := 0; i < 6; i++ {
		slow, fast := 1.0, 1.0
		if i >= 3 {
			slow = 1.25
		}
		if i >= 2 {
			fast = 1.3
		}
		w := 1 + 0.001*float64(i%3-1)
		fork := fixture.Run("", "celeron-2.4", "icount:0", fixture.Series("fork_ms", "ms", nil, 10*slow*w, 10.02*slow*w, 9.98*slow*w),
			fixture.Series("exit_ms", "ms", nil, 2*w, 2.01*w))
		fork.Plugin = "forkbench"
		rate := fixture.Run("", "celeron-2.4", "icount:0", fixture.Series("rate", "conn/s", map[string]string{"mode": "thread"}, 500*fast*w, 505*fast*w))
		rate.Plugin = "netbench"
		runs := []*results.Result{fork, rate}
		if i >= 4 {
			late := fixture.Run("", "p4-2.4", "icount:0", fixture.Series("t", "s", nil, 1, 1.01))
			late.Plugin = "threadbench"
			runs = append(runs, late)
		}
		dir := filepath.Join(root, fmt.Sprintf("night-%d", i+1))
		for j, r := range runs {
			r.Started = day0.AddDate(0, 0, i).Add(time.Duration(j) * time.Minute)
			r.ID = fmt.Sprintf("%s-%s-%d", r.Started.Format("20060102T150405.000000Z"), r.Plugin, j)
			if _, err := results.Save(filepath.Join(dir, "results"), r); err != nil {
				t.Fatal(err)
			}
		}
		dirs = append(dirs, dir)
	}
	nights, skipped, err := history.LoadNights(dirs)
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	night := 0
	judge := func([]*results.Result) []rclaims.ClaimStatus {
		e21 := results.Reproduced
		if night == 3 {
			e21 = results.NotReproduced
		}
		e16 := results.Inconclusive
		if night == 1 {
			e16 = results.NotRun
		}
		night++
		var a, b, c results.Claim
		a.ID, a.Statement = "E1.6", "threads are 10+ times faster"
		b.ID, b.Statement = "E2.1", "fork+wait costs 4.5x to 84x"
		c.ID, c.Statement = "E3.1", "counters cost far less"
		return []rclaims.ClaimStatus{{Claim: a, Verdict: e16}, {Claim: b, Verdict: e21}, {Claim: c, Verdict: results.NotRun}}
	}
	return history.Build(nights, history.Defaults(), judge)
}

// TestReportHistory: with a history the page has a History section, in
// its table of contents: the nights and the method, a plot for each
// series that changed (and none for the others, only counted), each
// with its change marked in the plot and in its table, and the claims'
// verdicts night by night with their flips.
func TestReportHistory(t *testing.T) {
	h := historyFixture(t)
	if n := len(h.Changed()); n != 2 {
		t.Fatalf("the fixture's history has %d changed series, want 2: %+v", n, h.Series)
	}
	in := reportFixture(t)
	in.History = h
	page := writeReport(t, in)
	sec := section(t, page, "history")
	for _, want := range []string{
		`<li><a href="#history">History of 6 nights</a> (2 series changed)`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, want := range []string{
		"<h2>History of 6 nights</h2>",
		"from night-1 (2026-11-20 02:00 UTC) to night-6 (2026-11-25 02:00 UTC)",
		"p &lt; 0.001 and at least 5%", "docs/history.md",
		// The series that changed: a heading, the change, the plot.
		"celeron-2.4/forkbench/e/n=10 (clock icount:0): fork_ms</h3>",
		"night 4 (night-4): &#43;25.0% worse (10 → 12.5, p ",
		`<span class="badge v-bad">&#43;25.0% worse (10 → 12.5, p `,
		"celeron-2.4/netbench/e/n=10 (clock icount:0): rate {mode=thread}</h3>",
		`% better (502.2 → 653.4, p `, `<span class="badge v-ok">&#43;30`,
		// The table under the plot: night, name, median (range), n.
		`<td class="num">4</td><td>night-4</td><td class="num">12.49</td><td class="num">12.46..12.51</td><td class="num">3</td><td>ms</td>`,
		// The others are counted, not drawn.
		"2 other series: no change point (1 of them with fewer than 3 nights, too few to tell)",
		// The claims, a letter a night, with their flips.
		"Claims, verdict per night", "R reproduced, N not reproduced",
		`<a href="#claim-E2.1" title="fork&#43;wait costs 4.5x to 84x">E2.1</a></td><td><span class="badge v-ok" title="reproduced">R</span></td>`,
		`<td><span class="badge v-bad" title="not reproduced">N</span></td>`,
		"night 4: reproduced → not reproduced<br>night 5: not reproduced → reproduced",
		`<span class="badge v-none" title="not run">-</span>`,
		// A claim no night decided is counted, not a row of dashes.
		"1 other claim(s): not run on any night",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("history section lacks %q", want)
		}
	}
	// A claim the report also lists links to it.
	if !strings.Contains(sec, `<a href="#claim-E1.6" title="threads are 10&#43; times faster">E1.6</a>`) {
		t.Errorf("E1.6 in the history does not link to its claim")
	}
	if n := strings.Count(sec, "<svg"); n != 2 {
		t.Errorf("%d plots in the history, want 2 (one per series that changed)", n)
	}
	if n := strings.Count(page, "<svg"); n != 5 {
		t.Errorf("%d plots on the page, want 5 (the report's 3 and the history's 2)", n)
	}
	for _, unchanged := range []string{"exit_ms", "p4-2.4/threadbench", "#claim-E3.1"} {
		if strings.Contains(sec, unchanged) {
			t.Errorf("the history shows %s, a series with no change or a claim never decided", unchanged)
		}
	}
	// The plot marks the change and labels its axes.
	for _, want := range []string{"+25.0% worse", "fork_ms, time (ms)", "night", "change point the worse way"} {
		if !strings.Contains(plotTexts(sec), want) {
			t.Errorf("the history's plots lack the text %q", want)
		}
	}
	// After the claims, before the write-ups.
	if c, w := strings.Index(page, `<section id="claims">`), strings.Index(page, `<section id="writeup-E1">`); !(c < strings.Index(page, `<section id="history">`) && strings.Index(page, `<section id="history">`) < w) {
		t.Error("the History section is not between the claims and the write-ups")
	}

	// Without a history, no section.
	in.History = nil
	if page := writeReport(t, in); strings.Contains(page, `id="history"`) || strings.Contains(page, "History of") {
		t.Error("a report without a history has a History section")
	}
}

// TestReportHistoryUnstable: an unstable series that changed is drawn,
// marked unstable; a history with no change says so and draws nothing.
func TestReportHistoryUnstable(t *testing.T) {
	h := historyFixture(t)
	for i := range h.Series {
		h.Series[i].Unstable = h.Series[i].Metric == "fork_ms"
		h.Series[i].Noise = 3.2
	}
	page := writeReport(t, ReportInput{History: h})
	if !strings.Contains(page, `fork_ms <span class="badge v-unsure">unstable</span></h3>`) || !strings.Contains(page, "no gate fails on this series") {
		t.Error("the unstable series is not marked unstable")
	}
	if !strings.Contains(plotTexts(page), "unstable: the nights vary by 3.2%") {
		t.Error("the unstable series' plot does not say so")
	}
	for i := range h.Series {
		h.Series[i].Changes = nil
	}
	page = writeReport(t, ReportInput{History: h})
	if !strings.Contains(page, "No change point in any of the 4 series.") || strings.Contains(page, "<svg") {
		t.Error("a history with no change does not say so, or draws a plot")
	}
}

// section is the <section id="id"> of page.
func section(t *testing.T, page, id string) string {
	t.Helper()
	i := strings.Index(page, `<section id="`+id+`">`)
	if i < 0 {
		t.Fatalf("the page has no section %s", id)
	}
	depth, j := 0, i
	for {
		open, end := strings.Index(page[j+1:], "<section"), strings.Index(page[j+1:], "</section>")
		if end < 0 {
			t.Fatalf("section %s is not closed", id)
		}
		if open >= 0 && open < end {
			depth++
			j += 1 + open
			continue
		}
		j += 1 + end
		if depth == 0 {
			return page[i : j+len("</section>")]
		}
		depth--
	}
}

var plotTextRE = regexp.MustCompile(`<text[^>]*>([^<]*)</text>`)

// plotTexts is the text of the SVG plots in s, a line per text element.
func plotTexts(s string) string {
	var out []string
	for _, m := range plotTextRE.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return strings.Join(out, "\n")
}
