package engine

// The headline's choices from forkbench's real description: nothing
// boots.

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lab/images"
	"lab/plugins"
	"lab/plugins/host"
	"lab/results"
	rclaims "lab/results/claims"
)

// forkbenchPlan is a plan of forkbench's experiment exp with params, as
// NewPlan makes it, without a plugin build or a results directory.
func forkbenchPlan(t *testing.T, exp string, params map[string]string) *Plan {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "plugins", "forkbench", "description.json"))
	if err != nil {
		t.Fatal(err)
	}
	desc, err := plugins.ParseDescription(b)
	if err != nil {
		t.Fatal(err)
	}
	e, resolved, err := desc.Resolve(exp, params)
	if err != nil {
		t.Fatal(err)
	}
	return &Plan{Request: Request{Plugin: "forkbench", Repeat: 1, Command: []string{"/usr/bin/lab", "run", "forkbench"}},
		Desc: desc, Exp: e, Resolved: resolved, Claims: host.Claims(desc.Name, e), ClaimProfiles: ClaimProfiles(images.Builtin())}
}

func TestChooseRepeat(t *testing.T) {
	e16 := func(t *testing.T) int {
		p := forkbenchPlan(t, "create", nil)
		n := 0
		for i := range p.Claims {
			n = max(n, rclaims.MinRepeats(&p.Claims[i]))
		}
		return n
	}(t)
	tests := []struct {
		name    string
		exp     string
		params  map[string]string
		target  target
		budget  time.Duration
		repeat  int
		claims  string
		line    []string // what the line says; nil: no line
		noClaim bool
	}{
		{name: "the headline: no claim of forktime on the celeron", exp: "forktime", target: target{"celeron-2.4", "host"}, budget: DefaultRepeatBudget,
			repeat: 1, noClaim: true},
		{name: "forktime on the p4", exp: "forktime", target: target{"p4-2.4", "host"}, budget: DefaultRepeatBudget,
			repeat: 5, claims: "E2.1a", line: []string{"repeats: 5 (what E2.1a needs), about 24 s; --repeat N to choose"}},
		{name: "its era variant too", exp: "forktime", target: target{"p4-2.4-era", "icount:0"}, budget: DefaultRepeatBudget,
			repeat: 5, claims: "E2.1a"},
		{name: "create at the claims' size under icount", exp: "create", params: map[string]string{"m": "2000"}, target: target{"celeron-2.4", "icount:0"},
			budget: time.Hour, repeat: e16, claims: "E1.6 E1.7 E1.10", line: []string{"(what E1.6, E1.7 and E1.10 need)", "--repeat N to choose"}},
		{name: "the host clock leaves out the absolute time", exp: "create", params: map[string]string{"m": "2000"}, target: target{"celeron-2.4", "host"},
			budget: time.Hour, repeat: 6, claims: "E1.6 E1.10", line: []string{"(what E1.6 and E1.10 need)"}},
		{name: "the default size is out of scope", exp: "create", target: target{"celeron-2.4", "icount:0"}, budget: time.Hour, repeat: 1, noClaim: true},
		{name: "the budget cuts", exp: "create", params: map[string]string{"m": "2000"}, target: target{"celeron-2.4", "icount:0"},
			budget: 15 * time.Second, repeat: 2, claims: "E1.6 E1.7 E1.10",
			line: []string{"repeats: 2, what fits the 15 s budget (E1.6, E1.7 and E1.10 need ", "--repeat " + strconv.Itoa(e16) + " decides"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := chooseRepeat(forkbenchPlan(t, tt.exp, tt.params), []target{tt.target}, tt.budget)
			if ch.Repeat != tt.repeat || strings.Join(ch.Claims, " ") != tt.claims {
				t.Errorf("chooseRepeat = %d repeats for %v, want %d for %s", ch.Repeat, ch.Claims, tt.repeat, tt.claims)
			}
			if ch.Repeat > 1 && ch.Estimate > tt.budget {
				t.Errorf("estimate %v past the budget %v", ch.Estimate, tt.budget)
			}
			if got := ch.String(); tt.noClaim != (got == "") {
				t.Errorf("line %q, want one only when a claim is in scope", got)
			}
			for _, w := range tt.line {
				if !strings.Contains(ch.String(), w) {
					t.Errorf("line %q does not say %q", ch.String(), w)
				}
			}
		})
	}
}

