package render

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"lab/internal/fixture"
	"lab/plugins/contract"
	"lab/results"
	"lab/results/compare"
)

// designsRun is a netbench designs run: two repeats of designs 0, 1, 2
// and 4, with the published figures of two machines as references.
func designsRun() *results.Result {
	r := &results.Result{ID: "run-nb", Plugin: "netbench", Experiment: "designs",
		Parameters: map[string]string{"repeat": "2", "nclients": "2", "children": "2", "loops": "20", "bytes": "4000", "prefork": "3", "clients": "local", "designs": "0,1,2,4"},
		Machine:    results.MachineRecord{Profile: map[string]any{"name": "celeron-2.4"}, Clock: "host", Accelerator: "tcg", KernelID: "debian-6.1-686"},
		Outcome:    results.Outcome{Status: "ok"}}
	cpu := map[int][2]float64{0: {0.5, 5.0}, 1: {3.5, 18}, 2: {0.6, 6}, 4: {0.7, 6.5}}
	for rep := range 2 {
		for _, d := range []int{0, 1, 2, 4} {
			u, s := cpu[d][0]+0.1*float64(rep), cpu[d][1]
			l := map[string]string{"design": strconv.Itoa(d)}
			for _, x := range []results.Sample{{Metric: "user_s", Value: u, Unit: "s"}, {Metric: "sys_s", Value: s, Unit: "s"}, {Metric: "cpu_s", Value: u + s, Unit: "s"},
				{Metric: "cpu_beyond_s", Value: u + s - (cpu[0][0] + 0.1*float64(rep) + cpu[0][1]), Unit: "s"},
				{Metric: "wall_s", Value: 2, Unit: "s"}, {Metric: "conn_per_s", Value: 40, Unit: "conn/s"}} {
				x.Repeat, x.Labels = rep, l
				r.Samples = append(r.Samples, x)
			}
		}
	}
	lin := "Pentium III 450 MHz, Red Hat 6.2"
	sol := "Solaris"
	var refs []results.Reference
	for d, us := range map[int][2]float64{0: {0.5, 5.0}, 1: {3.7, 17.8}, 2: {0.6, 7.1}} {
		l := map[string]string{"design": strconv.Itoa(d)}
		refs = append(refs, results.Reference{Reference: contract.Reference{Experiment: "E5", Machine: lin, Metric: "user_s", Value: us[0], Unit: "s", Labels: l}},
			results.Reference{Reference: contract.Reference{Experiment: "E5", Machine: lin, Metric: "sys_s", Value: us[1], Unit: "s", Labels: l}})
	}
	refs = append(refs, results.Reference{Reference: contract.Reference{Experiment: "E5", Machine: sol, Metric: "cpu_beyond_s", Value: 504.2, Unit: "s", Labels: map[string]string{"design": "1"}}},
		results.Reference{Reference: contract.Reference{Experiment: "E5", Machine: sol, Metric: "cpu_beyond_s", Value: 21.5, Unit: "s", Labels: map[string]string{"design": "4"}}})
	// Map order is random: the references in a fixed order, as a
	// description lists them.
	sortRefs(refs)
	compare.Analyze(r, refs)
	return r
}

func sortRefs(refs []results.Reference) {
	key := func(r results.Reference) string { return r.Machine + r.Labels["design"] + r.Metric }
	for i := range refs {
		for j := i + 1; j < len(refs); j++ {
			if key(refs[j]) < key(refs[i]) {
				refs[i], refs[j] = refs[j], refs[i]
			}
		}
	}
}

// designsViews are what netbench's designs experiment declares: the
// book's table of server designs.
func designsViews(t *testing.T) results.Views {
	t.Helper()
	return fixture.Views(t, "netbench", "designs")
}

func TestTableFor(t *testing.T) {
	designs := designsViews(t)
	if TableFor(designsRun(), designs) == nil {
		t.Error("TableFor(a designs run) = nil")
	}
	for name, mod := range map[string]func(*results.Result){
		// Another plugin's experiment declares no such table.
		"another plugin":  func(r *results.Result) { r.Plugin = "printfbench"; designs = targetsViews(t) },
		"a sweep":         func(r *results.Result) { r.Sweep = &results.Sweep{} },
		"no design label": func(r *results.Result) { r.Samples = []results.Sample{{Metric: "user_s", Value: 1}} },
		"a sweep's labels": func(r *results.Result) {
			for i := range r.Samples {
				r.Samples[i].Labels = map[string]string{"design": "0", "loops": "20"}
			}
		},
	} {
		designs = designsViews(t)
		r := designsRun()
		mod(r)
		if TableFor(r, designs) != nil {
			t.Errorf("TableFor(%s) = a table, want none", name)
		}
		var buf bytes.Buffer
		if err := WriteTables(&buf, r, designs); err != nil || buf.Len() != 0 {
			t.Errorf("WriteTables(%s) wrote %q (%v), want nothing", name, buf.String(), err)
		}
	}
}

