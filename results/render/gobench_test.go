package render

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"lab/internal/fixture"
	"lab/results"
)

// goBenchRuns are the fixture runs: forktime on celeron-2.4, a second run
// of it, and a failed run on another profile whose samples carry labels
// with spaces, slashes and a value ending in -digits, in odd units.
func goBenchRuns() []*results.Result {
	a := fixture.Result()
	b := fixture.Result()
	b.ID = "20260103T150405.000000Z-forkbench-forktime-012345"
	odd := fixture.Run("r-odd", "xeon5130-2core", "icount:3",
		fixture.Series("conn rate", "conn/s", map[string]string{"mode": "thread pool", "path": "/tmp/x"}, 1200, 1300),
		fixture.Series("rss_kb", "kB", map[string]string{"cpus": "0-1"}, 2048),
		fixture.Series("wall", "ms", map[string]string{"size µ": "1"}, 1.5),
		fixture.Series("noise", "", nil, 0.25),
	)
	odd.Plugin, odd.Experiment = "threadbench", "create"
	odd.Parameters = map[string]string{"m": "10000", "a b": "c=d", "repeat": "2"}
	odd.Machine.Profile = map[string]any{"name": "xeon5130-2core", "arch": "i386"}
	odd.Outcome = results.Outcome{Status: "failed", Reason: "the guest died"}
	empty := fixture.Run("r-empty", "celeron-2.4", "host")
	return []*results.Result{a, b, odd, empty}
}

// goBenchLine is one result read back: its name, tidied value and unit,
// the value and unit as written, and two of its configuration keys.
type goBenchLine struct {
	name     string
	value    float64
	unit     string
	orig     float64
	origUnit string
	cpu, pkg string
}

