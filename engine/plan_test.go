package engine

// --sweep: parsing and the checks against the experiment; nothing boots.

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"lab/plugins"
	"lab/results"
)

func TestParseSweeps(t *testing.T) {
	tests := []struct {
		flags   []string
		want    []results.SweepAxis
		wantErr []string
	}{
		{flags: nil, want: nil},
		{flags: []string{"n=50,100"}, want: []results.SweepAxis{{Key: "n", Values: []string{"50", "100"}}}},
		{flags: []string{"n=50", "mode=process, thread"}, want: []results.SweepAxis{{Key: "n", Values: []string{"50"}}, {Key: "mode", Values: []string{"process", "thread"}}}},
		{flags: []string{"n"}, wantErr: []string{`--sweep "n"`, "KEY=V1,V2,..."}},
		{flags: []string{"=5"}, wantErr: []string{"KEY=V1,V2,..."}},
		{flags: []string{"n="}, wantErr: []string{"KEY=V1,V2,..."}},
		{flags: []string{"n=5,,6"}, wantErr: []string{"value 2", "empty"}},
		{flags: []string{"n=5", "n=6"}, wantErr: []string{"--sweep n given twice", "--sweep n=5,6"}},
	}
	for _, tt := range tests {
		got, err := ParseSweeps(tt.flags)
		if tt.wantErr != nil {
			if err == nil {
				t.Errorf("ParseSweeps(%q) = %v, want an error", tt.flags, got)
				continue
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseSweeps(%q): error %q does not say %q", tt.flags, err, w)
				}
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseSweeps(%q) = %v, %v; want %v", tt.flags, got, err, tt.want)
		}
	}
}

// sweepDesc is a plugin with an int, a choice and a bool parameter.
func sweepDesc() *plugins.Description {
	return &plugins.Description{Name: "bench", Version: "1", Experiments: []plugins.Experiment{{
		Name: "hello",
		Params: []plugins.Param{
			{Name: "count", Type: plugins.TypeInt, Default: "5", Min: plugins.Ptr(1), Max: plugins.Ptr(10000), Help: "lines per worker"},
			{Name: "mode", Type: plugins.TypeString, Default: "process", Choices: []string{"process", "thread"}},
			{Name: "sync", Type: plugins.TypeBool, Default: "false"},
		},
		Metrics: []plugins.Metric{{Name: "real_s", Unit: "s"}},
	}}}
}

func TestPlanSweep(t *testing.T) {
	desc := sweepDesc()
	exp := &desc.Experiments[0]
	axes := func(kvs ...string) []results.SweepAxis {
		a, err := ParseSweeps(kvs)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	t.Run("points", func(t *testing.T) {
		canon, points, err := planSweep(desc, exp, map[string]string{"sync": "1"}, axes("count=050,500", "mode=thread,process"))
		if err != nil {
			t.Fatal(err)
		}
		if want := []results.SweepAxis{{Key: "count", Values: []string{"50", "500"}}, {Key: "mode", Values: []string{"thread", "process"}}}; !reflect.DeepEqual(canon, want) {
			t.Errorf("axes %v, want %v (canonical values, in the order given)", canon, want)
		}
		want := []Point{
			{Labels: map[string]string{"count": "50", "mode": "thread"}, Params: map[string]string{"count": "50", "mode": "thread", "sync": "true"}},
			{Labels: map[string]string{"count": "50", "mode": "process"}, Params: map[string]string{"count": "50", "mode": "process", "sync": "true"}},
			{Labels: map[string]string{"count": "500", "mode": "thread"}, Params: map[string]string{"count": "500", "mode": "thread", "sync": "true"}},
			{Labels: map[string]string{"count": "500", "mode": "process"}, Params: map[string]string{"count": "500", "mode": "process", "sync": "true"}},
		}
		if !reflect.DeepEqual(points, want) {
			t.Errorf("points %+v, want %+v", points, want)
		}
	})
	bad := []struct {
		name   string
		params map[string]string
		axes   []results.SweepAxis
		want   []string
	}{
		{"unknown key", nil, axes("workers=1,2"), []string{"--sweep workers", `no parameter "workers"`, "sweep one of its parameters", "count (int, default 5, 1..10000)", "lab plugins show bench"}},
		{"out of range", nil, axes("count=5,0"), []string{"--sweep count=0", "out of range", "1..10000"}},
		{"not a number", nil, axes("count=many"), []string{"--sweep count=many", "not an integer"}},
		{"not a choice", nil, axes("mode=fiber"), []string{"--sweep mode=fiber", "one of process, thread"}},
		{"given twice after canonical form", nil, axes("count=50,050"), []string{"--sweep count", "50 given twice"}},
		{"also set with -p", map[string]string{"count": "7"}, axes("count=5,6"), []string{"--sweep count and -p count=7", "drop one"}},
		{"too many points", nil, axes("count="+manyValues(1001), "sync=true,false"), []string{"more than 1000 points"}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := planSweep(desc, exp, tt.params, tt.axes)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	none := &plugins.Experiment{Name: "bare", Metrics: exp.Metrics}
	if _, _, err := planSweep(&plugins.Description{Name: "bench", Experiments: []plugins.Experiment{*none}}, none, nil, axes("n=1")); err == nil ||
		!strings.Contains(err.Error(), "nothing to sweep") {
		t.Errorf("sweeping an experiment without parameters: %v", err)
	}
}

// manyValues is "1,2,...,n".
func manyValues(n int) string {
	vs := make([]string, n)
	for i := range vs {
		vs[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(vs, ",")
}
