package engine

import (
	"context"
	"fmt"
	"path/filepath"

	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/matrix"
	"lab/results/render"
)

// MatrixCommand is `lab matrix` as values: the matrix, and its wrap-up.
type MatrixCommand struct {
	MatrixRequest
	// Baseline is the result store of an earlier run: a claim its run
	// of a cell reproduced that the cell's run does not now fails the
	// cell ("": none).
	Baseline string
	// JUnit is another file to write the JUnit XML to ("": only
	// Out/junit.xml).
	JUnit string
}

// MatrixDone is what RunMatrix did: the plan, the cells' run, and the
// JUnit XML written from it.
type MatrixDone struct {
	Plan *MatrixPlan
	*Matrix
	JUnit     *render.JUnitSuites
	JUnitPath string
}

// RunMatrix is a whole `lab matrix`: it plans the matrix, runs its
// shard's cells (each a Do, its estimate from the plugins' descriptions
// deciding the order), then judges the claims from its store and writes
// the JUnit XML against the baseline. Warnings and notes go to
// opts.Observe. It returns a nil MatrixDone and the error if the matrix
// does not plan or its run does not start; a JUnit file that cannot be
// written is an error beside what ran.
func RunMatrix(ctx context.Context, cmd MatrixCommand, opts MatrixOptions) (*MatrixDone, error) {
	plan, err := PlanMatrix(cmd.MatrixRequest)
	if err != nil {
		return nil, err
	}
	if line := plan.EmptyShard(); line != "" {
		opts.emit(Log{Line: line})
	}
	if opts.Cost == nil {
		descs, _ := cmd.Roots.Plugins.DescribeAll() // a plugin that does not describe itself fails its cells, with why
		opts.Cost = EstimatesOf(descs...).Cell
	}
	m, err := plan.Run(ctx, opts)
	if err != nil {
		return nil, err
	}
	done := &MatrixDone{Plan: plan, Matrix: m, JUnitPath: filepath.Join(cmd.Out, "junit.xml")}
	var baseline []*results.Result
	if cmd.Baseline != "" {
		var errs []error
		baseline, errs = results.LoadAll(cmd.Baseline)
		for _, err := range errs {
			opts.emit(Warning{Text: fmt.Sprintf("skipped %v (a corrupt or truncated result file: move it out of the store, or delete it)", err)})
		}
		if len(baseline) == 0 {
			opts.emit(Warning{Text: fmt.Sprintf("baseline %s holds no runs: no claim can have regressed against it", cmd.Baseline)})
		}
	}
	done.JUnit = matrix.JUnit(m.State, m.Runs, baseline, MatrixClaims(cmd.Roots, plan.Store, opts.Options))
	paths := []string{done.JUnitPath}
	if cmd.JUnit != "" {
		paths = append(paths, cmd.JUnit)
	}
	if err := matrix.WriteJUnit(done.JUnit, paths...); err != nil {
		return done, fmt.Errorf("junit: %w", err)
	}
	return done, nil
}

// EmptyShard says that the plan's shard has no cells ("" if it has
// some). Said, not an error: a CI job's shard count is fixed, its matrix
// may shrink. The empty shard still writes its state, so that merging
// the shards works.
func (p *MatrixPlan) EmptyShard() string {
	if len(p.Cells) > 0 || p.Shard.N < 2 {
		return ""
	}
	return fmt.Sprintf("shard %s has no cells: the matrix has %d, fewer than its %d shards; nothing to run here (at most %d shards give each some)",
		p.Shard, len(p.All), p.Shard.N, len(p.All))
}

// MatrixClaims are the installed plugins' claims judged from a matrix's
// store, for junit.xml's claims suite: lab claims's statuses, never nil
// (an empty suite says no plugin declares one). Warnings go to opts.
func MatrixClaims(r Roots, store string, opts Options) []rclaims.ClaimStatus {
	sts, warnings := ClaimStatuses(r.Plugins, r.Profiles, store, false)
	for _, err := range warnings {
		opts.emit(Warning{Text: err.Error()})
	}
	if sts == nil {
		sts = []rclaims.ClaimStatus{}
	}
	return sts
}