// readGoBench parses text back with benchfmt's reader, failing on any
// syntax error.
func readGoBench(t *testing.T, text string) []goBenchLine {
	t.Helper()
	rd := benchfmt.NewReader(strings.NewReader(text), "export.txt")
	var out []goBenchLine
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt: %v\n%s", rec, text)
		case *benchfmt.Result:
			if rec.Iters != 1 || len(rec.Values) != 1 {
				t.Errorf("%s: %d iterations, %d values, want 1 and 1", rec.Name, rec.Iters, len(rec.Values))
				continue
			}
			v := rec.Values[0]
			orig, origUnit := v.Value, v.Unit
			if v.OrigUnit != "" {
				orig, origUnit = v.OrigValue, v.OrigUnit
			}
			out = append(out, goBenchLine{name: string(rec.Name), value: v.Value, unit: v.Unit, orig: orig, origUnit: origUnit,
				cpu: rec.GetConfig("cpu"), pkg: rec.GetConfig("pkg")})
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGoBench(t *testing.T) {
	runs := goBenchRuns()
	var b strings.Builder
	if err := Export(&b, "gobench", runs); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	got := readGoBench(t, text)
	want := 0
	for _, r := range runs {
		want += len(r.Samples)
	}
	if len(got) != want {
		t.Fatalf("%d results read back, want one per sample, %d:\n%s", len(got), want, text)
	}
	const fork = "Forkbench/forktime/profile=celeron-2.4/clock=host/n=2000/metric="
	const thread = "Threadbench/create/profile=xeon5130-2core/clock=icount:3/a_b=c=d/m=10000/metric="
	// The fixture's samples in order: forktime's 9 (fork_wait_us,
	// thread_create_join_us, ratio, 3 repeats each) twice, then the odd
	// run's 5.
	for _, w := range []struct {
		i int
		goBenchLine
	}{
		{0, goBenchLine{name: fork + "fork_wait_us", value: 386.25e-6, unit: "sec/op", cpu: "Intel(R) Celeron(R) CPU 2.00GHz", pkg: "lab/forkbench"}},
		{3, goBenchLine{name: fork + "thread_create_join_us", value: 87.5e-6, unit: "sec/op"}},
		{6, goBenchLine{name: fork + "ratio", value: 4.414, unit: "x/op"}},
		{9, goBenchLine{name: fork + "fork_wait_us", value: 386.25e-6, unit: "sec/op"}},
		{18, goBenchLine{name: thread + "conn_rate/mode=thread_pool/path=_tmp_x", value: 1200, unit: "conn/s", pkg: "lab/threadbench"}},
		{19, goBenchLine{name: thread + "conn_rate/mode=thread_pool/path=_tmp_x", value: 1300, unit: "conn/s"}},
		{20, goBenchLine{name: thread + "rss_kb/cpus=0_1", value: 2048 * 1024, unit: "B/op"}},
		{21, goBenchLine{name: thread + "wall/size__=1", value: 1.5e-3, unit: "sec/op"}},
		{22, goBenchLine{name: thread + "noise", value: 0.25, unit: "value/op"}},
	} {
		g := got[w.i]
		if g.name != w.name || math.Abs(g.value-w.value) > 1e-12*math.Abs(w.value) || g.unit != w.unit {
			t.Errorf("result %d: %s %v %s, want %s %v %s", w.i, g.name, g.value, g.unit, w.name, w.value, w.unit)
		}
		if w.cpu != "" && g.cpu != w.cpu {
			t.Errorf("result %d: cpu %q, want %q", w.i, g.cpu, w.cpu)
		}
		if w.pkg != "" && g.pkg != w.pkg {
			t.Errorf("result %d: pkg %q, want %q", w.i, g.pkg, w.pkg)
		}
	}
	for _, g := range got {
		if strings.ContainsAny(g.name, " \t") {
			t.Errorf("name %q has a space", g.name)
		}
		if base, _ := benchfmt.Name(g.name).Parts(); !regexp.MustCompile(`^[A-Z]\w*$`).Match(base) {
			t.Errorf("name %q: base %q, want a capitalised plugin", g.name, base)
		}
	}
	// Times are written as `go test` writes them; the configuration is
	// written once per cell, and no run ID or time is in it.
	for _, want := range []string{"Benchmark" + fork + "fork_wait_us 1 386250 ns/op\n", "goos: linux\ngoarch: 386\npkg: lab/forkbench\ncpu: Intel(R) Celeron(R) CPU 2.00GHz\naccel: tcg\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("export lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "pkg: "); n != 2 {
		t.Errorf("%d configuration blocks, want 2 (one per cell):\n%s", n, text)
	}
	if strings.Contains(text, "2026") || strings.Contains(text, "r-odd") {
		t.Errorf("export carries a run ID or time:\n%s", text)
	}
}

func TestGoBenchNoSamples(t *testing.T) {
	var b strings.Builder
	if err := WriteGoBench(&b, []*results.Result{fixture.Run("r", "celeron-2.4", "host")}); err != nil || b.Len() != 0 {
		t.Errorf("a run without samples: %v, %q; want nothing written", err, b.String())
	}
}

func TestGoBenchName(t *testing.T) {
	r := fixture.Run("r", "celeron-2.4", "icount:0")
	r.Plugin, r.Experiment, r.Parameters = "forkbench", "create", map[string]string{"m": "10000"}
	for _, tt := range []struct {
		s    results.Sample
		want string
	}{
		{results.Sample{Metric: "per_call", Labels: map[string]string{"mode": "process"}},
			"Forkbench/create/profile=celeron-2.4/clock=icount:0/m=10000/metric=per_call/mode=process"},
		// A trailing -digits would be read as GOMAXPROCS.
		{results.Sample{Metric: "t", Labels: map[string]string{"range": "10-20"}},
			"Forkbench/create/profile=celeron-2.4/clock=icount:0/m=10000/metric=t/range=10_20"},
		{results.Sample{Metric: "t", Labels: map[string]string{"range": "10-20", "z": "x"}},
			"Forkbench/create/profile=celeron-2.4/clock=icount:0/m=10000/metric=t/range=10-20/z=x"},
		{results.Sample{Metric: "a b/c", Labels: map[string]string{"k=ey": "v al"}},
			"Forkbench/create/profile=celeron-2.4/clock=icount:0/m=10000/metric=a_b_c/k_ey=v_al"},
	} {
		got := GoBenchName(r, tt.s)
		if got != tt.want {
			t.Errorf("GoBenchName(%v) = %s, want %s", tt.s, got, tt.want)
		}
		n := benchfmt.Name(got)
		if _, parts := n.Parts(); strings.HasPrefix(string(parts[len(parts)-1]), "-") {
			t.Errorf("%s: benchfmt reads a GOMAXPROCS %s", got, parts[len(parts)-1])
		}
	}
	r.Plugin, r.Experiment = "9lives", ""
	if got := GoBenchName(r, results.Sample{Metric: "m"}); !strings.HasPrefix(got, "Plugin9lives/default/") {
		t.Errorf("plugin 9lives, no experiment: %s", got)
	}
}

func TestGoBenchValue(t *testing.T) {
	for _, tt := range []struct {
		v             float64
		unit          string
		value         float64
		tidy, written string
		writtenV      float64
	}{
		{162.88, "µs", 162.88e-6, "sec/op", "ns/op", 162880},
		{0.25, "ms", 0.25e-3, "sec/op", "ns/op", 250000},
		{2, "s", 2, "sec/op", "ns/op", 2e9},
		{41653, "ns", 41653e-9, "sec/op", "ns/op", 41653},
		{3, "kB", 3072, "B/op", "", 0},
		{12, "MB/s", 12e6, "B/s", "MB/s", 12},
		{7, "conn/s", 7, "conn/s", "", 0},
		{4.5, "x", 4.5, "x/op", "", 0},
		{9, "threads", 9, "threads/op", "", 0},
	} {
		got := GoBenchValue(tt.v, tt.unit)
		if math.Abs(got.Value-tt.value) > 1e-12*tt.value || got.Unit != tt.tidy || got.OrigUnit != tt.written || got.OrigValue != tt.writtenV {
			t.Errorf("GoBenchValue(%v, %q) = %+v, want %v %s written %v %s", tt.v, tt.unit, got, tt.value, tt.tidy, tt.writtenV, tt.written)
		}
	}
}

// goActionBenchmark is github-action-benchmark's pattern for a line of
// Go benchmark output, from benchmark-action/github-action-benchmark
// src/extract.ts, function extractGoResult (v1.18 and later):
//
//	/^(?<name>Benchmark\w+[\w()$%^&*-=|,[\]{}"#]*?)(?<procs>-\d+)?\s+(?<times>\d+)\s+(?<remainder>.+)$/
//
// In the JavaScript class, "*-=" is the range from '*' to '=' (which
// takes +,-./0-9:;<=); RE2 reads it alike. The value is then
// parseFloat of the remainder's first field, and the unit its second.
var goActionBenchmark = regexp.MustCompile(`^(?P<name>Benchmark\w+[\w()$%^&*-=|,[\]{}"#]*?)(?P<procs>-\d+)?\s+(?P<times>\d+)\s+(?P<remainder>.+)$`)

// TestGoBenchGitHubAction: every benchmark line of an export is one
// github-action-benchmark's go tool reads, whole: the name it extracts is
// the one benchfmt reads, with no procs split off, and the value and unit
// are the ones written.
func TestGoBenchGitHubAction(t *testing.T) {
	var b strings.Builder
	if err := WriteGoBench(&b, goBenchRuns()); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	read := readGoBench(t, text)
	var i int
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "Benchmark") {
			continue
		}
		m := goActionBenchmark.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("github-action-benchmark does not read %q", line)
			i++
			continue
		}
		name, procs, times, rest := m[1], m[2], m[3], strings.Fields(m[4])
		if want := "Benchmark" + read[i].name; name != want || procs != "" || times != "1" {
			t.Errorf("github-action-benchmark reads %q as name %q procs %q times %q, want %q, no procs, 1", line, name, procs, times, want)
		}
		if len(rest) != 2 {
			t.Errorf("%q: %d value and unit fields, want 2", line, len(rest))
		} else if v, err := strconv.ParseFloat(rest[0], 64); err != nil || v != read[i].orig || rest[1] != read[i].origUnit {
			t.Errorf("%q: value %q unit %q, want %v %s (%v)", line, rest[0], rest[1], read[i].orig, read[i].origUnit, err)
		}
		i++
	}
	if i != len(read) {
		t.Errorf("%d benchmark lines, %d results read", i, len(read))
	}
}
