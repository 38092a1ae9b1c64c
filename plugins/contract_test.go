package plugins

import (
	"maps"
	"strings"
	"testing"
)

func testDescription() *Description {
	return &Description{
		Name:    "fake",
		Version: "1.0.0",
		Experiments: []Experiment{
			{
				Name: "first",
				Params: []Param{
					{Name: "n", Type: TypeInt, Default: "2000", Min: Ptr(1), Max: Ptr(1000000), Help: "iterations"},
					{Name: "scale", Type: TypeFloat, Default: "1.5", Min: Ptr(0)},
					{Name: "mode", Type: TypeString, Default: "fast", Choices: []string{"fast", "slow"}},
					{Name: "label", Type: TypeString, Default: ""},
					{Name: "verbose", Type: TypeBool, Default: "false"},
					{Name: "timeout", Type: TypeDuration, Default: "30s", Min: Ptr(1), Max: Ptr(60)},
				},
				Metrics: []Metric{{Name: "t", Unit: "s"}},
			},
			{Name: "second", Metrics: []Metric{{Name: "t", Unit: "s"}}},
		},
	}
}

func TestResolve(t *testing.T) {
	defaults := map[string]string{
		"n": "2000", "scale": "1.5", "mode": "fast", "label": "", "verbose": "false", "timeout": "30s",
	}
	with := func(kv ...string) map[string]string {
		m := maps.Clone(defaults)
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name       string
		experiment string
		params     map[string]string
		wantExp    string
		want       map[string]string
		// wantErr lists substrings the error must contain; nil means no error.
		wantErr []string
	}{
		{name: "default experiment", wantExp: "first", want: defaults},
		{name: "named experiment", experiment: "second", wantExp: "second", want: map[string]string{}},
		{name: "int", params: map[string]string{"n": "50"}, wantExp: "first", want: with("n", "50")},
		{name: "int canonical", params: map[string]string{"n": "0050"}, wantExp: "first", want: with("n", "50")},
		{name: "int at bounds", params: map[string]string{"n": "1000000"}, wantExp: "first", want: with("n", "1000000")},
		{name: "float", params: map[string]string{"scale": "2.50"}, wantExp: "first", want: with("scale", "2.5")},
		{name: "choice", params: map[string]string{"mode": "slow"}, wantExp: "first", want: with("mode", "slow")},
		{name: "free string", params: map[string]string{"label": "a b"}, wantExp: "first", want: with("label", "a b")},
		{name: "bool", params: map[string]string{"verbose": "1"}, wantExp: "first", want: with("verbose", "true")},
		{name: "duration", params: map[string]string{"timeout": "1m"}, wantExp: "first", want: with("timeout", "1m0s")},
		{
			name: "unknown experiment", experiment: "third",
			wantErr: []string{`no experiment "third"`, "first (default)", "second"},
		},
		{
			name: "unknown parameter", params: map[string]string{"count": "5"},
			wantErr: []string{`fake/first has no parameter "count"`, "n (int, default 2000, 1..1000000): iterations", "mode (string, default fast, one of fast|slow)"},
		},
		{
			name: "parameter of another experiment", experiment: "second", params: map[string]string{"n": "5"},
			wantErr: []string{`no parameter "n"`, "takes no parameters"},
		},
		{
			name: "not an int", params: map[string]string{"n": "lots"},
			wantErr: []string{"parameter n", `"lots" is not an integer`, "1..1000000"},
		},
		{
			name: "int fraction", params: map[string]string{"n": "2.5"},
			wantErr: []string{"parameter n", `"2.5" is not an integer`},
		},
		{
			name: "below min", params: map[string]string{"n": "0"},
			wantErr: []string{"parameter n", `"0" is out of range`, "an integer in 1..1000000"},
		},
		{
			name: "above max", params: map[string]string{"n": "1000001"},
			wantErr: []string{"parameter n", `"1000001" is out of range`, "1..1000000"},
		},
		{
			name: "float below min", params: map[string]string{"scale": "-1"},
			wantErr: []string{"parameter scale", "out of range", "a number in >= 0"},
		},
		{
			name: "float NaN", params: map[string]string{"scale": "NaN"},
			wantErr: []string{"parameter scale", "not a number"},
		},
		{
			name: "bad choice", params: map[string]string{"mode": "medium"},
			wantErr: []string{"parameter mode", `"medium" is not one of the choices`, "one of fast, slow"},
		},
		{
			name: "bad bool", params: map[string]string{"verbose": "yes"},
			wantErr: []string{"parameter verbose", "not a bool"},
		},
		{
			name: "bad duration", params: map[string]string{"timeout": "30"},
			wantErr: []string{"parameter timeout", "not a duration"},
		},
		{
			name: "duration out of range", params: map[string]string{"timeout": "2m"},
			wantErr: []string{"parameter timeout", "out of range", "1s..1m0s"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp, got, err := testDescription().Resolve(tt.experiment, tt.params)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Resolve(%q, %v) = %v, want error", tt.experiment, tt.params, got)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q, %v): %v", tt.experiment, tt.params, err)
			}
			if exp.Name != tt.wantExp {
				t.Errorf("experiment = %q, want %q", exp.Name, tt.wantExp)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("resolved = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestResolveDoesNotModifyInput(t *testing.T) {
	in := map[string]string{"n": "007"}
	if _, _, err := testDescription().Resolve("", in); err != nil {
		t.Fatal(err)
	}
	if got, want := in, map[string]string{"n": "007"}; !maps.Equal(got, want) {
		t.Errorf("input became %v, want %v", got, want)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(d *Description)
		wantErr string
	}{
		{name: "ok", mutate: func(*Description) {}},
		{name: "no version", mutate: func(d *Description) { d.Version = "" }, wantErr: "needs a name and a version"},
		{name: "no experiments", mutate: func(d *Description) { d.Experiments = nil }, wantErr: "no experiments"},
		{name: "repeated experiment", mutate: func(d *Description) { d.Experiments[1].Name = "first" }, wantErr: `experiment name "first"`},
		{name: "bad default", mutate: func(d *Description) { d.Experiments[0].Params[0].Default = "0" }, wantErr: "bad default"},
		{name: "negative repeat_seconds", mutate: func(d *Description) { d.Experiments[0].RepeatSeconds = -1 }, wantErr: "repeat_seconds -1: want a number of seconds"},
		{name: "unknown type", mutate: func(d *Description) { d.Experiments[0].Params[0].Type = "uint" }, wantErr: `unknown type "uint"`},
		{name: "metric without unit", mutate: func(d *Description) { d.Experiments[0].Metrics[0].Unit = "" }, wantErr: `metric "t"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := testDescription()
			tt.mutate(d)
			checkValidate(t, d, tt.wantErr)
		})
	}
}

// viewsDescription is testDescription with a table, a chart and write-ups
// on its first experiment, as netbench and printfbench declare theirs.
func viewsDescription() *Description {
	d := testDescription()
	e := &d.Experiments[0]
	e.Metrics = []Metric{{Name: "user_s", Unit: "s"}, {Name: "sys_s", Unit: "s"}, {Name: "cpu_s", Unit: "s"}, {Name: "beyond_s", Unit: "s"}, {Name: "real_s", Unit: "s"}}
	e.Tables = []Table{{Label: "design", Title: "the book's table", Name: "design", Rows: map[string]string{"0": "base", "1": "other"},
		Columns: []Column{{Metric: "user_s", Header: "user"}, {Metric: "cpu_s", Header: "total", Sum: []string{"user_s", "sys_s"}},
			{Metric: "beyond_s", Header: "beyond", Baseline: &Baseline{Metric: "cpu_s", Row: "0"}}},
		Notes: []string{"a note"},
		Chart: &Chart{Stack: []string{"user_s", "sys_s"}, Figures: []string{"cpu_s", "beyond_s"}, Title: "t", Axis: "a", Params: "{n}", Room: 3}}}
	e.Charts = []Chart{{Label: "target", Stack: []string{"user_s", "sys_s"}, Total: "real_s", Title: "per target", Axis: "CPU time"}}
	e.WriteUps = []WriteUp{{ID: "W1", Title: "a write-up", References: []Reference{{Experiment: "W1", Source: "s", Machine: "m", Metric: "crossover", Value: 1, Unit: "x"}}}}
	e.Claims = []Claim{{ID: "W1.1", Statement: "s", Source: "a write-up", Range: &RangeClaim{Metric: "user_s", Min: Ptr(0), Unit: "s"}}}
	d.Experiments[1].WriteUps = []WriteUp{{ID: "W1", Title: "a write-up"}}
	return d
}

func TestValidateViews(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(e *Experiment, d *Description)
		wantErr string
	}{
		{name: "ok", mutate: func(*Experiment, *Description) {}},
		{name: "table without rows", mutate: func(e *Experiment, _ *Description) { e.Tables[0].Rows = nil }, wantErr: "a table needs"},
		{name: "column of an unknown metric", mutate: func(e *Experiment, _ *Description) { e.Tables[0].Columns[0].Metric = "x" }, wantErr: `unknown metric "x"`},
		{name: "sum of an unknown metric", mutate: func(e *Experiment, _ *Description) { e.Tables[0].Columns[1].Sum = []string{"x"} }, wantErr: `unknown metric "x"`},
		{name: "baseline of itself", mutate: func(e *Experiment, _ *Description) { e.Tables[0].Columns[2].Baseline.Metric = "beyond_s" }, wantErr: "baseline"},
		{name: "baseline row unknown", mutate: func(e *Experiment, _ *Description) { e.Tables[0].Columns[2].Baseline.Row = "9" }, wantErr: "baseline"},
		{name: "table chart's figure not a column", mutate: func(e *Experiment, _ *Description) { e.Tables[0].Chart.Figures = []string{"real_s"} }, wantErr: "is not a column"},
		{name: "table chart by another label", mutate: func(e *Experiment, _ *Description) { e.Tables[0].Chart.Label = "target" }, wantErr: "by the table's label"},
		{name: "chart without a label", mutate: func(e *Experiment, _ *Description) { e.Charts[0].Label = "" }, wantErr: "a chart needs a label"},
		{name: "chart stacking an unknown metric", mutate: func(e *Experiment, _ *Description) { e.Charts[0].Stack = []string{"x"} }, wantErr: `unknown metric "x"`},
		{name: "chart total unknown", mutate: func(e *Experiment, _ *Description) { e.Charts[0].Total = "x" }, wantErr: `unknown metric "x"`},
		{name: "chart without an axis", mutate: func(e *Experiment, _ *Description) { e.Charts[0].Axis = "" }, wantErr: "a chart needs a title, an axis"},
		{name: "write-up without a title", mutate: func(e *Experiment, _ *Description) { e.WriteUps[0].Title = "" }, wantErr: "needs an id without a dot and a title"},
		{name: "write-up figure of another", mutate: func(e *Experiment, _ *Description) { e.WriteUps[0].References[0].Experiment = "W2" }, wantErr: "needs experiment W1"},
		{name: "claim of no write-up", mutate: func(e *Experiment, _ *Description) { e.Claims[0].ID = "W10.1" }, wantErr: "claim W10.1 belongs to none"},
		{name: "one id, two titles", mutate: func(_ *Experiment, d *Description) { d.Experiments[1].WriteUps[0].Title = "another" },
			wantErr: "write-up W1 is declared twice with different titles"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := viewsDescription()
			tt.mutate(&d.Experiments[0], d)
			checkValidate(t, d, tt.wantErr)
		})
	}
}

// checkValidate fails t unless d.Validate fails with an error containing
// wantErr, or passes when wantErr is "".
func checkValidate(t *testing.T, d *Description, wantErr string) {
	t.Helper()
	err := d.Validate()
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("Validate: %v", err)
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Fatalf("Validate = %v, want error containing %q", err, wantErr)
	}
}
