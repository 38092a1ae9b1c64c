package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"lab/plugins/contract"
	"lab/plugins/host"
	"lab/results"
	rclaims "lab/results/claims"
)

// The headline: `lab run PLUGIN` with no --repeat runs as many repeats
// as the claims of its experiment in scope on its profile need (within a
// budget it states), and its summary points at the command that decides
// the claims of the plugin's other experiments on the profile's machine.

// DefaultRepeatBudget bounds the repeats lab run chooses itself: a first
// command should end in minutes, and `lab reproduce` or --repeat N is
// there for more.
const DefaultRepeatBudget = 5 * time.Minute

// RepeatChoice is the repeats a run makes when none were asked for.
type RepeatChoice struct {
	// Repeat is what the run makes: Need within Budget, at least 1.
	Repeat int
	// Need is the most repeats the claims in scope need (MinRepeats; 0:
	// no claim in scope), and Claims those claims.
	Need   int
	Claims []string
	// Estimate is the run's rough time at Repeat, NeedEstimate at Need
	// (Estimates.Run).
	Estimate, NeedEstimate time.Duration
	Budget                 time.Duration
}

// target is a profile a plan runs on and its clock.
type target struct{ profile, clock string }

// chooseRepeat is the repeats plan makes with no --repeat on targets ts:
// the most the claims of its experiment in scope there need
// (rclaims.Needs), as many as fit budget, else 1.
func chooseRepeat(plan *Plan, ts []target, budget time.Duration) RepeatChoice {
	ch := RepeatChoice{Repeat: 1, Budget: budget}
	for _, t := range ts {
		n, ids := rclaims.Needs(plan.Claims, plan.ClaimProfiles, plannedRun(plan, t))
		ch.Need = max(ch.Need, n)
		ch.Claims = append(ch.Claims, ids...)
	}
	slices.SortFunc(ch.Claims, rclaims.CompareIDs)
	ch.Claims = slices.Compact(ch.Claims)
	e, run := EstimatesOf(plan.Desc), plan.estimateRun()
	est := func(n int) time.Duration {
		return time.Duration(max(len(ts), 1)) * e.Run(run, n)
	}
	if ch.Need > 0 {
		ch.NeedEstimate = est(ch.Need)
		ch.Repeat = ch.Need
		for ch.Repeat > 1 && est(ch.Repeat) > budget {
			ch.Repeat--
		}
	}
	ch.Estimate = est(ch.Repeat)
	return ch
}

// String is the line lab run prints before the run, "" when no claim is
// in scope (one repeat, as always).
func (ch RepeatChoice) String() string {
	if ch.Need == 0 {
		return ""
	}
	verb := "needs"
	if len(ch.Claims) > 1 {
		verb = "need"
	}
	if ch.Repeat < ch.Need {
		return fmt.Sprintf("repeats: %d, what fits the %s budget (%s %s %d, %s); --repeat %d decides, --repeat N to choose",
			ch.Repeat, shortDuration(ch.Budget), joinIDs(ch.Claims), verb, ch.Need, FormatEstimate(ch.NeedEstimate), ch.Need)
	}
	return fmt.Sprintf("repeats: %d (what %s %s), %s; --repeat N to choose", ch.Repeat, joinIDs(ch.Claims), verb, FormatEstimate(ch.Estimate))
}

// plannedRun is the run plan would make on t, as a result without
// samples: what the claims' scope rules read.
func plannedRun(plan *Plan, t target) *results.Result {
	r := &results.Result{Plugin: plan.Desc.Name, PluginVersion: plan.Desc.Version, Experiment: plan.Exp.Name,
		Machine:    results.MachineRecord{Name: t.profile, Profile: t.profile, Clock: t.clock},
		Parameters: map[string]string{}, Outcome: results.Outcome{Status: contract.StatusOK}}
	for k, v := range plan.Resolved {
		r.Parameters[k] = v
	}
	if plan.Axes != nil {
		r.Sweep = &results.Sweep{Axes: plan.Axes}
		for _, pt := range plan.Points {
			r.Sweep.Points = append(r.Sweep.Points, results.SweepPoint{Labels: pt.Labels, Status: contract.StatusOK})
		}
	}
	return r
}

// estimateRun is plan as a claims' run, for Estimates.Run: its plugin,
// experiment, parameters and points, on its first profile and clock.
func (plan *Plan) estimateRun() rclaims.Run {
	r := rclaims.Run{Plugin: plan.Desc.Name, Experiment: plan.Exp.Name, Repeat: plan.Repeat, Params: plan.Resolved}
	if len(plan.Profiles) > 0 && len(plan.Clocks) > 0 {
		r.Profile, r.Clock = plan.Profiles[0].Name, plan.Clocks[0].String()
	}
	for _, pt := range plan.Points {
		r.Points = append(r.Points, results.FormatLabels(pt.Labels))
	}
	return r
}

// undecided are lines for the claims of choice (in scope of a run whose
// repeats lab chose) that res leaves inconclusive for too few repeats (a
// verdict's "repeats needed" above the repeats run): the command that
// decides each. None when the user chose the repeats: the verdict's
// reason says it then.
func undecided(plan *Plan, res *results.Result, choice RepeatChoice) []string {
	var out []string
	ran := plan.Repeat
	for _, v := range res.Verdicts {
		if v.Verdict != results.Inconclusive || !slices.Contains(choice.Claims, v.Claim) {
			continue
		}
		need := rclaims.RepeatsNeeded(v)
		if need <= ran {
			continue
		}
		out = append(out, fmt.Sprintf("%s is still inconclusive after %d repeats and needs %d: `%s --repeat %d` (%s) or `lab reproduce %s` decides it",
			v.Claim, ran, need, commandLine(plan.Command), need, FormatEstimate(EstimatesOf(plan.Desc).Run(plan.estimateRun(), need)), v.Claim))
	}
	return out
}

