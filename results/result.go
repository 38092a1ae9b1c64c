// Package results owns the result document of one run (its types, the
// claims and verdicts it carries), the on-disk store and queries over it.
// It imports the standard library and the contract's plain types
// (lab/plugins/contract, the samples, claims and figures a plugin
// declares or reports) only: statistics (results/stats),
// claims' rules (results/claims), comparisons (results/compare), rendering
// (results/render) and the matrix (results/matrix) build on it.
// Machine.Profile is carried as an opaque value and read through its JSON
// form.
package results

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"lab/plugins/contract"
)

// What the plugin reported of a run, as the contract defines it
// (lab/plugins/contract): its samples, the guest it ran in and how it
// ended. The host adds one status, StatusInterrupted.
type (
	Sample   = contract.Sample
	GuestEnv = contract.GuestEnv
	Outcome  = contract.Outcome
)

// Reference is one figure published by the original authors (SEEDS.md),
// as an experiment declares it.
type Reference struct {
	contract.Reference
	// Bench is the plugin experiment whose metric this figure compares
	// with ("forktime", "create"); empty when no plugin measures it yet.
	Bench string `json:"bench,omitempty"`
}

// MachineRecord describes the VM a run used, as resolved on the host: the
// record of a machine, not the machine (vm.Machine).
type MachineRecord struct {
	Name         string   `json:"name"`
	Profile      any      `json:"profile"` // the resolved images.Profile
	QEMUArgv     []string `json:"qemu_argv"`
	QEMUVersion  string   `json:"qemu_version"`
	Accelerator  string   `json:"accelerator"` // kvm or tcg
	Clock        string   `json:"clock"`
	KernelID     string   `json:"kernel_id"`
	KernelSHA256 string   `json:"kernel_sha256"`
	// KernelEntry is how QEMU entered it: bzimage (the Linux boot
	// protocol) or pvh (the uncompressed vmlinux's PVH entry).
	KernelEntry   string `json:"kernel_entry,omitempty"`
	KernelPackage string `json:"kernel_package"` // Debian package and version
	// KernelConfig and KernelNotable are set for a kernel lab built (`lab
	// image build`): the sha256 of its full .config and the options a
	// benchmark depends on most (hz, preempt, hrtimers, split, cpu).
	KernelConfig  string            `json:"kernel_config,omitempty"`
	KernelNotable map[string]string `json:"kernel_notable,omitempty"`
	// Boot says how the VM came up: cold, or restored from a booted
	// snapshot of the same configuration.
	Boot string `json:"boot,omitempty"`
}

// SchemaVersion is the version of the result document this lab writes.
// 1 (the field absent) is the document before claims; 2 added Verdicts.
// A document of a newer version than this is refused on load; older ones
// load as they are.
const SchemaVersion = 2

// Result is the document written for one run.
type Result struct {
	// Schema is the document's SchemaVersion; 0 in a document written
	// before versions were recorded (version 1).
	Schema        int               `json:"schema,omitempty"`
	ID            string            `json:"id"`
	Started       time.Time         `json:"started"`
	Finished      time.Time         `json:"finished"`
	Command       []string          `json:"command"`
	Machine       MachineRecord     `json:"machine"`
	Guest         GuestEnv          `json:"guest"`
	Plugin        string            `json:"plugin"`
	PluginVersion string            `json:"plugin_version"`
	Experiment    string            `json:"experiment"`
	Parameters    map[string]string `json:"parameters"`
	Samples       []Sample          `json:"samples"`
	Summary       []Summary         `json:"summary"`
	Outcome       Outcome           `json:"outcome"`
	Comparisons   []Comparison      `json:"comparisons,omitempty"`
	// Verdicts are the verdicts on the claims of the run's experiment.
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// Sweep is set for a swept run (lab run --sweep): the keys and values
	// swept and what became of each point.
	Sweep *Sweep `json:"sweep,omitempty"`
	// Harness records what running the plugin cost, apart from the
	// measurement itself.
	Harness *Harness `json:"harness,omitempty"`
	// Peer is the second guest of a run with a peer.
	Peer *Peer `json:"peer,omitempty"`
	// Interference lists the commands that ran in the guest while this run
	// measured there (`lab exec --no-wait`, `lab cp --no-wait`): the
	// numbers may be disturbed by them.
	Interference []Interference `json:"interference,omitempty"`
	// TickSampled names the metrics of the run that count timer ticks
	// (the experiment declares them): lab history gates on none of them.
	TickSampled []string `json:"tick_sampled,omitempty"`
	// AddTo is the run whose repeats this run adds to (lab run --add-to,
	// an adaptive round of lab reproduce): a run of the same cell (plugin
	// and version, experiment, machine, clock, parameters but the repeat
	// count) that finished before this one started. The claims' judge
	// pools the two as one cell's evidence; each run's repeats stay its
	// own, so nothing is paired across them.
	AddTo string `json:"add_to,omitempty"`
}