func TestPointers(t *testing.T) {
	tests := []struct {
		name, exp, profile string
		want               []string
	}{
		{"the headline: the celeron's claims are create's", "forktime", "celeron-2.4",
			[]string{"celeron-2.4 stands for the machine of E1.6, E1.7 and E1.10 (forkbench/create): `lab reproduce E1.6 E1.7 E1.10` decides them, about 1 min"}},
		{"an era variant points the same way", "forktime", "celeron-2.4-era",
			[]string{"celeron-2.4-era stands for the machine of E1.6, E1.7 and E1.10 (forkbench/create): `lab reproduce E1.6 E1.7 E1.10` decides them, about 1 min"}},
		{"the p4's from create", "create", "p4-2.4",
			[]string{"p4-2.4 stands for the machine of E2.1a (forkbench/forktime): `lab reproduce E2.1a` decides it, about 1 min"}},
		{"none in the experiment run", "create", "celeron-2.4", nil},
		{"a profile no claim of forkbench names", "forktime", "modern-x86_64", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pointers(forkbenchPlan(t, tt.exp, nil), tt.profile)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Pointers =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestUndecided(t *testing.T) {
	plan := forkbenchPlan(t, "forktime", nil)
	plan.Repeat = 5
	ch := RepeatChoice{Repeat: 5, Need: 5, Claims: []string{"E2.1a"}}
	verdict := func(id, v string, need float64) results.Verdict {
		return results.Verdict{Claim: id, Verdict: v, Numbers: []results.Number{{Name: "p", Value: 0.1}, {Name: "repeats needed", Value: need}}}
	}
	res := &results.Result{Verdicts: []results.Verdict{
		verdict("E2.1a", results.Inconclusive, 7),
		verdict("E2.1b", results.Inconclusive, 9), // not in scope: its own verdict says
	}}
	got := undecided(plan, res, ch)
	want := "E2.1a is still inconclusive after 5 repeats and needs 7: `lab run forkbench --repeat 7` (about 33 s) or `lab reproduce E2.1a` decides it"
	if len(got) != 1 || got[0] != want {
		t.Errorf("Undecided = %q, want [%q]", got, want)
	}
	for _, v := range []results.Verdict{verdict("E2.1a", results.Inconclusive, 5), verdict("E2.1a", results.Reproduced, 7)} {
		res.Verdicts = []results.Verdict{v}
		if got := undecided(plan, res, ch); got != nil {
			t.Errorf("undecided(%s with %v needed) = %q, want none: enough repeats ran, or it is decided", v.Verdict, v.Numbers[1].Value, got)
		}
	}
	if got := undecided(plan, res, RepeatChoice{Repeat: 1}); got != nil {
		t.Errorf("Undecided with no claim in scope = %q, want none", got)
	}
}

// TestInterruptedBy: an interrupted run says what interrupted it:
// Ctrl-C for SIGINT or a plain cancel, the signal's name for another,
// lab reproduce's budget when it ended (before, that said Ctrl-C).
func TestInterruptedBy(t *testing.T) {
	for _, tc := range []struct {
		cause error
		want  string
	}{{nil, "Ctrl-C"}, {sigCause(syscall.SIGINT), "Ctrl-C"}, {sigCause(syscall.SIGTERM), "SIGTERM"}, {sigCause(syscall.SIGHUP), "SIGHUP"},
		{BudgetEnded{Budget: time.Hour}, "lab reproduce's budget of 1h0m0s ended"}} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(tc.cause)
		if got := InterruptedBy(ctx); got != tc.want {
			t.Errorf("cancelled by %v: %q, want %q", tc.cause, got, tc.want)
		}
	}
}

type sigCause syscall.Signal

func (s sigCause) Error() string          { return syscall.Signal(s).String() }
func (s sigCause) Signal() syscall.Signal { return syscall.Signal(s) }
