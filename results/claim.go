package results

import (
	"slices"
	"strings"

	"lab/plugins/contract"
)

// Claim is one statement of a write-up, declared by the plugin experiment
// that decides it (lab/plugins/contract's Claim, with its rule), and
// whose it is: the host fills in Plugin, Bench and Kind.
type Claim struct {
	contract.Claim
	Plugin string `json:"plugin"`
	// Bench is the plugin experiment whose runs decide it.
	Bench string `json:"bench"`
	// Kind names the rule that is set (contract.KindRatio...).
	Kind string `json:"kind"`
}

// Verdicts.
const (
	Reproduced    = "reproduced"
	NotReproduced = "not reproduced"
	// Inconclusive: too few samples, or too much noise, to decide.
	Inconclusive = "inconclusive"
	// NotComparable: an absolute time measured under a clock that does
	// not make absolute times comparable, or under icount with the
	// published figure inside the calibrated interval.
	NotComparable = "not comparable"
	// NotRun: no in-scope run decided the claim.
	NotRun = "not run"
	// Untestable: a property of the original platform (Windows' Sleep,
	// .NET's Thread.Start, Solaris' fork) that a Linux guest cannot show.
	Untestable = "untestable here"
	// ClockDependent, KernelDependent, ConsoleDependent and their
	// combinations (Dependent): in-scope strata decided both ways, and
	// they differ in their clock, their kernel (Debian, era or upstream
	// variant), their console (fbcon, vgacon), or several. Headline
	// verdicts only.
	ClockDependent       = "clock-dependent"
	KernelDependent      = "kernel-dependent"
	ClockKernelDependent = "clock- and kernel-dependent"
	ConsoleDependent     = "console-dependent"
)

// The axes strata decided both ways can differ in, in the order
// Dependent names them.
const (
	AxisClock   = "clock"
	AxisConsole = "console"
	AxisKernel  = "kernel"
	AxisBuild   = "build"
)

// Dependent is the headline verdict of strata decided both ways that
// differ in axes: "clock-dependent", "clock- and kernel-dependent",
// "clock-, console- and kernel-dependent".
func Dependent(axes ...string) string {
	var names []string
	for _, a := range []string{AxisClock, AxisConsole, AxisKernel, AxisBuild} {
		if slices.Contains(axes, a) {
			names = append(names, a+"-")
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0] + "dependent"
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + "dependent"
}

// IsDependent says whether v is one of Dependent's verdicts.
func IsDependent(v string) bool { return strings.HasSuffix(v, "-dependent") }

// VerdictOrder lists every verdict in the order counts and tables give
// them: every combination of Dependent's axes after not reproduced.
var VerdictOrder = []string{Reproduced, NotReproduced, ClockDependent, KernelDependent, ConsoleDependent, ClockKernelDependent,
	Dependent(AxisClock, AxisConsole), Dependent(AxisConsole, AxisKernel), Dependent(AxisClock, AxisConsole, AxisKernel),
	Dependent(AxisBuild), Dependent(AxisClock, AxisBuild), Dependent(AxisKernel, AxisBuild), Dependent(AxisClock, AxisKernel, AxisBuild),
	Dependent(AxisConsole, AxisBuild), Dependent(AxisClock, AxisConsole, AxisBuild), Dependent(AxisConsole, AxisKernel, AxisBuild),
	Dependent(AxisClock, AxisConsole, AxisKernel, AxisBuild),
	Inconclusive, NotComparable, Untestable, NotRun}

// Verdict is what a claim's rule said about its evidence: at run time one
// run's (for a speedup, with the other profile's runs), in `lab claims`
// and the report every in-scope stored sample's. A headline verdict
// combines its Strata (docs/claims.md, "Verdict kinds").
type Verdict struct {
	Claim     string `json:"claim"`
	PartOf    string `json:"part_of,omitempty"`
	Kind      string `json:"kind"`
	Statement string `json:"statement"`
	Verdict   string `json:"verdict"`
	// Reason says why, in one line carrying the deciding numbers, and
	// ends with the claim's fidelity note.
	Reason string `json:"reason"`
	// Rule is the rule applied, in words.
	Rule    string   `json:"rule"`
	Numbers []Number `json:"numbers,omitempty"`
	// Runs are the runs whose samples decided it, sorted.
	Runs []string `json:"runs,omitempty"`
	// Note qualifies the verdict: the clock under which an absolute time
	// was decided, a profile other than the claim's.
	Note string `json:"note,omitempty"`
	// ByConstruction is set when the claim is true by construction of
	// the workload (why); the report counts such verdicts apart.
	ByConstruction string `json:"by_construction,omitempty"`
	// Fidelity is what our machine cannot show for this claim.
	Fidelity string `json:"fidelity,omitempty"`
	// Strata are the verdicts of each stratum (profile, clock,
	// accelerator) the headline combines, in a fixed order.
	Strata []Stratum `json:"strata,omitempty"`
	// OutOfScope are the stored runs of the claim's experiment that do
	// not decide it, each with why.
	OutOfScope []RunReason `json:"out_of_scope,omitempty"`
}

// Stratum is a claim's verdict from the evidence of one profile (its own
// kernel), clock and accelerator; strata are never pooled.
type Stratum struct {
	// Profile is the profile the runs ran on (for a kind across
	// profiles, "baseline vs profile"); Kernel its kernel id.
	Profile string `json:"profile"`
	Kernel  string `json:"kernel,omitempty"`
	// Build is the workload build the runs ran, when the claim is
	// decided on more than one (contract.ParamBuild).
	Build       string   `json:"build,omitempty"`
	Clock       string   `json:"clock"`
	Accelerator string   `json:"accelerator"`
	Verdict     string   `json:"verdict"`
	Reason      string   `json:"reason"`
	Numbers     []Number `json:"numbers,omitempty"`
	Runs        []string `json:"runs,omitempty"`
}

// RunReason is a stored run and why it does not decide a claim.
type RunReason struct {
	Run    string `json:"run"`
	Reason string `json:"reason"`
}

// Number is one number that decided a verdict.
type Number struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
}

