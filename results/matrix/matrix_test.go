package matrix

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"lab/plugins/contract"
	"lab/results"
	rclaims "lab/results/claims"

	"lab/internal/fixture"
)

const testMatrix = `name: nightly
clock: icount:0
repeat: 4
cells:
  - plugin: forkbench
    experiments: [forktime, create]
    profiles: [celeron-2.4, p4-2.4]
    params: {n: [200, 2000]}
  - plugin: threadbench
    experiment: hello
    profiles: [celeron-2.4]
    sweep: {count: [5, 50]}
    repeat: 6
`

func TestParseMatrix(t *testing.T) {
	spec, cells, err := Parse([]byte(testMatrix))
	if err != nil {
		t.Fatal(err)
	}
	if spec.Name != "nightly" || len(cells) != 9 {
		t.Fatalf("name %q, %d cells, want nightly and 2x2x2+1", spec.Name, len(cells))
	}
	ids := make([]string, len(cells))
	for i, c := range cells {
		ids[i] = c.ID
	}
	if !slices.IsSorted(ids) {
		t.Errorf("cells not sorted by ID: %v", ids)
	}
	for _, want := range []string{"celeron-2.4/forkbench/forktime/n=200", "p4-2.4/forkbench/create/n=2000", "celeron-2.4/threadbench/hello/sweep:count=5,50"} {
		if !slices.Contains(ids, want) {
			t.Errorf("no cell %s in %v", want, ids)
		}
	}
	var hello Cell
	for _, c := range cells {
		if c.Plugin == "threadbench" {
			hello = c
		}
	}
	got := strings.Join(hello.Args(), " ")
	if want := "run threadbench --profile celeron-2.4 --repeat 6 -e hello --clock icount:0 --sweep count=5,50"; got != want {
		t.Errorf("Args = %q, want %q", got, want)
	}
	// Repeat left out is lab's choice, as lab run without --repeat
	// (issue 32: a matrix cell gets the repeat choice).
	_, chosen, err := Parse([]byte("cells:\n  - plugin: p\n    profiles: [a]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c := chosen[0]; c.Repeat != 0 || strings.Join(c.Args(), " ") != "run p --profile a" {
		t.Errorf("no repeat given: cell repeat %d, args %q; want 0 (lab chooses) and no --repeat", c.Repeat, c.Args())
	}
	for body, msg := range map[string]string{
		"name: x\n":                   "no cells",
		"cells:\n  - profiles: [a]\n": "has no plugin",
		"cells:\n  - plugin: p\n":     "has no profiles",
		"cells:\n  - plugin: p\n    profiles: [a]\n    colour: red\n":                            "field colour not found",
		"cells:\n  - plugin: p\n    profiles: [a, a]\n":                                          "repeats cell a/p/default",
		"cells:\n  - plugin: p\n    profiles: [a]\n    params: {n: 1}\n    sweep: {n: [1, 2]}\n": "n is both a parameter and swept",
		"cells:\n  - plugin: p\n    profiles: [a]\n    experiment: e\n    experiments: [f]\n":    "experiment or experiments, not both",
		"timeout: soon\ncells:\n  - plugin: p\n    profiles: [a]\n":                              "timeout \"soon\"",
		// issue 31: repeat 0 was silently 1.
		"repeat: 0\ncells:\n  - plugin: p\n    profiles: [a]\n":                 "repeat 0: want at least 1 (leave it out for what the claims in scope need, else 1)",
		"cells:\n  - plugin: p\n    profiles: [a]\n    repeat: 0\n":             "cells[0] (p): repeat 0: want at least 1 (leave it out for what the claims in scope need, else 1)",
		"repeat: 3\ncells:\n  - plugin: p\n    profiles: [a]\n    repeat: -2\n": "repeat -2: want at least 1 (leave it out for the file's 3)",
	} {
		if _, _, err := Parse([]byte(body)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("Parse(%q) = %v, want an error saying %q", body, err, msg)
		}
	}
}

// TestShardsPartition: for matrices of many sizes, the shards 1/n..n/n
// hold every cell exactly once, and a shard's cells do not depend on
// anything but the file.
func TestShardsPartition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		var b strings.Builder
		b.WriteString("cells:\n")
		entries := 1 + rng.IntN(4)
		for e := 0; e < entries; e++ {
			fmt.Fprintf(&b, "  - plugin: p%d\n    profiles: [", e)
			for k := 0; k <= rng.IntN(3); k++ {
				if k > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "prof%d", k)
			}
			b.WriteString("]\n    params: {n: [")
			for k := 0; k <= rng.IntN(5); k++ {
				if k > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%d", k)
			}
			b.WriteString("]}\n")
		}
		_, cells, err := Parse([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		n := 1 + rng.IntN(7)
		seen := map[string]int{}
		for i := 1; i <= n; i++ {
			for _, c := range (Shard{i, n}).Of(cells) {
				seen[c.ID]++
			}
			// Deterministic: the same file gives the same shard.
			_, again, _ := Parse([]byte(b.String()))
			if !slices.EqualFunc((Shard{i, n}).Of(cells), (Shard{i, n}).Of(again), func(a, b Cell) bool { return a.ID == b.ID }) {
				t.Fatalf("shard %d/%d differs between two reads of one file", i, n)
			}
		}
		if len(seen) != len(cells) {
			t.Fatalf("%d shards cover %d of %d cells", n, len(seen), len(cells))
		}
		for id, k := range seen {
			if k != 1 {
				t.Fatalf("cell %s is in %d of %d shards", id, k, n)
			}
		}
	}
	for _, bad := range []string{"0/2", "3/2", "1", "a/b", "1/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
}

// shardDir writes a shard's state and result files the way lab matrix
// does.
func shardDir(t *testing.T, all []Cell, shard Shard, hash string) string {
	t.Helper()
	dir := t.TempDir()
	st := &State{Name: "m", SpecSHA256: hash, Shard: shard.String(), All: len(all)}
	for _, c := range all {
		st.AllIDs = append(st.AllIDs, c.ID)
	}
	for _, c := range shard.Of(all) {
		r := fixture.Run(fmt.Sprintf("20261201T000000Z-%s-%06x", c.Plugin, slices.IndexFunc(all, func(x Cell) bool { return x.ID == c.ID })), c.Profile, "host", fixture.Series("t", "s", nil, 1))
		r.Started = time.Now()
		if _, err := results.Save(results.StoreDir(dir), r); err != nil {
			t.Fatal(err)
		}
		st.Cells = append(st.Cells, CellState{Cell: c, Status: "ok", Result: r.ID, Attempts: 1})
	}
	if err := SaveState(dir, st); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestMerge(t *testing.T) {
	_, all, err := Parse([]byte(testMatrix))
	if err != nil {
		t.Fatal(err)
	}
	s1, s2, s3 := shardDir(t, all, Shard{1, 3}, "h"), shardDir(t, all, Shard{2, 3}, "h"), shardDir(t, all, Shard{3, 3}, "h")
	out := filepath.Join(t.TempDir(), "merged")
	if _, err := Merge(out, []string{s1, s2}); err == nil || !strings.Contains(err.Error(), "in no shard") || !strings.Contains(err.Error(), Shard{3, 3}.Of(all)[0].ID) {
		t.Errorf("merge without shard 3: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused merge wrote %s", out)
	}
	if _, err := Merge(out, []string{s1, s2, s3, s2}); err == nil || !strings.Contains(err.Error(), "more than one shard") || !strings.Contains(err.Error(), Shard{2, 3}.Of(all)[0].ID) {
		t.Errorf("merge with shard 2 twice: %v", err)
	}
	other := shardDir(t, all, Shard{3, 3}, "another")
	if _, err := Merge(out, []string{s1, s2, other}); err == nil || !strings.Contains(err.Error(), "another matrix file") {
		t.Errorf("merge across matrices: %v", err)
	}
	st, err := Merge(out, []string{s3, s1, s2})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Cells) != len(all) {
		t.Errorf("merged %d cells, want %d", len(st.Cells), len(all))
	}
	runs, errs := results.LoadAll(results.StoreDir(out))
	if len(runs) != len(all) || len(errs) > 0 {
		t.Errorf("merged store: %d runs, errors %v", len(runs), errs)
	}
}

func TestMatrixJUnitRegressedClaim(t *testing.T) {
	mk := func(id string, at time.Time, verdict string) *results.Result {
		r := fixture.Run(id, "celeron-2.4", "host", fixture.Series("t", "s", nil, 1))
		r.Plugin, r.Experiment, r.Started = "forkbench", "forktime", at
		r.Verdicts = []results.Verdict{{Claim: "E2.1", Verdict: verdict, Reason: "why " + verdict}}
		return r
	}
	now := time.Now()
	before := mk("old", now.Add(-24*time.Hour), results.Reproduced)
	for _, tt := range []struct {
		now      string
		baseline []*results.Result
		fail     bool
	}{
		{results.NotReproduced, []*results.Result{before}, true},
		{results.NotReproduced, nil, false},
		{results.Inconclusive, []*results.Result{before}, false},
		{results.Reproduced, []*results.Result{before}, false},
		{results.NotReproduced, []*results.Result{mk("old", now.Add(-time.Hour), results.NotReproduced)}, false},
	} {
		r := mk("new", now, tt.now)
		st := &State{Name: "m", Cells: []CellState{{Cell: Cell{ID: "c", Plugin: "forkbench"}, Status: "ok", Result: "new"}}}
		doc := JUnit(st, map[string]*results.Result{"new": r}, tt.baseline, nil)
		f := doc.Suites[0].Cases[0].Failure
		if (f != nil) != tt.fail {
			t.Errorf("now %s, baseline %d runs: failure %+v, want failing %v", tt.now, len(tt.baseline), f, tt.fail)
		}
		if f != nil && !strings.Contains(f.Message, "E2.1 was reproduced by run old") {
			t.Errorf("failure message %q", f.Message)
		}
	}
}

// TestParseMatrixSaysWhatIsWrong: a misspelt key is named with the keys
// that are valid where it stands, not with a Go type name, and an empty
// file says it is empty and what a matrix file looks like, not "EOF"
// (issue 22 item 12).
func TestParseMatrixSaysWhatIsWrong(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       []string
		notWant    string
	}{
		{"entry key", "cells:\n  - plugin: p\n    profiles: [a]\n    parms: {n: 1}\n",
			[]string{"line 4", "parms", "plugin, experiment, experiments, profiles, params, sweep, repeat, add_to"}, "type"},
		{"top-level key", "nmae: x\ncells:\n  - plugin: p\n    profiles: [a]\n",
			[]string{"line 1", "nmae", "name, clock, repeat, parallel, timeout, cells"}, "type"},
		{"empty", "", []string{"empty", "cells:", "plugin:", "profiles:"}, "EOF"},
		{"comments only", "# nothing yet\n", []string{"empty", "cells:"}, "EOF"},
		// YAML reads a bare null (or ~, or nothing) as no value: the
		// entry made no cell at all, silently, before.
		{"null parameter", "cells:\n  - plugin: p\n    profiles: [a]\n    params: {lines: 100, target: null}\n",
			[]string{"target", "no value", `target: "null"`}, "type"},
		{"empty parameter", "cells:\n  - plugin: p\n    profiles: [a]\n    params: {target: []}\n",
			[]string{"target", "no value"}, "type"},
		{"null sweep", "cells:\n  - plugin: p\n    profiles: [a]\n    sweep: {target: ~}\n",
			[]string{"sweep target", "no value"}, "type"},
		{"add_to two profiles", "cells:\n  - plugin: p\n    profiles: [a, b]\n    repeat: 2\n    add_to: r1\n",
			[]string{"cells[0] (p): add_to r1 adds repeats to one run", "one profile"}, "type"},
		{"add_to no repeat", "cells:\n  - plugin: p\n    profiles: [a]\n    add_to: r1\n",
			[]string{"add_to r1", "give repeat"}, "type"},
		{"add_to a list", "cells:\n  - plugin: p\n    profiles: [a]\n    repeat: 2\n    params: {n: [1, 2]}\n    add_to: r1\n",
			[]string{"add_to r1", "give n one value"}, "type"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse([]byte(tt.body))
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", tt.body)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Parse(%q) = %v, want it to contain %q", tt.body, err, w)
				}
			}
			if strings.Contains(err.Error(), tt.notWant) {
				t.Errorf("Parse(%q) = %v, want no %q in it", tt.body, err, tt.notWant)
			}
		})
	}
}