// Interference is one command that ran in the guest during a run.
type Interference struct {
	Time    time.Time `json:"time"`
	Command []string  `json:"command"`
}

// Harness is the cost of getting a plugin running in the guest.
type Harness struct {
	// StartSeconds is from `lab run` starting to the plugin's first RPC
	// answered (host wall time).
	StartSeconds float64 `json:"start_seconds"`
	// OpenSeconds is from pushing the plugin to its first RPC answered.
	OpenSeconds float64 `json:"open_seconds"`
	// PushSeconds is the time spent pushing files; FilesSent of them were
	// transferred and FilesCached were already in the guest.
	PushSeconds float64 `json:"push_seconds"`
	FilesSent   int     `json:"files_sent"`
	FilesCached int     `json:"files_cached"`
	// StartRetried is why the plugin's first start failed, if it had to
	// be started twice (it ended before writing anything).
	StartRetried string `json:"start_retried,omitempty"`
	// OutputDropped says what of the plugin's stdout and stderr lab
	// dropped past its cap (a line each), if any.
	OutputDropped []string `json:"output_dropped,omitempty"`
	// LeftBehind says what the plugin left in the guest that lab had to
	// clean up after it: processes killed, a temporary directory removed.
	LeftBehind []string `json:"left_behind,omitempty"`
}

// Summary is the statistics of one metric (and label set) across repeats.
type Summary struct {
	Metric string            `json:"metric"`
	Unit   string            `json:"unit"`
	Labels map[string]string `json:"labels,omitempty"`
	N      int               `json:"n"`
	Median float64           `json:"median"`
	Mean   float64           `json:"mean"`
	// TrimmedMean is the mean after dropping one min and one max, E1's
	// published method; equal to Mean below three values.
	TrimmedMean float64 `json:"trimmed_mean"`
	Min         float64 `json:"min"`
	Max         float64 `json:"max"`
	MAD         float64 `json:"mad"`
	Stddev      float64 `json:"stddev"`
	CV          float64 `json:"cv"` // stddev / mean
}

// Comparison puts one of our summaries beside a published figure.
type Comparison struct {
	Metric    string            `json:"metric"`
	Labels    map[string]string `json:"labels,omitempty"`
	Ours      float64           `json:"ours"`
	Published float64           `json:"published"`
	Unit      string            `json:"unit"`
	Machine   string            `json:"machine"`
	Source    string            `json:"source"`
	// Ratio is Ours / Published.
	Ratio float64 `json:"ratio"`
	// Experiment is the write-up the figure comes from (E1, E2, anchor).
	Experiment string `json:"experiment,omitempty"`
	// Profile is the lab profile standing for Machine, if any.
	Profile string `json:"profile,omitempty"`
	// SameProfile is true when Profile is the profile this run used: the
	// figure this run reproduces, rather than one shown for context.
	SameProfile bool   `json:"same_profile,omitempty"`
	Note        string `json:"note,omitempty"`
}

// DropNonFinite removes the samples whose value is NaN or infinite, which
// JSON cannot carry, and returns one line per sample dropped ("metric m
// repeat r: NaN"). A plugin should never send one (the SDK refuses them);
// this keeps a result document writable if one slips through, and the
// caller says in the outcome what was dropped.
func (r *Result) DropNonFinite() []string {
	var dropped []string
	kept := r.Samples[:0:0]
	for _, s := range r.Samples {
		if _, bad := nonFinite(field{"value", s.Value}); bad {
			dropped = append(dropped, fmt.Sprintf("metric %s%s repeat %d: %v", s.Metric, LabelSuffix(s.Labels), s.Repeat, s.Value))
			continue
		}
		kept = append(kept, s)
	}
	if dropped != nil {
		r.Samples = kept
	}
	return dropped
}