// Class is what a verdict says of its claim, whatever shows it: a JUnit
// case passes a claim that held and fails one that did not (failed or
// split), skipping the rest; the report's badge is coloured by it.
type Class string

const (
	// ClassPassed: the claim held (reproduced).
	ClassPassed Class = "passed"
	// ClassFailed: the claim did not hold (not reproduced).
	ClassFailed Class = "failed"
	// ClassSplit: a dependent verdict: strata decided both ways, so the
	// claim did not hold across this machine's strata. It fails a JUnit
	// case; its badge is unsure's.
	ClassSplit Class = "split"
	// ClassUnsure: inconclusive; more repeats could decide it.
	ClassUnsure Class = "unsure"
	// ClassNotComparable: not comparable or untestable here; nothing
	// this machine measures could decide it.
	ClassNotComparable Class = "not comparable"
	// ClassNone: not run, or no verdict at all ("").
	ClassNone Class = "none"
	// ClassUnknown: a verdict this lab does not know.
	ClassUnknown Class = "unknown"
)

// verdicts is, for each verdict but Dependent's, its letter (lab
// history's table of claims) and its class: the one table every view of
// a verdict derives from (ClassOf, Letter, Decided).
var verdicts = map[string]struct {
	letter string
	class  Class
}{
	Reproduced:    {"R", ClassPassed},
	NotReproduced: {"N", ClassFailed},
	Inconclusive:  {"I", ClassUnsure},
	NotComparable: {"C", ClassNotComparable},
	Untestable:    {"U", ClassNotComparable},
	NotRun:        {"-", ClassNone},
	"":            {"-", ClassNone},
}

// LetterKey says what each Letter stands for.
const LetterKey = "R reproduced, N not reproduced, I inconclusive, C not comparable, U untestable here, D clock-, console- or kernel-dependent, - not run"

// ClassOf is what verdict v says of its claim: ClassSplit for every
// Dependent verdict, ClassUnknown for one this lab does not know.
func ClassOf(v string) Class {
	if k, ok := verdicts[v]; ok {
		return k.class
	}
	if IsDependent(v) {
		return ClassSplit
	}
	return ClassUnknown
}

// Letter is v in one letter (LetterKey), as lab history's table of
// claims shows a night's verdict: "D" for every Dependent verdict, "?"
// for one this lab does not know.
func Letter(v string) string {
	if k, ok := verdicts[v]; ok {
		return k.letter
	}
	if IsDependent(v) {
		return "D"
	}
	return "?"
}

// Decided says whether verdict v decides its claim, so that more runs or
// repeats would not change it: anything but inconclusive and not run
// (reproduced, not reproduced, dependent on the clock or kernel, not
// comparable, untestable here). It is lab's one meaning of "decided":
// lab reproduce repeats the claims it is false for.
func Decided(v string) bool { c := ClassOf(v); return c != ClassUnsure && c != ClassNone }

// Judged says whether a run in scope gave v a verdict (anything but not
// run), decided or not.
func (v Verdict) Judged() bool { return ClassOf(v.Verdict) != ClassNone }

// Values returns the samples of one series of r: metric with exactly
// these labels.
func (r *Result) Values(metric string, labels map[string]string) []float64 {
	var out []float64
	key := LabelKey(labels)
	for _, s := range r.Samples {
		if s.Metric == metric && LabelKey(s.Labels) == key {
			out = append(out, s.Value)
		}
	}
	return out
}

// WithKind returns c with Kind filled in from the rule that is set, for
// claims built in Go.
func (c Claim) WithKind() Claim {
	c.Kind = c.Claim.Kind()
	return c
}
