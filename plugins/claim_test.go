package plugins

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"lab/plugins/contract"
)

// everyKind is a description whose first experiment declares one claim of
// each kind, and of each variant of a kind.
func everyKind() *Description {
	d := testDescription()
	d.Experiments[0].Metrics = []Metric{{Name: "t", Unit: "s"}, {Name: "u", Unit: "s"}, {Name: "k", Unit: "threads"}}
	thread, process := map[string]string{"mode": "thread"}, map[string]string{"mode": "process"}
	d.Experiments[0].Claims = []Claim{
		{ID: "E1.6", Source: "src", Statement: "t is 10+ times u", Machine: "m", Profile: "p", Rationale: "10+",
			SourceWords: "10+ times", Conventions: []string{"at-least"}, Fidelity: "not the original kernel",
			Scope: &Scope{Profiles: []string{"p"}, Variants: true, Params: map[string]string{"mode": "fast"}, Clocks: []string{ClockHost, ClockIcount},
				MinPluginVersion: "1.0.0", Run: map[string]string{"n": "10"}},
			Ratio: &RatioClaim{Numerator: "t", Denominator: "u", Min: 10, Max: Ptr(84), Labels: map[string]string{"a": "b"}}},
		{ID: "E1.3a", PartOf: "E1.3", Source: "src", Statement: "k in 350..384", ByConstruction: "3 GB / 8 MB",
			Range: &RangeClaim{Metric: "k", Min: Ptr(350), Max: Ptr(384), Unit: "threads"}},
		{ID: "E1.7", Source: "src", Statement: "t is 0.18", Calibration: &Calibration{InstrPerNsLo: 0.4, InstrPerNsHi: 2.1, Basis: "any Celeron", Confidence: "low"},
			Range: &RangeClaim{Metric: "t", Min: Ptr(0.175), Max: Ptr(0.185), Unit: "s"}},
		{ID: "E1.1", Source: "src", Statement: "cross in 500..1000",
			Scope:     &Scope{Sweep: &ScopeSweep{Key: "n", Points: []string{"5", "500", "1000"}, Required: []string{"500", "1000"}}},
			Crossover: &CrossoverClaim{First: "t", Second: "u", Sweep: "n", BandStart: 500, BandEnd: 1000, Before: BeforeBelow}},
		{ID: "E1.2a", Source: "src", Statement: "pull ahead from 1000",
			Crossover: &CrossoverClaim{First: "t", Second: "t", Sweep: "n", BandStart: 500, BandEnd: 1000, Before: BeforeNotAbove, Margin: 0.1,
				FirstLabels: thread, SecondLabels: process}},
		{ID: "E1.5", Source: "src", Statement: "no advantage for threads", Equivalence: &EquivalenceClaim{Numerator: "t", Denominator: "t",
			NumeratorLabels: thread, DenominatorLabels: process, Margin: 0.1, Sides: SidesLower}},
		{ID: "E1.9", Source: "src", Statement: "pools no better", Equivalence: &EquivalenceClaim{Numerator: "t", Denominator: "t",
			Margin: 0.1, Sides: SidesLower, Label: "design", Numerators: []string{"2", "3"}, Denominators: []string{"1"}}},
		{ID: "E1.8a", Source: "src", Statement: "2x on 2 cores", Speedup: &SpeedupClaim{Metric: "t", Baseline: "one", Profile: "two", Min: 1.5, Max: Ptr(2.5)}},
		{ID: "E1.3b", Source: "src", Statement: "crashes from 350", Crash: &CrashClaim{Signal: "SIGSEGV", Param: "n", From: 350}},
		{ID: "E5.2", Source: "src", Statement: "design 1 above 2 and 3", Order: &OrderClaim{Metric: "t", Label: "design",
			Above: []string{"1"}, Below: []string{"2", "3"}, Min: 1, Labels: map[string]string{"a": "b"},
			Pairs: []OrderPair{{Above: "3", Below: "5"}}}},
		{ID: "E5.1", Source: "src", Statement: "far more beyond the baseline", DiffRatio: &DiffRatioClaim{Metric: "t", Label: "design",
			Numerator: "1", Denominators: []string{"2", "3"}, Baseline: "0", Factor: 10}},
		{ID: "E1.4b", Source: "src", Statement: "threads trend faster", Trend: &TrendClaim{Numerator: "t", Denominator: "t", Sweep: "n",
			Margin: 0.1, NumeratorLabels: thread, DenominatorLabels: process}},
		{ID: "E4.1", Source: "src", Statement: "Sleep rounds up", Untestable: &UntestableClaim{Property: "Windows' Sleep granularity",
			Instead: "u", InsteadLabels: map[string]string{"a": "b"}, InsteadNote: "Linux hrtimers"}},
		{ID: "E3.1b", Source: "src", Statement: "kernel time", Range: &RangeClaim{Metric: "t", ShareWith: "u", Min: Ptr(0.5), Unit: "share"}},
		{ID: "E1.4a", Source: "src", Statement: "runs succeed", Crash: &CrashClaim{Param: "n", Never: true}},
		{ID: "E1.8b", Source: "src", Statement: "close to one core", Equivalence: &EquivalenceClaim{Numerator: "t", Denominator: "t",
			Margin: 0.1, Sides: SidesBoth, Baseline: "one", Profile: "two"}},
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
	for _, s := range []string{`"ratio": {`, `"numerator": "t"`, `"crossover": {`, `"bandStart": 500`, `"before": "not_above"`, `"speedup": {`,
		`"crash": {`, `"from": 350`, `"never": true`, `"numeratorLabels": {`, `"denominatorLabels": {`, `"firstLabels": {`, `"secondLabels": {`,
		`"order": {`, `"above": [`, `"pairs": [`, `"equivalence": {`, `"sides": "lower"`, `"diffratio": {`, `"trend": {`, `"untestable": {`,
		`"shareWith": "u"`, `"scope": {`, `"minPluginVersion": "1.0.0"`, `"calibration": {`, `"instrPerNsLo": 0.4`, `"partOf": "E1.3"`,
		`"byConstruction"`, `"fidelity"`, `"sourceWords"`, `"conventions": [`, `"peer": {`, `"workload": "clientd"`} {
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
	kinds := map[string]string{"E1.6": KindRatio, "E1.3a": KindRange, "E1.7": KindRange, "E1.1": KindCrossover, "E1.8a": KindSpeedup,
		"E1.3b": KindCrash, "E5.2": KindOrder, "E1.5": KindEquivalence, "E5.1": KindDiffRatio, "E1.4b": KindTrend, "E4.1": KindUntestable}
	for _, c := range d.Experiments[0].Claims {
		if want, ok := kinds[c.ID]; ok && c.Kind() != want {
			t.Errorf("claim %s kind = %q, want %q", c.ID, c.Kind(), want)
		}
	}
}

func TestClaimsValidate(t *testing.T) {
	claim := func(d *Description, id string) *Claim {
		for i := range d.Experiments[0].Claims {
			if d.Experiments[0].Claims[i].ID == id {
				return &d.Experiments[0].Claims[i]
			}
		}
		panic(id)
	}
	tests := []struct {
		name    string
		mutate  func(c *Claim, d *Description)
		wantErr string
	}{
		{"ok", func(*Claim, *Description) {}, ""},
		{"bad id", func(c *Claim, _ *Description) { c.ID = "E 1" }, `claim id "E 1"`},
		{"no statement", func(c *Claim, _ *Description) { c.Statement = "" }, "needs a statement and a source"},
		{"no kind", func(c *Claim, _ *Description) { c.Ratio = nil }, "sets 0 kinds"},
		{"two kinds", func(c *Claim, _ *Description) { c.Untestable = &UntestableClaim{Property: "x"} }, "sets 2 kinds (ratio, untestable)"},
		{"unknown metric", func(c *Claim, _ *Description) { c.Ratio.Numerator = "nope" }, `unknown metric "nope"; the experiment's metrics: t, u, k`},
		{"factor 0", func(c *Claim, _ *Description) { c.Ratio.Min = 0 }, "min > 0"},
		{"max below min", func(c *Claim, _ *Description) { c.Ratio.Max = Ptr(5) }, "max (if set) >= min"},
		{"unknown param", func(c *Claim, _ *Description) { c.Scope.Params = map[string]string{"zz": "1"} }, `unknown parameter "zz"`},
		{"bad param value", func(c *Claim, _ *Description) { c.Scope.Params = map[string]string{"n": "0"} }, "parameter n"},
		{"run: unknown param", func(c *Claim, _ *Description) { c.Scope.Run = map[string]string{"zz": "1"} }, `scope run names unknown parameter "zz"`},
		{"run: bad value", func(c *Claim, _ *Description) { c.Scope.Run = map[string]string{"n": "0"} }, "scope run: parameter n"},
		{"run: also a param", func(c *Claim, _ *Description) { c.Scope.Run = map[string]string{"mode": "fast"} }, "scope run and scope params both give mode"},
		{"run: the sweep key", func(_ *Claim, d *Description) { claim(d, "E1.1").Scope.Run = map[string]string{"n": "5"} }, "scope run cannot give n"},
		{"unknown clock", func(c *Claim, _ *Description) { c.Scope.Clocks = []string{"icount:0"} }, `scope clock "icount:0"; use "host" or "icount"`},
		{"unknown convention", func(c *Claim, _ *Description) { c.Conventions = []string{"at-least", "farther"} },
			`cites convention "farther", which lab does not have (known: at-least, far,`},
		{"sweep key unknown", func(_ *Claim, d *Description) { claim(d, "E1.1").Scope.Sweep.Key = "count" }, `scope sweep key "count" is not a parameter`},
		{"sweep bad point", func(_ *Claim, d *Description) { claim(d, "E1.1").Scope.Sweep.Points = []string{"0"} }, "scope sweep: parameter n"},
		{"sweep required not a point", func(_ *Claim, d *Description) { claim(d, "E1.1").Scope.Sweep.Required = []string{"5000"} },
			"requires n=5000 but does not list it"},
		{"calibration no basis", func(_ *Claim, d *Description) { claim(d, "E1.7").Calibration.Basis = "" }, "calibration needs"},
		{"calibration upside down", func(_ *Claim, d *Description) { claim(d, "E1.7").Calibration.InstrPerNsHi = 0.1 }, "calibration needs"},
		{"repeated id", func(_ *Claim, d *Description) { claim(d, "E1.7").ID = "E1.6" }, "claim id E1.6 is declared twice"},
		{"range unit", func(_ *Claim, d *Description) { claim(d, "E1.7").Range.Unit = "ms" }, `unit "ms" is not metric t's unit "s"`},
		{"ratio NaN", func(_ *Claim, d *Description) { claim(d, "E1.6").Ratio.Min = math.NaN() }, "rule's numbers must be finite"},
		{"crossover infinite band", func(_ *Claim, d *Description) { claim(d, "E1.1").Crossover.BandEnd = math.Inf(1) }, "rule's numbers must be finite"},
		{"range no bound", func(_ *Claim, d *Description) { claim(d, "E1.3a").Range.Min, claim(d, "E1.3a").Range.Max = nil, nil }, "range needs min or max"},
		{"share above 1", func(_ *Claim, d *Description) { claim(d, "E3.1b").Range.Min = Ptr(2) }, "bounds a share"},
		{"share unknown", func(_ *Claim, d *Description) { claim(d, "E3.1b").Range.ShareWith = "v" }, `unknown metric "v"`},
		{"crossover no band", func(_ *Claim, d *Description) {
			claim(d, "E1.1").Crossover.BandStart, claim(d, "E1.1").Crossover.BandEnd = 0, 0
		}, "and a band"},
		{"crossover band upside down", func(_ *Claim, d *Description) { claim(d, "E1.1").Crossover.BandStart = 2000 }, "band_start <= band_end"},
		{"crossover before", func(_ *Claim, d *Description) { claim(d, "E1.1").Crossover.Before = "above" }, `before is "above"`},
		{"crossover not_above no margin", func(_ *Claim, d *Description) { claim(d, "E1.2a").Crossover.Margin = 0 }, "needs a margin > 0"},
		{"crossover of one series", func(_ *Claim, d *Description) {
			claim(d, "E1.2a").Crossover.SecondLabels = map[string]string{"mode": "thread"}
		},
			"the same series (t); tell them apart with first_labels and second_labels"},
		{"speedup same profile", func(_ *Claim, d *Description) { claim(d, "E1.8a").Speedup.Profile = "one" }, "two different profiles"},
		{"crash unknown param", func(_ *Claim, d *Description) { claim(d, "E1.3b").Crash.Param = "size" }, "crash needs the size parameter"},
		{"crash never with signal", func(_ *Claim, d *Description) { claim(d, "E1.4a").Crash.Signal = "SIGSEGV" }, "either a signal with from, or never"},
		{"order no label", func(_ *Claim, d *Description) { claim(d, "E5.2").Order.Label = "" }, "order needs the label"},
		{"order empty side", func(_ *Claim, d *Description) { o := claim(d, "E5.2").Order; o.Below, o.Pairs = nil, nil }, "values above and below, or pairs"},
		{"order both sides", func(_ *Claim, d *Description) { claim(d, "E5.2").Order.Below = []string{"1"} }, "puts design=1 both above and below"},
		{"order pair of one", func(_ *Claim, d *Description) { claim(d, "E5.2").Order.Pairs[0].Below = "3" }, `order pair "3" > "3"`},
		{"order fixes its label", func(_ *Claim, d *Description) { claim(d, "E5.2").Order.Labels = map[string]string{"design": "1"} },
			"leave it out of labels"},
		{"order min 0", func(_ *Claim, d *Description) { claim(d, "E5.2").Order.Min = 0 }, "order needs min > 0"},
		{"order unknown metric", func(_ *Claim, d *Description) { claim(d, "E5.2").Order.Metric = "cpu" }, `unknown metric "cpu"`},
		{"equivalence no margin", func(_ *Claim, d *Description) { claim(d, "E1.5").Equivalence.Margin = 0 }, "equivalence needs a margin > 0"},
		{"equivalence sides", func(_ *Claim, d *Description) { claim(d, "E1.5").Equivalence.Sides = "upper" }, `sides "both" or "lower"`},
		{"equivalence one profile", func(_ *Claim, d *Description) { claim(d, "E1.8b").Equivalence.Profile = "" }, "needs both baseline and profile"},
		{"equivalence label alone", func(_ *Claim, d *Description) { claim(d, "E1.9").Equivalence.Numerators = nil }, "label, numerators and denominators together"},
		{"diffratio no baseline", func(_ *Claim, d *Description) { claim(d, "E5.1").DiffRatio.Baseline = "" }, "diffratio needs"},
		{"trend no margin", func(_ *Claim, d *Description) { claim(d, "E1.4b").Trend.Margin = 0 }, "trend needs the sweep label and a margin"},
		{"untestable no property", func(_ *Claim, d *Description) { claim(d, "E4.1").Untestable.Property = "" }, "untestable needs the property"},
		{"untestable unknown instead", func(_ *Claim, d *Description) { claim(d, "E4.1").Untestable.Instead = "v" }, `unknown metric "v"`},
		{"peer unknown param", func(_ *Claim, d *Description) { d.Experiments[0].Peer.Param = "clients" }, `peer names unknown parameter "clients"`},
		{"peer bad value", func(_ *Claim, d *Description) { d.Experiments[0].Peer.Value = "peer" }, "peer: parameter mode"},
		{"peer no workload", func(_ *Claim, d *Description) { d.Experiments[0].Peer.Workload = "" }, "peer workload"},
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

// TestEveryKindCrossesTheWire: each kind the contract has is a field of
// the wire schema's oneof kind, and a claim of it comes back whole.
func TestEveryKindCrossesTheWire(t *testing.T) {
	d := everyKind()
	seen := map[string]bool{}
	for _, c := range d.Experiments[0].Claims {
		seen[c.Kind()] = true
		back := claimFromWire(claimToWire(c))
		if !reflect.DeepEqual(back, c) {
			t.Errorf("claim %s (%s) over the wire: got %+v", c.ID, c.Kind(), back.Rule())
		}
	}
	for _, k := range contract.KindNames() {
		if !seen[k] {
			t.Errorf("everyKind declares no %s claim: add one, so its wire form is tested", k)
		}
		if contract.NewRule(k) == nil {
			t.Errorf("contract.NewRule(%q) = nil", k)
		}
	}
	var c Claim
	c.SetRule(&RatioClaim{Min: 2})
	c.SetRule(&TrendClaim{Margin: 0.1})
	if c.Ratio != nil || c.Trend == nil || c.Kind() != KindTrend || len(c.Rules()) != 1 {
		t.Errorf("SetRule left %v", c.Kinds())
	}
}
