package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestRunMatrixPilotByEstimate: with no Cost given, lab matrix estimates
// cells from the plugins' descriptions, and each profile and clock's
// cheapest cell runs alone first (the pilot that makes the snapshot).
func TestRunMatrixPilotByEstimate(t *testing.T) {
	data := []byte(`name: pilots
cells:
  - plugin: forkbench
    experiments: [create, forktime, switch]
    profiles: [celeron-2.4]
    repeat: 1
`)
	roots := Roots{Plugins: fakeBuild(t, "forkbench"), TempDir: t.TempDir()}
	descs, _ := roots.Plugins.DescribeAll()
	est := EstimatesOf(descs...)
	cheapest, least := "", time.Duration(0)
	for _, x := range []string{"create", "forktime", "switch"} {
		if d := est["forkbench/"+x]; cheapest == "" || d < least {
			cheapest, least = x, d
		}
	}
	evs := &events{}
	cmd := MatrixCommand{MatrixRequest: MatrixRequest{File: "p.yaml", Data: data, Out: t.TempDir(), Parallel: 2, Roots: roots}}
	if _, err := RunMatrix(context.Background(), cmd, MatrixOptions{Options: Options{Observe: evs.observe, machines: &fakeMachines{}}}); err != nil {
		t.Fatal(err)
	}
	done := eventsOf[CellDone](evs)
	if len(done) != 3 || done[0].Cell.Experiment != cheapest {
		t.Fatalf("cells done %v; want 3, the cheapest (%s, %v a repeat) first", done, cheapest, least)
	}
}
