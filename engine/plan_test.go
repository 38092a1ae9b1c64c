package engine

// Planning: a request checked against a build, --sweep's parsing and
// checks against the experiment; nothing boots.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"lab/images"
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

// TestNewPlan: a request planned against a build, and each refusal
// before anything boots naming the flag and the fix.
func TestNewPlan(t *testing.T) {
	build := fakeBuild(t, "forkbench")
	ok := func(t *testing.T) Request {
		return Request{Plugin: "forkbench", Repeat: 1, Timeout: time.Minute, Out: filepath.Join(t.TempDir(), "new"), Roots: Roots{Plugins: build}}
	}
	t.Run("ok", func(t *testing.T) {
		req := ok(t)
		req.Profiles, req.Clock, req.Experiment, req.Params = []string{"celeron-2.4", "p4-2.4"}, "icount:0", "create", map[string]string{"m": "500"}
		plan, err := NewPlan(req)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Exp.Name != "create" || plan.Resolved["m"] != "500" || plan.Resolved["build"] != "static-O2" || len(plan.Profiles) != 2 ||
			plan.Clocks[1].String() != "icount:0" || len(plan.Claims) == 0 || len(plan.Refs) == 0 || plan.ClaimProfiles["celeron-2.4"].Calibration == nil {
			t.Errorf("plan %+v", plan)
		}
		if _, err := os.Stat(req.Out); err != nil {
			t.Errorf("the results directory was not made: %v", err)
		}
		if b := plan.Bundles["i386"]; b == nil || b.Description != plan.Desc {
			t.Errorf("bundles %+v: want the i386 build the description was read from", plan.Bundles)
		}
	})
	t.Run("check only makes nothing", func(t *testing.T) {
		req := ok(t)
		req.CheckOnly = true
		if _, err := NewPlan(req); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(req.Out); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("CheckOnly made %s (%v)", req.Out, err)
		}
	})
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		set  func(r *Request)
		want string
	}{
		{"repeat 0", func(r *Request) { r.Repeat = 0 }, "--repeat 0: want 1..1000"},
		{"repeat too many", func(r *Request) { r.Repeat = 1001 }, "--repeat 1001: want 1..1000"},
		{"no timeout", func(r *Request) { r.Timeout = 0 }, "--timeout 0s: want a positive duration"},
		{"vm and profile", func(r *Request) { r.VM, r.Profiles = "x", []string{"celeron-2.4"} }, "give --vm or --profile, not both"},
		{"clock without profile", func(r *Request) { r.Clock = "icount" }, "--clock icount needs --profile"},
		{"profile twice", func(r *Request) { r.Profiles = []string{"celeron-2.4", "celeron-2.4"} }, "--profile celeron-2.4 given twice"},
		{"no out", func(r *Request) { r.Out = "" }, "choose one with --out DIR"},
		{"out is a file", func(r *Request) { r.Out = file }, "choose another with --out DIR (nothing was started)"},
		{"out under a file, check only", func(r *Request) { r.Out, r.CheckOnly = filepath.Join(file, "x"), true }, "not a directory"},
		{"unknown plugin", func(r *Request) { r.Plugin = "nosuch" }, `unknown plugin "nosuch"`},
		{"unknown experiment", func(r *Request) { r.Experiment = "nosuch" }, "nosuch"},
		{"unknown parameter", func(r *Request) { r.Params = map[string]string{"colour": "red"} }, "colour"},
		{"unknown profile", func(r *Request) { r.Profiles = []string{"pdp-11"} }, "pdp-11"},
		{"bad clock", func(r *Request) { r.Profiles, r.Clock = []string{"celeron-2.4"}, "icount:99" }, "icount:99"},
		{"sweep of no parameter", func(r *Request) { r.Sweep = []results.SweepAxis{{Key: "colour", Values: []string{"red"}}} }, "colour"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := ok(t)
			tt.set(&req)
			if _, err := NewPlan(req); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewPlan = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

func TestParseParams(t *testing.T) {
	m, err := ParseParams([]string{"n=200", "build=static-O2", "empty="})
	if err != nil || m["n"] != "200" || m["build"] != "static-O2" || m["empty"] != "" || len(m) != 3 {
		t.Errorf("ParseParams = %v, %v", m, err)
	}
	for _, bad := range []string{"n", "=5"} {
		if _, err := ParseParams([]string{bad}); err == nil || !strings.Contains(err.Error(), "want KEY=VALUE") {
			t.Errorf("ParseParams(%q) = %v, want KEY=VALUE asked for", bad, err)
		}
	}
}

func TestResolveClock(t *testing.T) {
	p, err := images.Lookup("", "celeron-2.4")
	if err != nil {
		t.Fatal(err)
	}
	for flag, want := range map[string]string{"": "host", "icount": "icount:0", "icount:3": "icount:3", "host": "host"} {
		p.Clock = ""
		c, err := ResolveClock(flag, p)
		if err != nil || c.String() != want {
			t.Errorf("ResolveClock(%q) = %v, %v; want %s", flag, c, err, want)
		}
	}
	p.Clock = "icount:2"
	if c, _ := ResolveClock("", p); c.String() != "icount:2" {
		t.Errorf("the profile's clock: %v", c)
	}
	p.Clock = "sundial"
	if _, err := ResolveClock("", p); err == nil || !strings.Contains(err.Error(), "profile celeron-2.4") {
		t.Errorf("a profile's bad clock: %v, want it named", err)
	}
}
