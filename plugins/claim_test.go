package plugins

import (
	"reflect"
	"strings"
	"testing"
)

// everyKind is a description whose first experiment declares one claim of
// each kind.
func everyKind() *Description {
	d := testDescription()
	d.Experiments[0].Metrics = []Metric{{Name: "t", Unit: "s"}, {Name: "u", Unit: "s"}, {Name: "k", Unit: "threads"}}
	d.Experiments[0].Claims = []Claim{
		{ID: "E1.6", Source: "src", Statement: "t is 10+ times u", Machine: "m", Profile: "p", Rationale: "10+",
			Params: map[string]string{"mode": "fast"}, Ratio: &RatioClaim{Numerator: "t", Denominator: "u", Min: 10, Max: Ptr(84), Labels: map[string]string{"a": "b"}}},
		{ID: "E1.3", Source: "src", Statement: "k in 350..384", Range: &RangeClaim{Metric: "k", Min: Ptr(350), Max: Ptr(384), Unit: "threads"}},
		{ID: "E1.7", Source: "src", Statement: "t is 0.18", Near: &NearClaim{Metric: "t", Value: 0.18, Tolerance: 0.005, Unit: "s"}},
		{ID: "E1.1", Source: "src", Statement: "cross at 600", Crossover: &CrossoverClaim{First: "t", Second: "u", Sweep: "count", At: Ptr(600), Tolerance: 100}},
		{ID: "E1.2", Source: "src", Statement: "never cross", Crossover: &CrossoverClaim{First: "t", Second: "u", Sweep: "count", None: true}},
		{ID: "E1.5", Source: "src", Statement: "threads no faster", Ratio: &RatioClaim{Numerator: "t", Denominator: "t", Min: 1,
			NumeratorLabels: map[string]string{"mode": "thread"}, DenominatorLabels: map[string]string{"mode": "process"}}},
		{ID: "E1.9", Source: "src", Statement: "one metric, two curves", Crossover: &CrossoverClaim{First: "t", Second: "t", Sweep: "count", At: Ptr(600), Tolerance: 50,
			FirstLabels: map[string]string{"mode": "thread"}, SecondLabels: map[string]string{"mode": "process"}, FirstLowerBefore: true}},
		{ID: "E1.8", Source: "src", Statement: "2x on 2 cores", Speedup: &SpeedupClaim{Metric: "t", Baseline: "one", Profile: "two", Min: 1.5, Max: Ptr(2.5)}},
		{ID: "E1.4", Source: "src", Statement: "crashes from 350", Crash: &CrashClaim{Signal: "SIGSEGV", Param: "n", From: 350}},
		{ID: "E5.1", Source: "src", Statement: "design 1 far above 2 and 3", Order: &OrderClaim{Metric: "t", Label: "design",
			Above: []string{"1"}, Below: []string{"2", "3"}, Min: 5, Labels: map[string]string{"a": "b"}}},
	}
	d.Experiments[0].Peer = &Peer{Param: "mode", Value: "slow", Workload: "clientd", Args: []string{"7070"}}
	return d
}

