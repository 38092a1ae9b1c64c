package claims

// Convention is how a claim's words become a rule's number, written once
// and used the same way by every claim (docs/proposals/verdicts.md §2).
type Convention struct {
	// Name is what a claim cites it by ("far", "close").
	Name string
	// Words are the words of a source it reads.
	Words string
	// Number is the convention's number: a factor, a margin or a share;
	// 0 where the convention is a rule about the source's own figures
	// rather than a number.
	Number float64
	// Rule is the convention in the words of a rule.
	Rule string
	// Why justifies it in one line, from the sources' own figures.
	Why string
}

// Conventions are the word conventions, in the order the docs list them.
var Conventions = []Convention{
	{"at-least", `"N+ times", "at least N"`, 0, ">= N, no upper bound",
		"literal"},
	{"far", `"far more", "far less"`, 10, "factor >= 10",
		"where the sources say far about clean figures the factor is 23 (Stevens, 504.2/21.5) and 59 (E3 runs 1-2); small multiples they call about 2x or doubles"},
	{"cheap", `"cheap" (A) / "not cheap" (B)`, 4.5, "B/A >= 4.5",
		"E2 is the only source that puts cheap / not on figures: 4.5x (P4, 307.3/67.8 = 4.53) to 84x; its smallest pair is the least gap the word covers"},
	{"about", `"about V", "twice", "doubles"`, 0, "the values that round to V at the precision V is stated in, widened to take in the source figures the word summarises",
		"about gives at least rounding precision; a source that calls 0.625 ms about 0.5 (E4: 750/1200) tells us its own width"},
	{"about-crossing", `crossing "at about V" read off a sweep`, 0, "the source's own sweep points that bracket V",
		"the paper sampled at 500 and 1000, so its 600 carries no more precision than that"},
	{"close", `"about the same", "close", "a bit fewer"`, 0.10, "margin 10 % on the ratio, two-sided (one-sided for a bit fewer)",
		"the only precision these sources state is Kegel's repeatable to about 10 %, and none calls a gap under 10 % a difference (E4: 1.05-1.06 is no faster)"},
	{"no-advantage", `"no advantage for A", "A no faster"`, 0.10, "one-sided: A/B >= 1/1.1",
		"only the advantage is denied: E4's no faster covers 14.8 % slower"},
	{"trend", `"trend faster as P grows"`, 0.10, "A/B at the largest P more than 10 % below A/B at the smallest",
		"a trend is a change bigger than the about-the-same margin"},
	{"order", `"cheapest", "the most", "lowest", "order"`, 1, "factor > 1 on every pair the source's own figures separate by more than its stated repeatability",
		"an order the source's figures cannot show is not the source's claim (E5.2b: 05 vs 02 is 5 %, 05 vs 07 is 8 %, under Kegel's 10 %)"},
	{"kernel-time", `"the cost is kernel (user) time"`, 0.5, "sys/(user+sys) >= 0.5 (user/(user+sys))",
		"E3's own pty: user 0.002, sys 0.003 with sys/real 0.3, so the source means a share of CPU time, not of elapsed time"},
	{"crash-bracket", `"crashes at N and above"`, 0, "bracket = the largest value the source ran without a crash, and N",
		"the threshold is known only to that precision (E1: 255 from step 1, then 350)"},
	{"figure", "a published figure given to k digits", 0.5, "plus or minus half a unit of the last digit, as the figure's own band",
		"the precision of the figure (0.18 -> 0.175-0.185)"},
}

// ConventionNamed is the convention a claim cites by name.
func ConventionNamed(name string) (Convention, bool) {
	for _, c := range Conventions {
		if c.Name == name {
			return c, true
		}
	}
	return Convention{}, false
}
