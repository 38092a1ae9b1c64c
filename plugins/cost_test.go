package plugins

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// costDescription is testDescription whose first experiment declares a
// cost model: a fixed part, per n, per n x scale weighed by mode, and a
// case for the host clock on one profile.
func costDescription() *Description {
	d := testDescription()
	d.Experiments[0].Cost = &Cost{
		Seconds: 2,
		Terms:   []CostTerm{{Per: []string{"n"}, Seconds: 0.001}, {Per: []string{"mode", "n", "scale"}, Seconds: 0.01}},
		Weights: []CostWeight{{Param: "mode", Values: map[string]float64{"fast": 1, "slow": 3}}},
		Cases:   []CostCase{{Clock: "host", Profiles: []string{"big"}, Seconds: 1, Terms: []CostTerm{{Per: []string{"n"}, Seconds: 0.002}}}},
		Fitted:  "synthetic",
	}
	return d
}

func TestCostRoundTrip(t *testing.T) {
	d := costDescription()
	b, err := MarshalDescription(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseDescription(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Errorf("round trip: got %+v, want %+v", got.Experiments[0].Cost, d.Experiments[0].Cost)
	}
	if !strings.Contains(string(b), `"cost"`) || !strings.Contains(string(b), `"weights"`) {
		t.Errorf("description JSON lacks the cost:\n%s", b)
	}
	// The gRPC form too (Describe): the same conversion both ways.
	if again := descriptionFromWire(descriptionToWire(d)); !reflect.DeepEqual(again, d) {
		t.Errorf("wire round trip: got %+v", again.Experiments[0].Cost)
	}
}

func TestRepeatCost(t *testing.T) {
	d := costDescription()
	e := &d.Experiments[0]
	tests := []struct {
		name           string
		params         map[string]string
		clock, profile string
		want           float64
	}{
		// 2 + 0.001 x 2000 + 0.01 x 1 x 2000 x 1.5
		{"defaults", nil, "icount:0", "small", 2 + 2 + 30},
		{"slow weighs 3", map[string]string{"mode": "slow", "n": "100"}, "icount:0", "small", 2 + 0.1 + 0.01*3*100*1.5},
		{"the host case", map[string]string{"n": "100"}, "host", "big", 1 + 0.2},
		{"host on another profile", map[string]string{"n": "100"}, "host", "small", 2 + 0.1 + 1.5},
		{"clock unknown", map[string]string{"n": "100"}, "", "big", 2 + 0.1 + 1.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := e.RepeatCost(tt.params, tt.clock, tt.profile)
			if err != nil || !ok || math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("RepeatCost = %v, %v, %v; want %v", got, ok, err, tt.want)
			}
		})
	}
	// No cost model: repeat_seconds, whatever the parameters.
	e.Cost, e.RepeatSeconds = nil, 7
	if got, ok, err := e.RepeatCost(map[string]string{"n": "1"}, "host", "big"); got != 7 || !ok || err != nil {
		t.Errorf("without a cost model RepeatCost = %v, %v, %v; want repeat_seconds 7", got, ok, err)
	}
	e.RepeatSeconds = 0
	if _, ok, _ := e.RepeatCost(nil, "", ""); ok {
		t.Error("neither a cost model nor repeat_seconds: RepeatCost says it knows")
	}
}

// TestCostFactor: what each type of parameter counts for in a term.
func TestCostFactor(t *testing.T) {
	e := &Experiment{Name: "x", Params: []Param{
		{Name: "n", Type: TypeInt, Default: "3"},
		{Name: "d", Type: TypeDuration, Default: "1.5s"},
		{Name: "on", Type: TypeBool, Default: "true"},
		{Name: "list", Type: TypeString, Default: "0,1,2+3"},
		{Name: "mode", Type: TypeString, Default: "both"},
	}, Cost: &Cost{Weights: []CostWeight{{Param: "mode", Values: map[string]float64{"both": 2}}}}}
	for _, tt := range []struct {
		per    []string
		params map[string]string
		want   float64
	}{
		{[]string{"n"}, nil, 3},
		{[]string{"n", "d"}, map[string]string{"n": "10"}, 15},
		{[]string{"on", "n"}, map[string]string{"on": "false"}, 0},
		{[]string{"list"}, nil, 4},
		{[]string{"list"}, map[string]string{"list": "all"}, 1},
		{[]string{"mode", "n"}, nil, 6},
		{[]string{"mode"}, map[string]string{"mode": "a,b,c"}, 3}, // no weight: counted
	} {
		if got, err := e.CostFactor(tt.per, tt.params); err != nil || got != tt.want {
			t.Errorf("CostFactor(%v, %v) = %v, %v; want %v", tt.per, tt.params, got, err, tt.want)
		}
	}
	if _, err := e.CostFactor([]string{"nope"}, nil); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("CostFactor of an unknown parameter: %v", err)
	}
}