// commandLine is the command as the user typed it, for a hint.
func commandLine(args []string) string {
	if len(args) == 0 {
		return "lab run"
	}
	out := slices.Clone(args)
	out[0] = "lab"
	return strings.Join(out, " ")
}

// pointers are lines for the summary of a run of plan on profile: the
// claims of the plugin's other experiments whose machine the profile
// stands for (rclaims.Elsewhere), each experiment's with the `lab
// reproduce` that decides them and its rough time (Estimates.Run of its
// runs).
func pointers(plan *Plan, profile string) []string {
	var out []string
	for _, p := range rclaims.Elsewhere(host.AllClaims(plan.Desc), plan.Exp.Name, profile, plan.ClaimProfiles) {
		out = append(out, PointerLine(p, EstimatesOf(plan.Desc)))
	}
	return out
}

// PointerLine is one Pointer in words: "celeron-2.4 stands for the
// machine of E1.6 and E1.7 (forkbench/create): `lab reproduce E1.6
// E1.7` decides them, about 4 min".
func PointerLine(p rclaims.Pointer, est Estimates) string {
	var d time.Duration
	for _, r := range p.Runs {
		d += est.Run(r, 0)
	}
	them := "them"
	if len(p.Claims) == 1 {
		them = "it"
	}
	return fmt.Sprintf("%s stands for the machine of %s (%s/%s): `lab reproduce %s` decides %s, %s",
		p.Profile, joinIDs(p.Claims), p.Plugin, p.Experiment, strings.Join(p.Claims, " "), them, FormatEstimate(d))
}

// joinIDs is "E1.6", "E1.6 and E1.7", "E1.6, E1.7 and E1.8".
func joinIDs(ids []string) string {
	if len(ids) < 2 {
		return strings.Join(ids, "")
	}
	return strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1]
}

// shortDuration is a budget in words: "5 min", "90 s".
func shortDuration(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%d min", int(d/time.Minute))
	}
	return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
}

// ExperimentChosen: lab chose the run's experiment (Request.
// ChooseExperiment): the first it has was about no claim of the
// profile's machine, and Experiment's Claims are, decided by runs with
// Params; said before the run.
type ExperimentChosen struct {
	Profile, Experiment, Default string
	Params                       map[string]string
	Claims                       []string
}

func (ExperimentChosen) event() {}

func (e ExperimentChosen) String() string {
	var ps []string
	for _, k := range results.SortedKeys(e.Params) {
		ps = append(ps, k+"="+e.Params[k])
	}
	with := ""
	if len(ps) > 0 {
		with = " with " + strings.Join(ps, " ")
	}
	return fmt.Sprintf("experiment: %s%s, which decides %s (%s stands for the machine they are about; %s's claims are about other machines); -e %s to run that one",
		e.Experiment, with, joinIDs(e.Claims), e.Profile, e.Default, e.Default)
}

// chooseExperiment is the experiment a plan with no experiment asked for
// runs on target t: its own (the plugin's first) if a claim of it is in
// scope there, else the first of the plugin's other experiments whose
// claims are about the machine t's profile stands for
// (rclaims.Elsewhere), with the parameters of the first run deciding
// them (the default build's; it runs under t's clock). ok is false when
// the plan keeps its experiment.
func chooseExperiment(plan *Plan, t target) (ch ExperimentChosen, ok bool) {
	if n, _ := rclaims.Needs(plan.Claims, plan.ClaimProfiles, plannedRun(plan, t)); n > 0 {
		return ch, false
	}
	ptrs := rclaims.Elsewhere(host.AllClaims(plan.Desc), plan.Exp.Name, t.profile, plan.ClaimProfiles)
	if len(ptrs) == 0 || len(ptrs[0].Runs) == 0 {
		return ch, false
	}
	p := ptrs[0]
	x, err := plan.Desc.Experiment(p.Experiment)
	if err != nil {
		return ch, false
	}
	// The run closest to the experiment's defaults (the default build's),
	// with only the parameters it sets otherwise.
	var best map[string]string
	for _, r := range p.Runs {
		set := map[string]string{}
		for k, v := range r.Params {
			if prm := x.Param(k); prm == nil || prm.Default != v {
				set[k] = v
			}
		}
		if best == nil || len(set) < len(best) {
			best = set
		}
	}
	return ExperimentChosen{Profile: t.profile, Experiment: p.Experiment, Default: plan.Exp.Name, Params: best, Claims: p.Claims}, true
}

// choose makes plan run experiment exp with params instead of what it
// was planned with: its parameters resolved and checked again, and the
// published figures and claims it is compared with and judged by.
func (plan *Plan) choose(exp string, params map[string]string) error {
	x, resolved, err := plan.Desc.Resolve(exp, params)
	if err != nil {
		return err
	}
	plan.Experiment, plan.Params = exp, params
	plan.Exp, plan.Resolved = x, resolved
	plan.Refs = host.References(x)
	plan.Claims = host.Claims(plan.Desc.Name, x)
	for _, p := range plan.Profiles {
		if err := plan.CheckNeeds(p); err != nil {
			return err
		}
	}
	return nil
}