// TestParseMatrixQuotedNull: a quoted "null" is the string null, a
// parameter value like any other (printfbench's target=null).
func TestParseMatrixQuotedNull(t *testing.T) {
	_, cells, err := Parse([]byte("cells:\n  - plugin: p\n    profiles: [a]\n    params: {target: \"null\", lines: 100}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 1 || cells[0].Params["target"] != "null" || cells[0].Params["lines"] != "100" {
		t.Fatalf("cells %+v; want one, target=null lines=100", cells)
	}
}

// TestClaimsSuite: reproduced passes; not reproduced and the dependent
// verdicts fail; the rest are skipped; each with the verdict and reason.
func TestClaimsSuite(t *testing.T) {
	st := func(id, verdict string) rclaims.ClaimStatus {
		return rclaims.ClaimStatus{Claim: results.Claim{Claim: contract.Claim{ID: id, Statement: "s"}, Plugin: "p", Bench: "b"},
			Verdict: verdict, Judged: results.Verdict{Verdict: verdict, Reason: "because " + id,
				Strata: []results.Stratum{{Profile: "pr", Clock: "icount:0", Accelerator: "tcg", Verdict: verdict, Reason: "r"}}}}
	}
	var sts []rclaims.ClaimStatus
	for i, v := range results.VerdictOrder {
		sts = append(sts, st(fmt.Sprintf("E%d", i), v))
	}
	doc := JUnit(&State{Name: "m"}, nil, nil, sts)
	if len(doc.Suites) != 2 {
		t.Fatalf("%d suites, want the cells' and the claims'", len(doc.Suites))
	}
	s := doc.Suites[1]
	want := map[string]string{results.Reproduced: "pass", results.NotReproduced: "failure", results.ClockDependent: "failure",
		results.KernelDependent: "failure", results.ClockKernelDependent: "failure", results.Inconclusive: "skipped",
		results.NotComparable: "skipped", results.Untestable: "skipped", results.NotRun: "skipped"}
	dependent := 0
	for _, v := range results.VerdictOrder {
		if results.IsDependent(v) {
			want[v] = "failure"
			dependent++
		}
	}
	for i, c := range s.Cases {
		v := results.VerdictOrder[i]
		got := "pass"
		switch {
		case c.Failure != nil:
			got = "failure"
			if !strings.Contains(c.Failure.Message, "because "+c.Name) {
				t.Errorf("%s: message %q lacks the reason", c.Name, c.Failure.Message)
			}
		case c.Skipped != nil:
			got = "skipped"
		}
		if got != want[v] {
			t.Errorf("%s (%s): %s, want %s", c.Name, v, got, want[v])
		}
		if !strings.Contains(c.SystemOut, "on pr, clock icount:0, tcg: r") {
			t.Errorf("%s: system-out lacks the stratum: %q", c.Name, c.SystemOut)
		}
	}
	if s.Failures != 1+dependent || s.Skipped != 4 || s.Tests != len(results.VerdictOrder) {
		t.Errorf("suite counts: %d tests, %d failures, %d skipped", s.Tests, s.Failures, s.Skipped)
	}
}

// TestParseMatrixAddTo: an entry's add_to is its cell's, and the cell's
// lab run adds to that run.
func TestParseMatrixAddTo(t *testing.T) {
	_, cells, err := Parse([]byte("repeat: 3\ncells:\n  - plugin: p\n    experiment: e\n    profiles: [a]\n    params: {n: 5}\n    add_to: r1\n  - plugin: p\n    experiment: f\n    profiles: [a]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 || cells[0].AddTo != "r1" || cells[1].AddTo != "" {
		t.Fatalf("cells %+v", cells)
	}
	if got, want := strings.Join(cells[0].Args(), " "), "run p --profile a --repeat 3 -e e -p n=5 --add-to r1"; got != want {
		t.Errorf("args %q, want %q", got, want)
	}
}
