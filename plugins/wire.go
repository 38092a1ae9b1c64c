package plugins

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"

	"lab/plugins/contract"
	"lab/plugins/wire"
)

// This file is the one place that converts between the SDK's Go types and
// the generated wire types of benchmark.proto, both ways.

// ParseDescription reads a description in the proto's canonical JSON form
// (description.json) and validates it. Unknown fields are an error, so a
// misspelt field does not silently drop a parameter or a figure.
func ParseDescription(b []byte) (*Description, error) {
	var w wire.Description
	if err := protojson.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("plugin description: %w", err)
	}
	d := descriptionFromWire(&w)
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}

// MarshalDescription writes d in the proto's canonical JSON form, indented,
// byte for byte the same for the same description (protojson alone varies
// its whitespace on purpose).
func MarshalDescription(d *Description) ([]byte, error) {
	b, err := protojson.Marshal(descriptionToWire(d))
	if err != nil {
		return nil, fmt.Errorf("plugin %s: description: %w", d.Name, err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, fmt.Errorf("plugin %s: description: %w", d.Name, err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func descriptionToWire(d *Description) *wire.Description {
	w := &wire.Description{Name: d.Name, Version: d.Version, Summary: d.Summary}
	for _, e := range d.Experiments {
		we := &wire.Experiment{Name: e.Name, Summary: e.Summary}
		for _, p := range e.Params {
			wp := &wire.Param{Name: p.Name, Type: p.Type, Default: p.Default,
				Min: clonePtr(p.Min), Max: clonePtr(p.Max), Choices: clone(p.Choices), Help: p.Help}
			for _, n := range p.Needs {
				wp.Needs = append(wp.Needs, &wire.Need{Values: clone(n.Values), Consoles: clone(n.Consoles), Why: n.Why})
			}
			we.Params = append(we.Params, wp)
		}
		for _, m := range e.Metrics {
			we.Metrics = append(we.Metrics, &wire.Metric{Name: m.Name, Unit: m.Unit, Help: m.Help, Signed: m.Signed, TickSampled: m.TickSampled})
		}
		we.References = referencesToWire(e.References)
		for _, c := range e.Claims {
			we.Claims = append(we.Claims, claimToWire(c))
		}
		if p := e.Peer; p != nil {
			we.Peer = &wire.Peer{Param: p.Param, Value: p.Value, Workload: p.Workload, Args: clone(p.Args)}
		}
		for _, t := range e.Tables {
			wt := &wire.Table{Label: t.Label, Title: t.Title, Name: t.Name, Rows: maps.Clone(t.Rows), Notes: clone(t.Notes),
				Chart: chartToWire(t.Chart)}
			for _, c := range t.Columns {
				wc := &wire.Column{Metric: c.Metric, Header: c.Header, Sum: clone(c.Sum)}
				if b := c.Baseline; b != nil {
					wc.Baseline = &wire.Baseline{Metric: b.Metric, Row: b.Row}
				}
				wt.Columns = append(wt.Columns, wc)
			}
			we.Tables = append(we.Tables, wt)
		}
		for i := range e.Charts {
			we.Charts = append(we.Charts, chartToWire(&e.Charts[i]))
		}
		for _, u := range e.WriteUps {
			we.Writeups = append(we.Writeups, &wire.WriteUp{Id: u.ID, Title: u.Title, References: referencesToWire(u.References)})
		}
		we.RepeatSeconds = e.RepeatSeconds
		we.Cost = costToWire(e.Cost)
		w.Experiments = append(w.Experiments, we)
	}
	return w
}

func descriptionFromWire(w *wire.Description) *Description {
	d := &Description{Name: w.GetName(), Version: w.GetVersion(), Summary: w.GetSummary()}
	for _, we := range w.GetExperiments() {
		e := Experiment{Name: we.GetName(), Summary: we.GetSummary(), RepeatSeconds: we.GetRepeatSeconds(), Cost: costFromWire(we.GetCost())}
		for _, p := range we.GetParams() {
			ep := Param{Name: p.GetName(), Type: p.GetType(), Default: p.GetDefault(),
				Min: clonePtr(p.Min), Max: clonePtr(p.Max), Choices: clone(p.GetChoices()), Help: p.GetHelp()}
			for _, n := range p.GetNeeds() {
				ep.Needs = append(ep.Needs, Need{Values: clone(n.GetValues()), Consoles: clone(n.GetConsoles()), Why: n.GetWhy()})
			}
			e.Params = append(e.Params, ep)
		}
		for _, m := range we.GetMetrics() {
			e.Metrics = append(e.Metrics, Metric{Name: m.GetName(), Unit: m.GetUnit(), Help: m.GetHelp(), Signed: m.GetSigned(), TickSampled: m.GetTickSampled()})
		}
		e.References = referencesFromWire(we.GetReferences())
		for _, c := range we.GetClaims() {
			e.Claims = append(e.Claims, claimFromWire(c))
		}
		if p := we.GetPeer(); p != nil {
			e.Peer = &Peer{Param: p.GetParam(), Value: p.GetValue(), Workload: p.GetWorkload(), Args: clone(p.GetArgs())}
		}
		for _, wt := range we.GetTables() {
			t := Table{Label: wt.GetLabel(), Title: wt.GetTitle(), Name: wt.GetName(), Rows: cloneMap(wt.GetRows()),
				Notes: clone(wt.GetNotes()), Chart: chartFromWire(wt.GetChart())}
			for _, wc := range wt.GetColumns() {
				c := Column{Metric: wc.GetMetric(), Header: wc.GetHeader(), Sum: clone(wc.GetSum())}
				if b := wc.GetBaseline(); b != nil {
					c.Baseline = &Baseline{Metric: b.GetMetric(), Row: b.GetRow()}
				}
				t.Columns = append(t.Columns, c)
			}
			e.Tables = append(e.Tables, t)
		}
		for _, wc := range we.GetCharts() {
			e.Charts = append(e.Charts, *chartFromWire(wc))
		}
		for _, wu := range we.GetWriteups() {
			e.WriteUps = append(e.WriteUps, WriteUp{ID: wu.GetId(), Title: wu.GetTitle(), References: referencesFromWire(wu.GetReferences())})
		}
		d.Experiments = append(d.Experiments, e)
	}
	return d
}

func referencesToWire(rs []Reference) []*wire.Reference {
	var out []*wire.Reference
	for _, r := range rs {
		out = append(out, &wire.Reference{Experiment: r.Experiment, Source: r.Source,
			Machine: r.Machine, Profile: r.Profile, Metric: r.Metric, Value: r.Value, Unit: r.Unit,
			Labels: maps.Clone(r.Labels), Note: r.Note})
	}
	return out
}

func referencesFromWire(ws []*wire.Reference) []Reference {
	var out []Reference
	for _, r := range ws {
		out = append(out, Reference{Experiment: r.GetExperiment(), Source: r.GetSource(),
			Machine: r.GetMachine(), Profile: r.GetProfile(), Metric: r.GetMetric(), Value: r.GetValue(),
			Unit: r.GetUnit(), Labels: cloneMap(r.GetLabels()), Note: r.GetNote()})
	}
	return out
}

func chartToWire(c *Chart) *wire.Chart {
	if c == nil {
		return nil
	}
	return &wire.Chart{Label: c.Label, Stack: clone(c.Stack), Total: c.Total, Figures: clone(c.Figures), Title: c.Title,
		Axis: c.Axis, Reading: c.Reading, Params: c.Params, Room: c.Room}
}

func chartFromWire(w *wire.Chart) *Chart {
	if w == nil {
		return nil
	}
	return &Chart{Label: w.GetLabel(), Stack: clone(w.GetStack()), Total: w.GetTotal(), Figures: clone(w.GetFigures()),
		Title: w.GetTitle(), Axis: w.GetAxis(), Reading: w.GetReading(), Params: w.GetParams(), Room: w.GetRoom()}
}

func claimToWire(c Claim) *wire.Claim {
	w := &wire.Claim{Id: c.ID, PartOf: c.PartOf, Source: c.Source, SourceWords: c.SourceWords, DigestWords: c.DigestWords, Statement: c.Statement,
		Machine: c.Machine, Profile: c.Profile, Rationale: c.Rationale, Conventions: clone(c.Conventions),
		Fidelity: c.Fidelity, ByConstruction: c.ByConstruction}
	if s := c.Scope; s != nil {
		w.Scope = &wire.Scope{Profiles: clone(s.Profiles), Variants: s.Variants, Params: maps.Clone(s.Params),
			Clocks: clone(s.Clocks), MinPluginVersion: s.MinPluginVersion, Builds: clone(s.Builds), Run: maps.Clone(s.Run)}
		if sw := s.Sweep; sw != nil {
			w.Scope.Sweep = &wire.ScopeSweep{Key: sw.Key, Points: clone(sw.Points), Required: clone(sw.Required)}
		}
	}
	if k := c.Calibration; k != nil {
		w.Calibration = &wire.Calibration{InstrPerNsLo: k.InstrPerNsLo, InstrPerNsHi: k.InstrPerNsHi, Basis: k.Basis, Confidence: k.Confidence}
	}
	if r := c.Rule(); r != nil {
		ruleToWire(r, w)
	}
	return w
}

// ruleToWire sets w's kind to rule r: the field of the schema's oneof
// kind named as r's kind, filled from r's JSON (the schema's field names
// are the contract's JSON names; TestClaimsRoundTrip checks every kind).
// A rule that has no JSON form (a bound that is NaN or infinite, which
// validateClaim refuses) leaves the kind unset, and the other side
// refuses a claim with no kind.
func ruleToWire(r contract.Rule, w *wire.Claim) {
	m := w.ProtoReflect()
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(r.Kind()))
	if fd == nil || fd.ContainingOneof() == nil {
		return
	}
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	k := m.NewField(fd)
	if protojson.Unmarshal(b, k.Message().Interface()) == nil {
		m.Set(fd, k)
	}
}

// ruleFromWire is the rule w's kind holds, nil for none or a kind this
// side of the contract does not have.
func ruleFromWire(w *wire.Claim) contract.Rule {
	m := w.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("kind"))
	if fd == nil {
		return nil
	}
	r := contract.NewRule(string(fd.Name()))
	if r == nil {
		return nil
	}
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m.Get(fd).Message().Interface())
	if err != nil || json.Unmarshal(b, r) != nil {
		return nil
	}
	return r
}

func claimFromWire(w *wire.Claim) Claim {
	c := Claim{ID: w.GetId(), PartOf: w.GetPartOf(), Source: w.GetSource(), SourceWords: w.GetSourceWords(), DigestWords: w.GetDigestWords(),
		Statement: w.GetStatement(), Machine: w.GetMachine(), Profile: w.GetProfile(), Rationale: w.GetRationale(),
		Conventions: clone(w.GetConventions()), Fidelity: w.GetFidelity(), ByConstruction: w.GetByConstruction()}
	if s := w.GetScope(); s != nil {
		c.Scope = &contract.Scope{Profiles: clone(s.GetProfiles()), Variants: s.GetVariants(), Params: cloneMap(s.GetParams()),
			Clocks: clone(s.GetClocks()), MinPluginVersion: s.GetMinPluginVersion(), Builds: clone(s.GetBuilds()), Run: cloneMap(s.GetRun())}
		if sw := s.GetSweep(); sw != nil {
			c.Scope.Sweep = &contract.ScopeSweep{Key: sw.GetKey(), Points: clone(sw.GetPoints()), Required: clone(sw.GetRequired())}
		}
	}
	if k := w.GetCalibration(); k != nil {
		c.Calibration = &contract.Calibration{InstrPerNsLo: k.GetInstrPerNsLo(), InstrPerNsHi: k.GetInstrPerNsHi(),
			Basis: k.GetBasis(), Confidence: k.GetConfidence()}
	}
	c.SetRule(ruleFromWire(w))
	return c
}

func requestToWire(r *RunRequest) *wire.RunRequest {
	return &wire.RunRequest{Experiment: r.Experiment, Params: maps.Clone(r.Params), Repeat: int32(r.Repeat), WorkloadDir: r.WorkloadDir}
}

func requestFromWire(w *wire.RunRequest) *RunRequest {
	return &RunRequest{Experiment: w.GetExperiment(), Params: cloneMap(w.GetParams()), Repeat: int(w.GetRepeat()), WorkloadDir: w.GetWorkloadDir()}
}

func progressToWire(p *Progress) *wire.Progress {
	return &wire.Progress{Done: int32(p.Done), Total: int32(p.Total), Message: p.Message, Samples: samplesToWire(p.Samples)}
}

func progressFromWire(w *wire.Progress) Progress {
	return Progress{Done: int(w.GetDone()), Total: int(w.GetTotal()), Message: w.GetMessage(), Samples: samplesFromWire(w.GetSamples())}
}

func responseToWire(r *RunResponse) *wire.RunResponse {
	if r == nil {
		return nil
	}
	e := r.Env
	return &wire.RunResponse{
		Samples: samplesToWire(r.Samples),
		Env: &wire.GuestEnv{Uname: e.Uname, KernelRelease: e.KernelRelease, CpuModel: e.CPUModel,
			CpuFamily: int32(e.CPUFamily), CpuModelNumber: int32(e.CPUModelNum), OnlineCpus: int32(e.OnlineCPUs),
			PresentCpus: int32(e.PresentCPUs), MemTotalKb: e.MemTotalKB, StackKb: e.StackKB, Libc: e.Libc},
		Outcome: &wire.Outcome{Status: statusToWire[r.Outcome.Status], Reason: r.Outcome.Reason, StderrTail: r.Outcome.StderrTail},
		Log:     r.Log,
	}
}

func responseFromWire(w *wire.RunResponse) *RunResponse {
	if w == nil {
		return nil
	}
	e := w.GetEnv()
	return &RunResponse{
		Samples: samplesFromWire(w.GetSamples()),
		Env: GuestEnv{Uname: e.GetUname(), KernelRelease: e.GetKernelRelease(), CPUModel: e.GetCpuModel(),
			CPUFamily: int(e.GetCpuFamily()), CPUModelNum: int(e.GetCpuModelNumber()), OnlineCPUs: int(e.GetOnlineCpus()),
			PresentCPUs: int(e.GetPresentCpus()), MemTotalKB: e.GetMemTotalKb(), StackKB: e.GetStackKb(), Libc: e.GetLibc()},
		Outcome: Outcome{Status: statusFromWire[w.GetOutcome().GetStatus()], Reason: w.GetOutcome().GetReason(),
			StderrTail: w.GetOutcome().GetStderrTail()},
		Log: w.GetLog(),
	}
}

// An unspecified status maps to "" (the host treats it as ok, as it always
// has for a plugin that leaves Outcome empty) and an unknown one too.
var (
	statusToWire = map[string]wire.Status{
		StatusOK: wire.Status_STATUS_OK, StatusFailed: wire.Status_STATUS_FAILED, StatusExpectedCrash: wire.Status_STATUS_EXPECTED_CRASH,
	}
	statusFromWire = map[wire.Status]string{
		wire.Status_STATUS_OK: StatusOK, wire.Status_STATUS_FAILED: StatusFailed, wire.Status_STATUS_EXPECTED_CRASH: StatusExpectedCrash,
	}
)

func samplesToWire(ss []Sample) []*wire.Sample {
	if len(ss) == 0 {
		return nil
	}
	out := make([]*wire.Sample, len(ss))
	for i, s := range ss {
		out[i] = &wire.Sample{Metric: s.Metric, Value: s.Value, Unit: s.Unit, Repeat: int32(s.Repeat), Labels: maps.Clone(s.Labels)}
	}
	return out
}

func samplesFromWire(ws []*wire.Sample) []Sample {
	if len(ws) == 0 {
		return nil
	}
	out := make([]Sample, len(ws))
	for i, w := range ws {
		out[i] = Sample{Metric: w.GetMetric(), Value: w.GetValue(), Unit: w.GetUnit(), Repeat: int(w.GetRepeat()), Labels: cloneMap(w.GetLabels())}
	}
	return out
}

func clonePtr(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func clone(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return append([]string(nil), s...)
}

// cloneMap copies m, keeping an empty map nil so a round trip compares
// equal.
func cloneMap[V any](m map[string]V) map[string]V {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

func costToWire(c *Cost) *wire.Cost {
	if c == nil {
		return nil
	}
	w := &wire.Cost{Seconds: c.Seconds, Terms: costTermsToWire(c.Terms), Fitted: c.Fitted}
	for _, x := range c.Weights {
		w.Weights = append(w.Weights, &wire.CostWeight{Param: x.Param, Values: maps.Clone(x.Values)})
	}
	for _, k := range c.Cases {
		w.Cases = append(w.Cases, &wire.CostCase{Clock: k.Clock, Profiles: clone(k.Profiles), Seconds: k.Seconds, Terms: costTermsToWire(k.Terms)})
	}
	return w
}

func costTermsToWire(ts []CostTerm) []*wire.CostTerm {
	var out []*wire.CostTerm
	for _, t := range ts {
		out = append(out, &wire.CostTerm{Per: clone(t.Per), Seconds: t.Seconds})
	}
	return out
}

func costFromWire(w *wire.Cost) *Cost {
	if w == nil {
		return nil
	}
	c := &Cost{Seconds: w.GetSeconds(), Terms: costTermsFromWire(w.GetTerms()), Fitted: w.GetFitted()}
	for _, x := range w.GetWeights() {
		c.Weights = append(c.Weights, CostWeight{Param: x.GetParam(), Values: cloneMap(x.GetValues())})
	}
	for _, k := range w.GetCases() {
		c.Cases = append(c.Cases, CostCase{Clock: k.GetClock(), Profiles: clone(k.GetProfiles()), Seconds: k.GetSeconds(), Terms: costTermsFromWire(k.GetTerms())})
	}
	return c
}

func costTermsFromWire(ws []*wire.CostTerm) []CostTerm {
	var out []CostTerm
	for _, t := range ws {
		out = append(out, CostTerm{Per: clone(t.GetPer()), Seconds: t.GetSeconds()})
	}
	return out
}
