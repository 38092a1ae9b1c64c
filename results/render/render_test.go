package render

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"lab/results"
	"lab/results/claims"
	"lab/results/compare"
	"lab/results/stats"

	"lab/internal/fixture"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./results/ -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file (go test ./results/ -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// profile stands in for images.Profile: a struct with a Name field and no
// JSON tags.
type profile struct {
	Name    string
	Summary string
	Arch    string
}

func renderFixtures(t testing.TB) map[string]*results.Result {
	forktime := fixture.Result()
	forktime.Machine.Profile = profile{Name: "p4-2.4", Summary: "E2 Pentium 4", Arch: "i386"}
	forktime.Machine.Name = "p4"
	forktime.Machine.KernelEntry = "bzimage"

	create := fixture.Result()
	create.ID = "20260102T150405.000000Z-forkbench-create-abcdef"
	create.Experiment = "create"
	create.Samples = []results.Sample{
		{Metric: fixture.MetricProcessMS, Value: 0.412, Unit: "ms", Repeat: 0},
		{Metric: fixture.MetricProcessMS, Value: 0.398, Unit: "ms", Repeat: 1},
		{Metric: fixture.MetricThreadMS, Value: 0.0871, Unit: "ms", Repeat: 0},
		{Metric: fixture.MetricThreadMS, Value: 0.0902, Unit: "ms", Repeat: 1},
		{Metric: fixture.MetricRatio, Value: 4.73, Unit: "x", Repeat: 0},
		{Metric: fixture.MetricRatio, Value: 4.41, Unit: "x", Repeat: 1},
	}
	create.Summary = stats.Summarize(create.Samples)
	// As `lab run` records them: against the figures forkbench declares.
	forktime.Comparisons = compare.ComparePublished(forktime, fixture.ForkbenchRefs(t, "forktime"))
	create.Comparisons = compare.ComparePublished(create, fixture.ForkbenchRefs(t, "create"))
	claims.Judge(forktime, fixture.ForkbenchClaims(t, "forktime"), nil, nil)
	claims.Judge(create, fixture.ForkbenchClaims(t, "create"), nil, nil)

	// Six repeats under icount:0: every claim decided.
	icount := fixture.Result()
	icount.ID = "20260102T150405.000000Z-forkbench-create-icount"
	icount.Experiment = "create"
	icount.Machine.Clock = "icount:0"
	icount.Parameters = map[string]string{"m": "100000", "repeat": "6"}
	icount.Samples = nil
	for i, v := range []float64{0.2171, 0.2168, 0.2175, 0.2169, 0.2172, 0.2170} {
		th := []float64{0.0503, 0.0505, 0.0501, 0.0504, 0.0502, 0.0506}[i]
		icount.Samples = append(icount.Samples, results.Sample{Metric: fixture.MetricProcessMS, Value: v, Unit: "ms", Repeat: i},
			results.Sample{Metric: fixture.MetricThreadMS, Value: th, Unit: "ms", Repeat: i}, results.Sample{Metric: fixture.MetricRatio, Value: v / th, Unit: "x", Repeat: i})
	}
	icount.Summary = stats.Summarize(icount.Samples)
	icount.Comparisons = compare.ComparePublished(icount, fixture.ForkbenchRefs(t, "create"))
	claims.Judge(icount, fixture.ForkbenchClaims(t, "create"), nil, nil)

	crashed := fixture.Result()
	crashed.ID = "20260102T150405.000000Z-threads-sweep-abcdef"
	crashed.Plugin, crashed.PluginVersion, crashed.Experiment = "threads", "", "sweep"
	crashed.Machine = results.MachineRecord{Profile: nil, Accelerator: "tcg", Clock: "icount"}
	crashed.Guest = results.GuestEnv{StackKB: -1}
	crashed.Parameters = nil
	crashed.Samples = []results.Sample{
		{Metric: "real_s", Value: 1.5, Unit: "s", Labels: map[string]string{"workers": "255", "count": "5"}},
		{Metric: "real_s", Value: 12.25, Unit: "s", Labels: map[string]string{"workers": "255", "count": "5000"}},
	}
	crashed.Outcome = results.Outcome{Status: "expected-crash", Reason: "segmentation fault at 350 threads",
		StderrTail: "thread 349 started\nSegmentation fault\n"}
	return map[string]*results.Result{"forktime": forktime, "create": create, "crashed": crashed, "icount": icount}
}

func TestRender(t *testing.T) {
	formats := []struct {
		ext   string
		write func(io.Writer, *results.Result) error
	}{
		{"txt", func(w io.Writer, r *results.Result) error { return WriteSummary(w, r, false, Notes{}) }},
		{"all.txt", WriteTableAll},
		{"md", WriteMarkdown},
		{"csv", func(w io.Writer, r *results.Result) error { return WriteCSVRuns(w, []*results.Result{r}) }},
		{"json", WriteJSON},
	}
	for name, r := range renderFixtures(t) {
		for _, f := range formats {
			t.Run(name+"."+f.ext, func(t *testing.T) {
				var buf bytes.Buffer
				if err := f.write(&buf, r); err != nil {
					t.Fatal(err)
				}
				golden(t, name+"."+f.ext, buf.Bytes())
			})
		}
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0"},
		{0.18, "0.18"},
		{0.000123456, "0.000123"},
		{4.5, "4.5"},
		{12.24, "12.2"},
		{386.25, "386"},
		{999.7, "1000"},
		{9076.9, "9077"},
		{-2.345, "-2.35"},
		{1, "1"},
	}
	for _, tt := range tests {
		if got := results.FormatValue(tt.v); got != tt.want {
			t.Errorf("FormatValue(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestProfileName(t *testing.T) {
	tests := []struct {
		name string
		m    results.MachineRecord
		want string
	}{
		{"struct", results.MachineRecord{Name: "vm", Profile: profile{Name: "celeron-2.4"}}, "celeron-2.4"},
		{"pointer", results.MachineRecord{Name: "vm", Profile: &profile{Name: "celeron-2.4"}}, "celeron-2.4"},
		{"loaded map", results.MachineRecord{Name: "vm", Profile: map[string]any{"name": "p4-2.4"}}, "p4-2.4"},
		{"string", results.MachineRecord{Name: "vm", Profile: "xeon5130-1core"}, "xeon5130-1core"},
		{"none", results.MachineRecord{Name: "vm"}, "vm"},
		{"unencodable", results.MachineRecord{Name: "vm", Profile: func() {}}, "vm"},
	}
	for _, tt := range tests {
		if got := results.ProfileName(tt.m); got != tt.want {
			t.Errorf("%s: ProfileName = %q, want %q", tt.name, got, tt.want)
		}
	}
}
