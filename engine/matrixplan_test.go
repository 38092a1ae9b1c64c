package engine

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lab/images"
	"lab/plugins"
	"lab/results"
)

// fakesMatrix is a one-cell matrix of forkbench's create on the Celeron.
const fakesMatrix = `name: one
cells:
  - plugin: forkbench
    experiment: create
    profiles: [celeron-2.4]
    repeat: 1
`

// TestPlanMatrix: a matrix is checked whole before anything boots; each
// refusal names the file, the cell or the flag.
func TestPlanMatrix(t *testing.T) {
	build := fakeBuild(t, "forkbench")
	req := func(data string) MatrixRequest {
		return MatrixRequest{File: "m.yaml", Data: []byte(data), Out: t.TempDir(), Roots: Roots{Plugins: build}}
	}
	p, err := PlanMatrix(req(fakesMatrix))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Cells) != 1 || p.Parallel != DefaultParallel("") || p.Store != results.StoreDir(p.Out) || p.EmptyShard() != "" {
		t.Errorf("plan: %d cells, parallel %d, store %s, empty shard %q", len(p.Cells), p.Parallel, p.Store, p.EmptyShard())
	}
	// Checking made nothing: the store is made when the cells run.
	if _, err := os.Stat(p.Store); err == nil {
		t.Errorf("planning made %s", p.Store)
	}
	for _, tt := range []struct {
		name, data, shard string
		parallel          int
		want              string
	}{
		{"not yaml", "cells: [", "", 0, "m.yaml: "},
		{"unknown plugin", strings.Replace(fakesMatrix, "forkbench", "nosuch", 1), "", 0, `m.yaml: cell celeron-2.4/nosuch/create: unknown plugin "nosuch"`},
		{"unknown experiment", strings.Replace(fakesMatrix, "create", "nosuch", 1), "", 0, "m.yaml: cell celeron-2.4/forkbench/nosuch: "},
		{"unknown profile", strings.Replace(fakesMatrix, "celeron-2.4", "pdp-11", 1), "", 0, "m.yaml: cell pdp-11/forkbench/create: "},
		{"bad shard", fakesMatrix, "3/2", 0, "3/2"},
		{"too parallel", fakesMatrix, "", 17, "--parallel 17: want 1..16"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := req(tt.data)
			r.Shard, r.Parallel = tt.shard, tt.parallel
			if _, err := PlanMatrix(r); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("PlanMatrix = %v, want an error saying %q", err, tt.want)
			}
		})
	}
	// A shard with no cells is said, not refused.
	r := req(fakesMatrix)
	r.Shard = "2/3"
	p, err = PlanMatrix(r)
	if err != nil {
		t.Fatal(err)
	}
	if line := p.EmptyShard(); !strings.Contains(line, "shard 2/3 has no cells: the matrix has 1, fewer than its 3 shards") {
		t.Errorf("EmptyShard = %q", line)
	}
}

// TestRunMatrixBaselineAndJUnit: the wrap-up against a baseline that
// holds nothing (said), the JUnit XML written to a second file too, and
// a JUnit file that cannot be written failing the command after the
// cells ran.
func TestRunMatrixBaselineAndJUnit(t *testing.T) {
	out := t.TempDir()
	evs := &events{}
	extra := filepath.Join(t.TempDir(), "junit.xml")
	baseline := t.TempDir()
	if err := os.WriteFile(filepath.Join(baseline, "torn.json"), []byte(`{"id": "torn"`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := MatrixCommand{MatrixRequest: MatrixRequest{File: "m.yaml", Data: []byte(fakesMatrix), Out: out, Roots: Roots{Plugins: fakeBuild(t, "forkbench"), TempDir: t.TempDir()}},
		Baseline: baseline, JUnit: extra}
	done, err := RunMatrix(context.Background(), cmd, MatrixOptions{Options: Options{Observe: evs.observe, machines: &fakeMachines{}}})
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	for _, w := range eventsOf[Warning](evs) {
		warned = append(warned, w.Text)
	}
	joined := strings.Join(warned, "\n")
	if !strings.Contains(joined, "skipped ") || !strings.Contains(joined, "torn.json") || !strings.Contains(joined, "holds no runs: no claim can have regressed against it") {
		t.Errorf("warnings:\n%s\nwant the torn file skipped and the empty baseline said", joined)
	}
	for _, path := range []string{done.JUnitPath, extra} {
		if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), "celeron-2.4/forkbench/create") {
			t.Errorf("%s: %v\n%s", path, err, b)
		}
	}
	// The cells are done; a JUnit path that cannot be written fails.
	cmd.JUnit = filepath.Join(extra, "under-a-file.xml")
	cmd.Baseline = ""
	if _, err := RunMatrix(context.Background(), cmd, MatrixOptions{Options: Options{machines: &fakeMachines{}}}); err == nil || !strings.HasPrefix(err.Error(), "junit: ") {
		t.Errorf("RunMatrix with an unwritable --junit: %v", err)
	}
}