func TestValidateCost(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(c *Cost)
		wantErr string
	}{
		{name: "ok", mutate: func(*Cost) {}},
		{name: "nothing", mutate: func(c *Cost) { *c = Cost{} }, wantErr: "experiment fake/first: cost declares nothing"},
		{name: "negative fixed", mutate: func(c *Cost) { c.Seconds = -1 }, wantErr: "experiment fake/first: cost: seconds -1"},
		{name: "NaN term", mutate: func(c *Cost) { c.Terms[0].Seconds = math.NaN() }, wantErr: "term per n: seconds NaN"},
		{name: "term without parameters", mutate: func(c *Cost) { c.Terms[0].Per = nil }, wantErr: "cost: term 1 names no parameter"},
		{name: "unknown parameter", mutate: func(c *Cost) { c.Terms[1].Per[1] = "lines" }, wantErr: `experiment fake/first: cost: term per mode x lines x scale names parameter "lines", which it does not have`},
		{name: "choices without weights", mutate: func(c *Cost) { c.Weights = nil }, wantErr: "names parameter mode, whose values are choices: give each a weight"},
		{name: "a choice without a weight", mutate: func(c *Cost) { delete(c.Weights[0].Values, "slow") }, wantErr: `cost weights of parameter mode: no weight for "slow"`},
		{name: "weight of a bad value", mutate: func(c *Cost) { c.Weights[0].Values["quick"] = 1 }, wantErr: `experiment fake/first: cost weights: parameter mode: "quick" is not one of the choices`},
		{name: "weight of a number", mutate: func(c *Cost) { c.Weights = append(c.Weights, CostWeight{Param: "n"}) }, wantErr: "cost weights of parameter n: it is of type int"},
		{name: "weight of an unknown parameter", mutate: func(c *Cost) { c.Weights[0].Param = "speed" }, wantErr: `cost weights name parameter "speed"`},
		{name: "weights twice", mutate: func(c *Cost) { c.Weights = append(c.Weights, c.Weights[0]) }, wantErr: "cost weights of parameter mode are declared twice"},
		{name: "negative weight", mutate: func(c *Cost) { c.Weights[0].Values["slow"] = -2 }, wantErr: "cost weight of mode=slow is -2"},
		{name: "bad clock", mutate: func(c *Cost) { c.Cases[0].Clock = "kvm" }, wantErr: `experiment fake/first: cost case 1: clock "kvm"`},
		{name: "bad shift", mutate: func(c *Cost) { c.Cases[0].Clock = "icount:x" }, wantErr: `cost case 1: clock "icount:x"`},
		{name: "icount shift", mutate: func(c *Cost) { c.Cases[0].Clock = "icount:3" }},
		{name: "case term", mutate: func(c *Cost) { c.Cases[0].Terms[0].Per = []string{"m"} }, wantErr: `cost case 1: term per m names parameter "m"`},
		{name: "empty profile", mutate: func(c *Cost) { c.Cases[0].Profiles = []string{""} }, wantErr: "cost case 1: an empty profile name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := costDescription()
			tt.mutate(d.Experiments[0].Cost)
			checkValidate(t, d, tt.wantErr)
		})
	}
}

func TestCostCaseMatches(t *testing.T) {
	for _, tt := range []struct {
		c              CostCase
		clock, profile string
		want           bool
	}{
		{CostCase{}, "", "", true},
		{CostCase{Clock: "icount"}, "icount:0", "p", true},
		{CostCase{Clock: "icount"}, "icount", "p", true},
		{CostCase{Clock: "icount"}, "host", "p", false},
		{CostCase{Clock: "icount:0"}, "icount:3", "p", false},
		{CostCase{Clock: "host"}, "", "p", false},
		{CostCase{Profiles: []string{"a", "b"}}, "host", "b", true},
		{CostCase{Profiles: []string{"a"}}, "host", "", false},
	} {
		if got := tt.c.Matches(tt.clock, tt.profile); got != tt.want {
			t.Errorf("%+v.Matches(%q, %q) = %v, want %v", tt.c, tt.clock, tt.profile, got, tt.want)
		}
	}
}

// TestParseDescriptionCost: a description.json's cost in its JSON form,
// and the error naming the experiment and the parameter of a bad one.
func TestParseDescriptionCost(t *testing.T) {
	const head = `{"name": "x", "version": "1", "experiments": [{"name": "e", "metrics": [{"name": "m", "unit": "s"}],
		"params": [{"name": "lines", "type": "int", "default": "10"}, {"name": "target", "type": "string", "default": "all", "choices": ["all", "one"]}],`
	d, err := ParseDescription([]byte(head + `"cost": {"seconds": 1.5, "terms": [{"per": ["lines", "target"], "seconds": 0.002}],
		"weights": [{"param": "target", "values": {"all": 7, "one": 1}}], "cases": [{"clock": "host", "seconds": 3}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := d.Experiments[0].RepeatCost(map[string]string{"lines": "1000"}, "icount:0", "p"); math.Abs(got-(1.5+0.002*1000*7)) > 1e-9 {
		t.Errorf("RepeatCost = %v, want 15.5", got)
	}
	_, err = ParseDescription([]byte(head + `"cost": {"terms": [{"per": ["linez"], "seconds": 0.002}]}}]}`))
	if err == nil || !strings.Contains(err.Error(), `experiment x/e: cost: term per linez names parameter "linez"`) {
		t.Errorf("a term naming no parameter: %v", err)
	}
	_, err = ParseDescription([]byte(head + `"cost": {"terms": [{"per": ["lines"], "secs": 0.002}]}}]}`))
	if err == nil || !strings.Contains(err.Error(), "secs") {
		t.Errorf("an unknown field of a term: %v", err)
	}
}
