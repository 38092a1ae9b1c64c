// Package contract holds the plain data of the plugin contract that both
// sides keep: what a run measured (Sample, GuestEnv, Outcome), the
// published figures (Reference), the claims and their rules (Claim,
// RatioClaim...) and what a plugin asks lab to show (Table, Chart,
// WriteUp). The plugin SDK (lab/plugins) names them under its own names,
// as aliases; the result document (lab/results) carries them as they
// are, adding what only the host knows (whose claim, which experiment).
//
// They are the Go form of the messages of wire/benchmark.proto; lab/plugins
// (wire.go) is the one place that converts between the two. The package
// imports the standard library only and holds no behaviour beyond reading
// its own values, so a plugin binary and the result store both link it
// for free (lab/results' TestStandardLibraryOnly checks it).
package contract

// Outcome statuses a plugin gives.
const (
	StatusOK            = "ok"
	StatusFailed        = "failed"
	StatusExpectedCrash = "expected-crash"
)

// Sample is one measured value of one metric. Values must be finite: the
// SDK refuses NaN and Inf, naming the metric.
type Sample struct {
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	// Repeat is the 0-based repetition the sample belongs to.
	Repeat int `json:"repeat"`
	// Labels distinguish points of a sweep (e.g. {"count": "500"}).
	Labels map[string]string `json:"labels,omitempty"`
}

// GuestEnv is what the guest looks like, measured inside it.
type GuestEnv struct {
	Uname         string `json:"uname"` // uname -srvm
	KernelRelease string `json:"kernel_release"`
	CPUModel      string `json:"cpu_model"` // /proc/cpuinfo "model name"
	CPUFamily     int    `json:"cpu_family"`
	CPUModelNum   int    `json:"cpu_model_number"`
	OnlineCPUs    int    `json:"online_cpus"`
	PresentCPUs   int    `json:"present_cpus"`
	MemTotalKB    int64  `json:"mem_total_kb"`
	StackKB       int64  `json:"stack_kb"` // soft RLIMIT_STACK, -1 = unlimited
	Libc          string `json:"libc"`     // libc the workloads were linked with
}

// Outcome says how a run ended.
type Outcome struct {
	// Status is StatusOK, StatusFailed or StatusExpectedCrash; the host
	// records a run it stopped as "interrupted".
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// StderrTail is the end of what the failing workload (or plugin)
	// wrote to stderr.
	StderrTail string `json:"stderr_tail,omitempty"`
}

// Reference is one figure the original authors published, which the host
// puts beside the run's summary of the same metric.
type Reference struct {
	// Experiment is the write-up: E1..E5, or "anchor" for other figures.
	Experiment string `json:"experiment"`
	Source     string `json:"source"`
	// Machine is what the figure was measured on; Profile the lab profile
	// standing for it, if any.
	Machine string            `json:"machine"`
	Profile string            `json:"profile,omitempty"`
	Metric  string            `json:"metric"`
	Value   float64           `json:"value"`
	Unit    string            `json:"unit"`
	Labels  map[string]string `json:"labels,omitempty"`
	Note    string            `json:"note,omitempty"`
}