func TestClaimsRoundTrip(t *testing.T) {
	d := everyKind()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := MarshalDescription(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"ratio": {`, `"numerator": "t"`, `"near": {`, `"crossover": {`, `"none": true`, `"speedup": {`, `"crash": {`, `"from": 350`,
		`"numeratorLabels": {`, `"denominatorLabels": {`, `"firstLabels": {`, `"secondLabels": {`, `"firstLowerBefore": true`,
		`"order": {`, `"above": [`, `"peer": {`, `"workload": "clientd"`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("description JSON lacks %s:\n%s", s, b)
		}
	}
	got, err := ParseDescription(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got.Experiments[0].Claims, d.Experiments[0].Claims)
	}
	// And over the wire, as Describe serves it.
	if back := descriptionFromWire(descriptionToWire(d)); !reflect.DeepEqual(back, d) {
		t.Errorf("wire round trip differs: %+v", back.Experiments[0].Claims)
	}
	kinds := map[string]string{"E1.6": KindRatio, "E1.3": KindRange, "E1.7": KindNear, "E1.1": KindCrossover, "E1.8": KindSpeedup, "E1.4": KindCrash, "E5.1": KindOrder}
	for _, c := range d.Experiments[0].Claims {
		if want, ok := kinds[c.ID]; ok && c.Kind() != want {
			t.Errorf("claim %s kind = %q, want %q", c.ID, c.Kind(), want)
		}
	}
}

func TestClaimsValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(c *Claim, d *Description)
		wantErr string
	}{
		{"ok", func(*Claim, *Description) {}, ""},
		{"bad id", func(c *Claim, _ *Description) { c.ID = "E 1" }, `claim id "E 1"`},
		{"no statement", func(c *Claim, _ *Description) { c.Statement = "" }, "needs a statement and a source"},
		{"no kind", func(c *Claim, _ *Description) { c.Ratio = nil }, "sets 0 kinds"},
		{"two kinds", func(c *Claim, _ *Description) { c.Near = &NearClaim{Metric: "t", Value: 1, Tolerance: 1, Unit: "s"} }, "sets 2 kinds (ratio, near)"},
		{"unknown metric", func(c *Claim, _ *Description) { c.Ratio.Numerator = "nope" }, `unknown metric "nope"; the experiment's metrics: t, u, k`},
		{"factor 0", func(c *Claim, _ *Description) { c.Ratio.Min = 0 }, "min > 0"},
		{"max below min", func(c *Claim, _ *Description) { c.Ratio.Max = Ptr(5) }, "max (if set) >= min"},
		{"unknown param", func(c *Claim, _ *Description) { c.Params = map[string]string{"zz": "1"} }, `unknown parameter "zz"`},
		{"bad param value", func(c *Claim, _ *Description) { c.Params = map[string]string{"n": "0"} }, "parameter n"},
		{"repeated id", func(_ *Claim, d *Description) { d.Experiments[0].Claims[2].ID = "E1.6" }, "claim id E1.6 is declared twice"},
		{"near unit", func(_ *Claim, d *Description) { d.Experiments[0].Claims[2].Near.Unit = "ms" }, `unit "ms" is not metric t's unit "s"`},
		{"near no tolerance", func(_ *Claim, d *Description) { d.Experiments[0].Claims[2].Near.Tolerance = 0 }, "tolerance > 0"},
		{"range no bound", func(_ *Claim, d *Description) {
			d.Experiments[0].Claims[1].Range.Min, d.Experiments[0].Claims[1].Range.Max = nil, nil
		}, "range needs min or max"},
		{"crossover both", func(_ *Claim, d *Description) { d.Experiments[0].Claims[4].Crossover.At = Ptr(1) }, "exactly one of at"},
		{"speedup same profile", func(_ *Claim, d *Description) { d.Experiments[0].Claims[7].Speedup.Profile = "one" }, "two different profiles"},
		{"crash unknown param", func(_ *Claim, d *Description) { d.Experiments[0].Claims[8].Crash.Param = "size" }, "crash needs a signal and the size parameter"},
		{"order no label", func(_ *Claim, d *Description) { d.Experiments[0].Claims[9].Order.Label = "" }, "order needs the label"},
		{"order empty side", func(_ *Claim, d *Description) { d.Experiments[0].Claims[9].Order.Below = nil }, "one value above and one below"},
		{"order both sides", func(_ *Claim, d *Description) { d.Experiments[0].Claims[9].Order.Below = []string{"1"} }, "puts design=1 both above and below"},
		{"order fixes its label", func(_ *Claim, d *Description) {
			d.Experiments[0].Claims[9].Order.Labels = map[string]string{"design": "1"}
		}, "leave it out of labels"},
		{"order min 0", func(_ *Claim, d *Description) { d.Experiments[0].Claims[9].Order.Min = 0 }, "order needs min > 0"},
		{"order unknown metric", func(_ *Claim, d *Description) { d.Experiments[0].Claims[9].Order.Metric = "cpu" }, `unknown metric "cpu"`},
		{"peer unknown param", func(_ *Claim, d *Description) { d.Experiments[0].Peer.Param = "clients" }, `peer names unknown parameter "clients"`},
		{"peer bad value", func(_ *Claim, d *Description) { d.Experiments[0].Peer.Value = "peer" }, "peer: parameter mode"},
		{"peer no workload", func(_ *Claim, d *Description) { d.Experiments[0].Peer.Workload = "" }, "peer workload"},
		{"crossover of one series", func(_ *Claim, d *Description) {
			d.Experiments[0].Claims[6].Crossover.SecondLabels = map[string]string{"mode": "thread"}
		},
			"the same series (t); tell them apart with first_labels and second_labels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := everyKind()
			tt.mutate(&d.Experiments[0].Claims[0], d)
			err := d.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Validate = %v, want error containing %q", err, tt.wantErr)
			case err != nil && !strings.Contains(err.Error(), "fake/first"):
				t.Errorf("error %q does not name the experiment", err)
			}
		})
	}
}

func TestPeerWants(t *testing.T) {
	p := &Peer{Param: "clients", Value: "peer", Workload: "clientd"}
	if !p.Wants(map[string]string{"clients": "peer"}) || p.Wants(map[string]string{"clients": "local"}) || p.Wants(nil) {
		t.Error("Wants does not follow the parameter")
	}
	var none *Peer
	if none.Wants(map[string]string{"clients": "peer"}) {
		t.Error("an experiment without a peer wants one")
	}
}
