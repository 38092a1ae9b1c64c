package engine

import (
	"context"

	"lab/results"
)

// Outcome is what Do did: the plan, the repeats lab chose, and the runs
// that started (in the plan's profile order; with several profiles their
// comparison too).
type Outcome struct {
	Plan   *Plan
	Choice RepeatChoice
	// Experiment is the experiment lab chose (Request.ChooseExperiment),
	// nil if it kept the plan's.
	Experiment *ExperimentChosen
	*Profiles
}

// RepeatChosen: lab chose the run's repeats (Request.ChooseRepeat) for
// the claims in scope; said before the run.
type RepeatChosen struct{ Choice RepeatChoice }

func (RepeatChosen) event()           {}
func (e RepeatChosen) String() string { return e.Choice.String() }

// Do is a whole run as `lab run` and a matrix cell ask for it: it plans
// req, opens the VM it names (once) or boots its profiles' throwaway VMs
// in turn, chooses the experiment (ExperimentChosen) and the repeats
// (RepeatChosen) if req asks, runs, and
// writes each run's notes (Run.Undecided, Run.Elsewhere). opts.Ran is
// called with each run as it ends. It returns the error of a request
// that does not plan (a nil Outcome), and with one run that run's error
// as Execute does (no Runs if it did not start).
func Do(ctx context.Context, req Request, opts Options) (*Outcome, error) {
	plan, err := NewPlan(req)
	if err != nil {
		return nil, err
	}
	return do(ctx, plan, opts)
}

// do runs a plan as Do.
func do(ctx context.Context, plan *Plan, opts Options) (*Outcome, error) {
	out := &Outcome{Plan: plan, Profiles: &Profiles{}}
	var (
		m   machine
		ts  []target
		err error
	)
	for i, p := range plan.Profiles {
		ts = append(ts, target{p.Name, plan.Clocks[i].String()})
	}
	if len(plan.Profiles) == 0 {
		if m, err = plan.open(opts); err != nil {
			opts.ran("", nil, err)
			return out, err
		}
		ts = append(ts, target{m.State().Profile.Name, m.State().Clock.String()})
	}
	if plan.ChooseExperiment && len(ts) == 1 {
		if ch, ok := chooseExperiment(plan, ts[0]); ok {
			if err := plan.choose(ch.Experiment, ch.Params); err != nil {
				opts.ran(ts[0].profile, nil, err)
				return out, err
			}
			out.Experiment = &ch
			opts.emit(ch)
		}
	}
	if plan.ChooseRepeat {
		out.Choice = chooseRepeat(plan, ts, DefaultRepeatBudget)
		plan.Repeat = out.Choice.Repeat
		if out.Choice.String() != "" {
			opts.emit(RepeatChosen{Choice: out.Choice})
		}
	}
	ran := func(profile string, run *Run, err error) {
		if run != nil {
			run.Undecided = undecided(plan, run.Result, out.Choice)
			run.Elsewhere = pointers(plan, results.ProfileName(run.Result.Machine))
			if out.Experiment != nil {
				run.Recap = out.Experiment.Claims
			}
		}
		opts.ran(profile, run, err)
	}
	var run *Run
	switch len(plan.Profiles) {
	case 0:
		run, err = runOn(ctx, plan, m, false, opts)
		ran(m.State().Profile.Name, run, err)
	case 1:
		run, err = onThrowaway(ctx, plan, plan.Profiles[0], plan.Clocks[0], opts)
		ran(plan.Profiles[0].Name, run, err)
	default:
		out.Profiles = executeProfiles(ctx, plan, opts, ran)
		return out, nil
	}
	if run != nil {
		out.Runs = []*Run{run}
	}
	return out, err
}

// ran calls o.Ran, if set.
func (o Options) ran(profile string, run *Run, err error) {
	if o.Ran != nil {
		o.Ran(profile, run, err)
	}
}
