package plugins

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	"google.golang.org/protobuf/encoding/protojson"

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
			we.Params = append(we.Params, &wire.Param{Name: p.Name, Type: p.Type, Default: p.Default,
				Min: clonePtr(p.Min), Max: clonePtr(p.Max), Choices: clone(p.Choices), Help: p.Help})
		}
		for _, m := range e.Metrics {
			we.Metrics = append(we.Metrics, &wire.Metric{Name: m.Name, Unit: m.Unit, Help: m.Help})
		}
		for _, r := range e.References {
			we.References = append(we.References, &wire.Reference{Experiment: r.Experiment, Source: r.Source,
				Machine: r.Machine, Profile: r.Profile, Metric: r.Metric, Value: r.Value, Unit: r.Unit,
				Labels: maps.Clone(r.Labels), Note: r.Note})
		}
		w.Experiments = append(w.Experiments, we)
	}
	return w
}

func descriptionFromWire(w *wire.Description) *Description {
	d := &Description{Name: w.GetName(), Version: w.GetVersion(), Summary: w.GetSummary()}
	for _, we := range w.GetExperiments() {
		e := Experiment{Name: we.GetName(), Summary: we.GetSummary()}
		for _, p := range we.GetParams() {
			e.Params = append(e.Params, Param{Name: p.GetName(), Type: p.GetType(), Default: p.GetDefault(),
				Min: clonePtr(p.Min), Max: clonePtr(p.Max), Choices: clone(p.GetChoices()), Help: p.GetHelp()})
		}
		for _, m := range we.GetMetrics() {
			e.Metrics = append(e.Metrics, Metric{Name: m.GetName(), Unit: m.GetUnit(), Help: m.GetHelp()})
		}
		for _, r := range we.GetReferences() {
			e.References = append(e.References, Reference{Experiment: r.GetExperiment(), Source: r.GetSource(),
				Machine: r.GetMachine(), Profile: r.GetProfile(), Metric: r.GetMetric(), Value: r.GetValue(),
				Unit: r.GetUnit(), Labels: cloneMap(r.GetLabels()), Note: r.GetNote()})
		}
		d.Experiments = append(d.Experiments, e)
	}
	return d
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
func cloneMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}