// CheckFinite returns an error naming the first number in r that JSON
// cannot carry (NaN, ±Inf), so a caller can say which one instead of
// "json: unsupported value".
func (r *Result) CheckFinite() error {
	for _, s := range r.Samples {
		if f, bad := nonFinite(field{"value", s.Value}); bad {
			return fmt.Errorf("sample of metric %s%s repeat %d: %s is %v, not a finite number", s.Metric, LabelSuffix(s.Labels), s.Repeat, f.name, f.v)
		}
	}
	for _, s := range r.Summary {
		if f, bad := nonFinite(field{"median", s.Median}, field{"mean", s.Mean}, field{"trimmed_mean", s.TrimmedMean},
			field{"min", s.Min}, field{"max", s.Max}, field{"mad", s.MAD}, field{"stddev", s.Stddev}, field{"cv", s.CV}); bad {
			return fmt.Errorf("summary of metric %s%s: %s is %v, not a finite number", s.Metric, LabelSuffix(s.Labels), f.name, f.v)
		}
	}
	for _, c := range r.Comparisons {
		if f, bad := nonFinite(field{"ours", c.Ours}, field{"published", c.Published}, field{"ratio", c.Ratio}); bad {
			return fmt.Errorf("comparison of metric %s%s with %s: %s is %v, not a finite number", c.Metric, LabelSuffix(c.Labels), c.Machine, f.name, f.v)
		}
	}
	for _, v := range r.Verdicts {
		for _, n := range v.Numbers {
			if f, bad := nonFinite(field{n.Name, n.Value}); bad {
				return fmt.Errorf("verdict on claim %s: %s is %v, not a finite number", v.Claim, f.name, f.v)
			}
		}
	}
	if h := r.Harness; h != nil {
		if f, bad := nonFinite(field{"start_seconds", h.StartSeconds}, field{"open_seconds", h.OpenSeconds}, field{"push_seconds", h.PushSeconds}); bad {
			return fmt.Errorf("harness %s is %v, not a finite number", f.name, f.v)
		}
	}
	return nil
}

// MaxSamples is the most samples lab keeps of one run: a sweep of the
// four plugins' largest, at 32 repeats, holds a few thousand.
const MaxSamples = 100000

// CheckSamples returns an error naming the first sample lab cannot take
// as a measurement of this run: more than MaxSamples of them, or a repeat
// index outside the run's repeats (its "repeat" parameter, when it has
// one). The metric and the repeat are named.
func (r *Result) CheckSamples() error {
	if n := len(r.Samples); n > MaxSamples {
		return fmt.Errorf("%d samples, more than the %d lab keeps of a run (MaxSamples)", n, MaxSamples)
	}
	repeats, err := strconv.Atoi(r.Parameters[RepeatParam])
	if err != nil || repeats < 1 {
		repeats = 0
	}
	for _, s := range r.Samples {
		if s.Repeat < 0 || repeats > 0 && s.Repeat >= repeats {
			return fmt.Errorf("sample of metric %s%s repeat %d: repeat index past the run's %d repeat(s) (indices start at 0)", s.Metric, LabelSuffix(s.Labels), s.Repeat, repeats)
		}
	}
	return nil
}

// DropImplausible removes the samples that cannot be measurements of
// this run and returns one line per kind of refusal, naming the first
// sample's metric and repeat and how many there were: a negative value of
// a metric that is not signed (signed says which are: a difference may be
// negative, a time, count, size or ratio cannot), a repeat index outside
// the run's repeats, and samples beyond MaxSamples. The caller fails the
// run with the lines: what a plugin returns is checked before it is saved.
func (r *Result) DropImplausible(signed func(metric string) bool) []string {
	repeats, err := strconv.Atoi(r.Parameters[RepeatParam])
	if err != nil || repeats < 1 {
		repeats = 0
	}
	type refusal struct {
		first string
		n     int
	}
	var order []string
	seen := map[string]*refusal{}
	refuse := func(kind, first string) {
		if f := seen[kind]; f != nil {
			f.n++
			return
		}
		seen[kind] = &refusal{first, 1}
		order = append(order, kind)
	}
	kept := r.Samples[:0:0]
	for _, s := range r.Samples {
		name := fmt.Sprintf("metric %s%s repeat %d", s.Metric, LabelSuffix(s.Labels), s.Repeat)
		switch {
		case s.Repeat < 0 || repeats > 0 && s.Repeat >= repeats:
			refuse(fmt.Sprintf("with a repeat index outside the run's %d repeat(s) (0 to %d)", repeats, repeats-1), name)
		case s.Value < 0 && !signed(s.Metric):
			refuse("with a negative value of a metric that is not signed (a difference the plugin declares \"signed\" may be negative)", fmt.Sprintf("%s: %s %s", name, FormatValue(s.Value), s.Unit))
		case len(kept) >= MaxSamples:
			refuse(fmt.Sprintf("beyond the %d samples lab keeps of a run (MaxSamples)", MaxSamples), name)
		default:
			kept = append(kept, s)
			continue
		}
	}
	if len(order) == 0 {
		return nil
	}
	r.Samples = kept
	lines := make([]string, len(order))
	for i, k := range order {
		f := seen[k]
		lines[i] = fmt.Sprintf("%d sample(s) %s, first %s", f.n, k, f.first)
	}
	return lines
}

type field struct {
	name string
	v    float64
}

// nonFinite returns the first field that is NaN or infinite.
func nonFinite(fs ...field) (field, bool) {
	for _, f := range fs {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return f, true
		}
	}
	return field{}, false
}

// LabelSuffix is " {k=v ...}" for a series' labels, "" for none.
func LabelSuffix(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	return " {" + FormatLabels(labels) + "}"
}