// TestRunMatrixWarmsThenShares: with two VMs at a time, each profile and
// clock with no booted snapshot boots once, alone and before any cell, to
// make it (Warming, Warmed); one that has a snapshot boots nothing more;
// then the cells start longest first by the descriptions' estimates.
func TestRunMatrixWarmsThenShares(t *testing.T) {
	data := []byte(`name: warm
clock: icount:0
cells:
  - plugin: forkbench
    experiments: [switch, forktime, create]
    profiles: [celeron-2.4, p4-2.4]
    repeat: 1
`)
	roots := Roots{Plugins: fakeBuild(t, "forkbench"), TempDir: t.TempDir()}
	descs, _ := roots.Plugins.DescribeAll()
	est := EstimatesOf(descs...)
	var mu sync.Mutex
	var order []string // what each boot was for, as it booted
	var running, most int
	ms := &fakeMachines{cold: map[string]bool{"celeron-2.4 icount:0": true}}
	ms.newMachine = func(p images.Profile) *fakeMachine {
		m := newFakeMachine(p.Name+"-run", p)
		m.sess.run = func(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
			mu.Lock()
			order = append(order, p.Name+"/"+req.Experiment)
			running++
			most = max(most, running)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			mu.Lock()
			running--
			mu.Unlock()
			return okRun(req, progress, 1), nil
		}
		return m
	}
	evs := &events{}
	cmd := MatrixCommand{MatrixRequest: MatrixRequest{File: "w.yaml", Data: data, Out: t.TempDir(), Parallel: 2, Roots: roots}}
	if _, err := RunMatrix(context.Background(), cmd, MatrixOptions{Options: Options{Observe: evs.observe, machines: ms}}); err != nil {
		t.Fatal(err)
	}
	warming, warmed := eventsOf[Warming](evs), eventsOf[Warmed](evs)
	if len(warming) != 1 || warming[0].Profile != "celeron-2.4" || warming[0].Clock != "icount:0" || len(warmed) != 1 {
		t.Fatalf("Warming %+v, Warmed %+v; want one each, celeron-2.4 under icount:0 (p4-2.4 has its snapshot)", warming, warmed)
	}
	if ms.snapshotChecks != 2 {
		t.Errorf("%d snapshot checks, want 2 (a profile and clock each)", ms.snapshotChecks)
	}
	// The warm boot ran nothing, and came before every cell's.
	if len(ms.booted) != 7 || ms.booted[0].plugins != 0 || ms.booted[0].discarded != 1 {
		t.Fatalf("%d boots, the first ran %d plugins and was discarded %d times; want 7, the warm one running none, discarded",
			len(ms.booted), ms.booted[0].plugins, ms.booted[0].discarded)
	}
	evs.mu.Lock()
	all := slices.Clone(evs.evs)
	evs.mu.Unlock()
	madeAt, firstDone := -1, -1
	for i, e := range all {
		switch e.(type) {
		case Warmed:
			madeAt = i
		case CellDone:
			if firstDone < 0 {
				firstDone = i
			}
		}
	}
	if madeAt < 0 || firstDone < madeAt {
		t.Errorf("the snapshot was made at event %d, the first cell ended at %d; want the snapshot first", madeAt, firstDone)
	}
	if most != 2 {
		t.Errorf("at most %d cells ran at once, want 2", most)
	}
	// Longest first: the two costliest cells start before the cheapest.
	exps := []string{"create", "forktime", "switch"}
	slices.SortStableFunc(exps, func(a, b string) int {
		return cmp.Compare(est.Repeat("forkbench", b, nil, "icount:0", ""), est.Repeat("forkbench", a, nil, "icount:0", ""))
	})
	first := map[string]bool{}
	for _, o := range order[:2] {
		first[o[strings.Index(o, "/")+1:]] = true
	}
	if !first[exps[0]] || first[exps[2]] {
		t.Errorf("cells started %v; want the longest (%s) first and the shortest (%s) last", order, exps[0], exps[2])
	}
}
