package claims

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"lab/results"
)

func TestCrash(t *testing.T) {
	t.Parallel()
	o := func(point, sig string, run int) Outcome {
		return Outcome{Run: "run-" + string(rune('a'+run)), Point: point, Signal: sig}
	}
	from350 := CrashRule{Param: "workers", Signal: "SIGSEGV", From: 350, Required: []string{"255", "350"}}
	never := CrashRule{Param: "workers", Never: true, Required: []string{"350", "500", "800", "1000"}}
	tests := []struct {
		name     string
		outcomes []Outcome
		rule     CrashRule
		want     want
	}{
		{"R", []Outcome{o("255", "", 0), o("350", "SIGSEGV", 1), o("500", "SIGSEGV", 2)}, from350,
			want{results.Reproduced, []string{"255: ran, 350: SIGSEGV, 500: SIGSEGV"}, nil}},
		{"NR", []Outcome{o("255", "", 0), o("350", "", 1), o("500", "SIGSEGV", 2)}, from350,
			want{results.NotReproduced, []string{"ran to the end at workers=350 >= 350"}, nil}},
		{"I flaky", []Outcome{o("255", "", 0), o("350", "SIGSEGV", 1), o("350", "", 2)}, from350,
			want{results.Inconclusive, []string{"workers=350 flaky: 1 of 2 crashed"}, nil}},
		{"NR other signal", []Outcome{o("255", "", 0), o("350", "SIGABRT", 1)}, from350,
			want{results.NotReproduced, []string{"crashed with SIGABRT, not SIGSEGV"}, nil}},
		{"NR below", []Outcome{o("255", "sigsegv", 0), o("350", "SIGSEGV", 1)}, from350,
			want{results.NotReproduced, []string{"crashed with SIGSEGV at workers=255 < 350"}, nil}},
		{"too few: a bracket point not run", []Outcome{o("350", "SIGSEGV", 1), o("500", "SIGSEGV", 2)}, from350,
			want{results.Inconclusive, []string{"no run at workers=255", "--sweep workers=255,350", "3 runs a point"}, nil}},
		{"none", nil, from350, want{results.Inconclusive, []string{"no runs", "--sweep workers=255,350"}, nil}},
		{"never R", []Outcome{o("350", "", 0), o("500", "", 0), o("800", "", 0), o("1000", "", 0)}, never,
			want{results.Reproduced, nil, nil}},
		{"never NR", []Outcome{o("350", "", 0), o("500", "", 0), o("800", "", 0), o("1000", "SIGSEGV", 0)}, never,
			want{results.NotReproduced, []string{"crashed with SIGSEGV at workers=1000"}, nil}},
	}
	// A steady point is one run MinCrashRuns times with one outcome.
	thrice := func(os []Outcome) []Outcome {
		var out []Outcome
		for _, x := range os {
			for i := range MinCrashRuns {
				x.Run = fmt.Sprintf("%s repeat %d", x.Run, i)
				out = append(out, x)
			}
		}
		return out
	}
	for i := range tests {
		if tests[i].name != "I flaky" {
			tests[i].outcomes = thrice(tests[i].outcomes)
		}
	}
	tests = append(tests, struct {
		name     string
		outcomes []Outcome
		rule     CrashRule
		want     want
	}{"I once a point", []Outcome{o("255", "", 0), o("350", "SIGSEGV", 1)}, from350,
		want{results.Inconclusive, []string{"too few runs to tell a steady point from a flaky one at workers=255 (1 run), workers=350 (1 run)", "--repeat 3"}, nil}})
	for _, tt := range tests {
		got := Crash(tt.outcomes, tt.rule)
		checkDecision(t, tt.name, got, tt.want)
		checkShuffled(t, tt.name, got, func(rng *rand.Rand) Decision {
			r := tt.rule
			r.Required = shuffled(rng, r.Required)
			return Crash(shuffled(rng, tt.outcomes), r)
		})
	}
}