// TestWriteTables: one row per design in the order run, ours beside
// each machine's figures, published totals and beyond computed from user
// and sys where the machine gives no beyond of its own.
func TestWriteTables(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTables(&buf, designsRun(), designsViews(t)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	t.Log("\n" + out)
	lines := strings.Split(out, "\n")
	find := func(prefix string) []string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return strings.Fields(l)
			}
		}
		t.Fatalf("no line %q in\n%s", prefix, out)
		return nil
	}
	head := find("row ")
	if want := "row server design user sys total beyond 0 wall s conn/s A user A sys A total A beyond 0 B beyond 0"; strings.Join(head, " ") != want {
		t.Errorf("header %q, want %q", strings.Join(head, " "), want)
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		// design 0: ours 0.55 / 5 / 5.55 (median of 0.5 and 0.6), beyond 0;
		// A: 0.5 + 5 = 5.5, beyond 0; B has nothing for it.
		{"0 ", []string{"0.55", "5", "5.55", "0", "2", "40", "0.5", "5", "5.5", "0", "-"}},
		// design 1: A 3.7 + 17.8 = 21.5, beyond 21.5 - 5.5 = 16; B 504.2.
		{"1 ", []string{"3.55", "18", "21.6", "16", "2", "40", "3.7", "17.8", "21.5", "16", "504.2"}},
		{"2 ", []string{"0.65", "6", "6.65", "1.1", "2", "40", "0.6", "7.1", "7.7", "2.2", "-"}},
		// design 4: A did not measure it; B 21.5.
		{"4 ", []string{"0.75", "6.5", "7.25", "1.7", "2", "40", "-", "-", "-", "-", "21.5"}},
	} {
		f := find(tc.prefix)
		got := f[len(f)-len(tc.want):]
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("row %q: %v, want %v", tc.prefix, got, tc.want)
		}
	}
	for _, want := range []string{"fork per client", "pre-forked, thread mutex around accept", "A: Pentium III 450 MHz, Red Hat 6.2", "B: Solaris", "medians of 2 repeat(s) on profile celeron-2.4"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	// The rows in the order the run measured the designs: 0, 1, 2, 4.
	if i, j := strings.Index(out, "\n1 "), strings.Index(out, "\n4 "); i < 0 || j < i {
		t.Errorf("rows out of the run's order:\n%s", out)
	}
}

func TestWriteTableChart(t *testing.T) {
	designs := &designsViews(t).Tables[0]
	var buf bytes.Buffer
	if err := WriteTableChart(&buf, designsRun(), designs); err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(buf.Bytes(), new(struct{})); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	svg := buf.String()
	for _, want := range []string{"netbench/designs: server CPU time per design", ">1 fork per client<", ">0 iterative (the baseline)<",
		"21.6 s (+16) | A 21.5 (+16) | B (+504.2)", "7.25 s (+1.7) | B (+21.5)", "5.55 s (+0) | A 5.5 (+0)", "profile celeron-2.4", "medians of 2 repeat(s)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("plot lacks %q", want)
		}
	}
	// The first design measured on top: drawn last among the ticks.
	if i, j := strings.Index(svg, ">4 pre-forked"), strings.Index(svg, ">0 iterative"); i < 0 || j < i {
		t.Errorf("tick order: design 4 at %d, design 0 at %d; want 0 on top", i, j)
	}
	r := designsRun()
	r.Samples = fixture.Result().Samples
	if err := WriteTableChart(&buf, r, designs); err == nil {
		t.Error("WriteTableChart(a forkbench run) = nil, want nothing to plot")
	}
}

func TestTableChartBeside(t *testing.T) {
	designs := designsViews(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "run-nb.json")
	if got, want := TableChartBeside(path, designsRun(), designs), "plot: "+filepath.Join(dir, "run-nb.svg"); got != want {
		t.Errorf("TableChartBeside = %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "run-nb.svg")); err != nil {
		t.Error(err)
	}
	if got := TableChartBeside(path, targetsRun(), targetsViews(t)); got != "" {
		t.Errorf("TableChartBeside(a printfbench run) = %q, want nothing", got)
	}
	if got := TableChartBeside("", designsRun(), designs); got != "" {
		t.Errorf("TableChartBeside(unsaved) = %q, want nothing", got)
	}
}
