// Package plugins is the SDK a lab benchmark plugin imports: the contract's
// Go types, Serve, running workloads inside the guest, the environment
// report and Repeat, the helper owning a run's repeat loop. It holds nothing
// host-side (no lab/images, lab/vm, lab/results): a plugin binary stays
// small (TestPluginLinksNoHostCode checks what it links).
//
// The contract itself is the schema in wire/benchmark.proto (package
// lab.plugin.v1), which another language can implement; the types here are
// plain Go mirrors of its messages, converted at the gRPC edge (wire.go).
// Those the result document carries too (Sample, GuestEnv, Outcome,
// Reference, Claim and its rules, Table, Chart, WriteUp) are defined once,
// in lab/plugins/contract, and named here by aliases.
// A plugin declares what it can run as data, description.json (the proto's
// canonical JSON form of Description), embedded in its binary and handed to
// Serve; lab records it at build time and never runs plugin code on the
// host. The host side (finding plugins, their recorded descriptions, the
// runner that starts a plugin in a guest) is package lab/plugins/host.
package plugins

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"lab/plugins/contract"
)

// Benchmark is what a plugin implements; Serve answers Describe from the
// plugin's description.json.
//
// Run returns an error only when the run could not be carried out as asked
// (bad request, cancelled, the plugin itself broke). A workload that fails
// or crashes is a result, not an error: Run returns a response whose Outcome
// says so, with the samples measured before it. Repeat does all of this.
type Benchmark interface {
	// Run runs one experiment. progress is called zero or more times
	// before Run returns. When ctx is cancelled Run must stop its workload
	// processes and return.
	Run(ctx context.Context, req *RunRequest, progress func(Progress)) (*RunResponse, error)
}

// Parameter types a Param can have.
const (
	TypeInt      = "int"
	TypeFloat    = "float"
	TypeString   = "string"
	TypeBool     = "bool"
	TypeDuration = "duration" // Go syntax ("1.5s"); Min and Max in seconds
)

// Outcome statuses.
const (
	StatusOK            = contract.StatusOK
	StatusFailed        = contract.StatusFailed
	StatusExpectedCrash = contract.StatusExpectedCrash
)

// Description is what a plugin says about itself (lab.plugin.v1.Description).
type Description struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Summary string `json:"summary"`
	// Experiments lists what the plugin can run; the first is the default.
	Experiments []Experiment `json:"experiments"`
}

// Experiment is one thing a plugin can run.
type Experiment struct {
	Name    string   `json:"name"`
	Summary string   `json:"summary"`
	Params  []Param  `json:"params,omitempty"`
	Metrics []Metric `json:"metrics"`
	// References are published figures for this experiment's metrics.
	References []Reference `json:"references,omitempty"`
	// Claims are the write-ups' statements this experiment decides.
	Claims []Claim `json:"claims,omitempty"`
	// Peer, if set, is the second guest the experiment can run with.
	Peer *Peer `json:"peer,omitempty"`
	// Tables and Charts are what lab shows of a run beyond its generic
	// summary: a table keyed by one label, a bar chart by one label.
	Tables []Table `json:"tables,omitempty"`
	Charts []Chart `json:"charts,omitempty"`
	// WriteUps are the write-ups the experiment's claims and references
	// come from; the report's sections take their titles from them.
	WriteUps []WriteUp `json:"writeups,omitempty"`
	// RepeatSeconds is a rough wall time of one repeat at one point at
	// the sizes the claims' scopes use, on lab's 2-core development host
	// under TCG: what `lab reproduce` and `lab run` estimate with (0:
	// unknown).
	RepeatSeconds float64 `json:"repeat_seconds,omitempty"`
	// Cost is the experiment's cost model: one repeat's wall time at one
	// point from the point's parameters (see Cost). Without one, lab
	// estimates with RepeatSeconds whatever the parameters.
	Cost *Cost `json:"cost,omitempty"`
}

// What an experiment asks lab to show of its runs beyond the generic
// summary (lab.plugin.v1.Table, Chart, WriteUp); lab/plugins/contract
// defines them and says how each is drawn.
type (
	Table    = contract.Table
	Column   = contract.Column
	Baseline = contract.Baseline
	Chart    = contract.Chart
	WriteUp  = contract.WriteUp
)

// Peer asks for a second guest (lab.plugin.v1.Peer). When the run's
// parameter Param has value Value, the host boots a second guest from the
// same profile, joins the two on a link-local network (the run's guest
// PeerSelfAddr, the peer PeerAddr, both /16), installs the plugin's
// bundle in the peer and starts its workload Workload there with Args,
// with LAB_SELF_ADDR and LAB_PEER_ADDR set from the peer's side. Once the
// workload prints a line "ready" on stdout the plugin runs in the first
// guest, where LAB_PEER_ADDR is the peer's address (see PeerAddress).
// The peer is discarded when the run ends.
type Peer struct {
	Param    string   `json:"param"`
	Value    string   `json:"value"`
	Workload string   `json:"workload"`
	Args     []string `json:"args,omitempty"`
}

// The link-local addresses of a run with a peer: the run's own guest and
// the peer guest.
const (
	PeerSelfAddr = "169.254.0.1"
	PeerAddr     = "169.254.0.2"
)

// PeerAddress is the peer guest's address, from LAB_PEER_ADDR, when the
// host started the plugin with a peer; ok is false otherwise.
func PeerAddress() (addr string, ok bool) {
	addr = os.Getenv("LAB_PEER_ADDR")
	return addr, addr != ""
}

// SelfAddress is this guest's address on the peer network, from
// LAB_SELF_ADDR; ok is false without a peer.
func SelfAddress() (addr string, ok bool) {
	addr = os.Getenv("LAB_SELF_ADDR")
	return addr, addr != ""
}

// Param is one typed parameter of an experiment. Values travel as strings.
type Param struct {
	Name string `json:"name"`
	// Type is one of TypeInt, TypeFloat, TypeString, TypeBool, TypeDuration.
	Type    string `json:"type"`
	Default string `json:"default"`
	// Min and Max bound int, float and duration (seconds) values, inclusive.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	// Choices, if set, are the only values allowed.
	Choices []string `json:"choices,omitempty"`
	Help    string   `json:"help"`
	// Needs are what the machine must have for some of the values: a run
	// asking for one on a profile without it is refused before anything
	// boots.
	Needs []Need `json:"needs,omitempty"`
}

// Need is what the machine must have for a parameter's Values: one of
// Consoles (a profile's console: serial, vga or fb). Why says what the
// values need it for ("virtual terminals on a screen").
type Need struct {
	Values   []string `json:"values"`
	Consoles []string `json:"consoles"`
	Why      string   `json:"why"`
}

// Unmet is the need that value of this parameter has and a machine with
// console lacks, or nil if it can run there.
func (p *Param) Unmet(value, console string) *Need {
	for i, n := range p.Needs {
		if slices.Contains(n.Values, value) && !slices.Contains(n.Consoles, console) {
			return &p.Needs[i]
		}
	}
	return nil
}

// Metric is one quantity an experiment reports.
type Metric struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
	Help string `json:"help"`
	// Signed says the metric is a difference (threaded_ms - serial_ms)
	// and may be negative; the host refuses a negative sample of any
	// other metric (a time, a count, a size, a ratio cannot be).
	Signed bool `json:"signed,omitempty"`
	// TickSampled says the metric counts timer ticks (a CPU time from
	// rusage): quantised at the tick, so a night's value can jump by a
	// tick's share; lab history shows its changes but no gate fails on
	// them.
	TickSampled bool `json:"tick_sampled,omitempty"`
}

// SignedMetric says whether metric is one of e's that may be negative.
func (e *Experiment) SignedMetric(metric string) bool {
	for _, m := range e.Metrics {
		if m.Name == metric {
			return m.Signed
		}
	}
	return false
}

// Reference is one figure the original authors published, which the host
// puts beside the run's summary of the same metric (lab.plugin.v1.Reference).
type Reference = contract.Reference

// RunRequest asks a plugin to run one experiment.
type RunRequest struct {
	Experiment string `json:"experiment"`
	// Params holds every parameter, defaults filled in (see Resolve).
	Params map[string]string `json:"params"`
	// Repeat is how many times to run the workload; 0 means 1.
	Repeat int `json:"repeat"`
	// WorkloadDir overrides where the plugin finds its workload binaries;
	// empty means WorkloadDir().
	WorkloadDir string `json:"workload_dir,omitempty"`
}

// RunResponse is what a run produced.
type RunResponse struct {
	Samples []Sample `json:"samples"`
	Env     GuestEnv `json:"env"`
	Outcome Outcome  `json:"outcome"`
	// Log is a human-readable record of what the plugin did.
	Log string `json:"log,omitempty"`
}

// Progress is a report from a run in flight.
type Progress struct {
	Done    int    `json:"done"`
	Total   int    `json:"total"`
	Message string `json:"message,omitempty"`
	// Samples measured since the previous report. The host keeps them, so
	// what was measured survives a plugin crash or a guest death mid-run.
	Samples []Sample `json:"samples,omitempty"`
}

// What a run reports: its samples, the guest it ran in and how it ended
// (lab.plugin.v1.Sample, GuestEnv, Outcome). Sample values must be finite:
// the SDK refuses NaN and Inf, naming the metric.
type (
	Sample   = contract.Sample
	GuestEnv = contract.GuestEnv
	Outcome  = contract.Outcome
)

// CheckFinite returns an error naming the first sample whose value is NaN
// or infinite: a measurement that is not a number is a broken workload,
// and JSON (the result documents) cannot carry it.
func CheckFinite(samples []Sample) error {
	for _, s := range samples {
		if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
			return fmt.Errorf("sample of metric %s (repeat %d) is %v; samples must be finite numbers", s.Metric, s.Repeat, s.Value)
		}
	}
	return nil
}

// Ptr returns a pointer to v, for Param.Min and Param.Max literals.
func Ptr(v float64) *float64 { return &v }

// Experiment returns the named experiment, or the default one for "".
func (d *Description) Experiment(name string) (*Experiment, error) {
	if len(d.Experiments) == 0 {
		return nil, fmt.Errorf("plugin %s has no experiments", d.Name)
	}
	if name == "" {
		return &d.Experiments[0], nil
	}
	for i := range d.Experiments {
		if d.Experiments[i].Name == name {
			return &d.Experiments[i], nil
		}
	}
	names := make([]string, len(d.Experiments))
	for i, e := range d.Experiments {
		names[i] = e.Name
	}
	names[0] += " (default)"
	return nil, fmt.Errorf("plugin %s has no experiment %q; valid experiments: %s",
		d.Name, name, strings.Join(names, ", "))
}

// Resolve checks a user's choice of experiment and parameters against the
// description, without running anything. An empty experiment means the
// default. The resolved map holds every parameter of the experiment, with
// defaults filled in and values in canonical form (so "010" becomes "10").
func (d *Description) Resolve(experiment string, params map[string]string) (*Experiment, map[string]string, error) {
	exp, err := d.Experiment(experiment)
	if err != nil {
		return nil, nil, err
	}
	where := d.Name + "/" + exp.Name
	// Sorted, so the first unknown name reported does not depend on map order.
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if exp.Param(name) == nil {
			return nil, nil, fmt.Errorf("experiment %s has no parameter %q; %s", where, name, exp.paramList())
		}
	}
	resolved := make(map[string]string, len(exp.Params))
	for _, p := range exp.Params {
		v, given := params[p.Name]
		if !given {
			v = p.Default
		}
		c, err := p.Check(v)
		if err != nil {
			if !given {
				return nil, nil, fmt.Errorf("experiment %s: bad default: %w", where, err)
			}
			return nil, nil, fmt.Errorf("experiment %s: %w", where, err)
		}
		resolved[p.Name] = c
	}
	return exp, resolved, nil
}

// Validate checks that a description is usable: names present and unique,
// known parameter types, defaults that pass their own checks, every metric
// with a unit, references naming known metrics, tables and charts naming
// known metrics, each write-up id with one title. ParseDescription calls it;
// `lab plugin build` refuses a plugin whose description fails it.
func (d *Description) Validate() error {
	if d.Name == "" || d.Version == "" {
		return fmt.Errorf("plugin description needs a name and a version (got %q, %q)", d.Name, d.Version)
	}
	if !nameRE.MatchString(d.Name) {
		return fmt.Errorf("plugin name %q: use lower-case letters, digits, - and _ (it names the plugin's directory and binary)", d.Name)
	}
	if len(d.Experiments) == 0 {
		return fmt.Errorf("plugin %s has no experiments", d.Name)
	}
	seen := map[string]bool{}
	claims := map[string]bool{}
	titles := map[string]string{} // write-up id -> title
	for _, e := range d.Experiments {
		where := d.Name + "/" + e.Name
		if e.Name == "" || seen[e.Name] {
			return fmt.Errorf("plugin %s: experiment name %q empty or repeated", d.Name, e.Name)
		}
		seen[e.Name] = true
		if !(e.RepeatSeconds >= 0) || math.IsInf(e.RepeatSeconds, 1) {
			return fmt.Errorf("experiment %s: repeat_seconds %v: want a number of seconds, 0 or more (0: unknown)", where, e.RepeatSeconds)
		}
		if err := e.Cost.validate(&e, where); err != nil {
			return err
		}
		params := map[string]bool{}
		for _, p := range e.Params {
			if p.Name == "" || params[p.Name] {
				return fmt.Errorf("experiment %s: parameter name %q empty or repeated", where, p.Name)
			}
			params[p.Name] = true
			if _, err := p.Check(p.Default); err != nil {
				return fmt.Errorf("experiment %s: bad default: %w", where, err)
			}
			if p.Name == ParamBuild {
				if err := checkBuildParam(p); err != nil {
					return fmt.Errorf("experiment %s: %w", where, err)
				}
			}
			for _, n := range p.Needs {
				if len(n.Values) == 0 || len(n.Consoles) == 0 || n.Why == "" {
					return fmt.Errorf("experiment %s: parameter %s: a need names values, consoles and why", where, p.Name)
				}
				for _, v := range n.Values {
					if _, err := p.Check(v); err != nil {
						return fmt.Errorf("experiment %s: parameter %s: a need's value: %w", where, p.Name, err)
					}
				}
			}
		}
		metrics := map[string]bool{}
		for _, m := range e.Metrics {
			if m.Name == "" || m.Unit == "" || metrics[m.Name] {
				return fmt.Errorf("experiment %s: metric %q needs a unique name and a unit", where, m.Name)
			}
			metrics[m.Name] = true
		}
		for _, r := range e.References {
			if !metrics[r.Metric] {
				return fmt.Errorf("experiment %s: reference from %q names unknown metric %q", where, r.Source, r.Metric)
			}
		}
		for i := range e.Claims {
			c := &e.Claims[i]
			if err := validateClaim(c, &e, where); err != nil {
				return err
			}
			if claims[c.ID] {
				return fmt.Errorf("experiment %s: claim id %s is declared twice in plugin %s", where, c.ID, d.Name)
			}
			claims[c.ID] = true
		}
		if err := e.Peer.validate(&e, where); err != nil {
			return err
		}
		if err := e.validateViews(where, metrics); err != nil {
			return err
		}
		for _, w := range e.WriteUps {
			if t, ok := titles[w.ID]; ok && t != w.Title {
				return fmt.Errorf("experiment %s: write-up %s is declared twice with different titles (%q, %q)", where, w.ID, t, w.Title)
			}
			titles[w.ID] = w.Title
		}
	}
	return nil
}

// validateViews checks the experiment's tables, charts and write-ups
// against its metrics (metrics[name]).
func (e *Experiment) validateViews(where string, metrics map[string]bool) error {
	known := func(what string, names ...string) error {
		for _, m := range names {
			if !metrics[m] {
				return fmt.Errorf("experiment %s: %s names unknown metric %q", where, what, m)
			}
		}
		return nil
	}
	for _, t := range e.Tables {
		what := "table by " + t.Label
		if t.Label == "" || t.Title == "" || len(t.Rows) == 0 || len(t.Columns) == 0 {
			return fmt.Errorf("experiment %s: a table needs a label, a title, rows and columns", where)
		}
		columns := map[string]bool{}
		for _, c := range t.Columns {
			if c.Header == "" || columns[c.Metric] {
				return fmt.Errorf("experiment %s: %s: column %q needs a header and a metric of its own", where, what, c.Metric)
			}
			columns[c.Metric] = true
			if err := known(what, append([]string{c.Metric}, c.Sum...)...); err != nil {
				return err
			}
		}
		for _, c := range t.Columns {
			if b := c.Baseline; b != nil && (!columns[b.Metric] || b.Metric == c.Metric || t.Rows[b.Row] == "") {
				return fmt.Errorf("experiment %s: %s: column %s's baseline needs another column's metric and a row (got %q, %q)", where, what, c.Metric, b.Metric, b.Row)
			}
		}
		if c := t.Chart; c != nil {
			if c.Label != "" && c.Label != t.Label {
				return fmt.Errorf("experiment %s: %s: its chart is by the table's label, not %q", where, what, c.Label)
			}
			if err := validateChart(c, where, known); err != nil {
				return err
			}
			for _, f := range c.Figures {
				if !columns[f] {
					return fmt.Errorf("experiment %s: %s: its chart's figure %q is not a column", where, what, f)
				}
			}
		}
	}
	for i := range e.Charts {
		c := &e.Charts[i]
		if c.Label == "" || len(c.Figures) > 0 {
			return fmt.Errorf("experiment %s: a chart needs a label, and has figures only in a table", where)
		}
		if err := validateChart(c, where, known); err != nil {
			return err
		}
	}
	for _, w := range e.WriteUps {
		if w.ID == "" || w.Title == "" || strings.Contains(w.ID, ".") {
			return fmt.Errorf("experiment %s: write-up %q needs an id without a dot and a title", where, w.ID)
		}
		for _, r := range w.References {
			if r.Experiment != w.ID || r.Metric == "" || r.Unit == "" {
				return fmt.Errorf("experiment %s: write-up %s: reference from %q needs experiment %s, a metric and a unit", where, w.ID, r.Source, w.ID)
			}
		}
	}
	if len(e.WriteUps) > 0 {
		for _, c := range e.Claims {
			if !slices.ContainsFunc(e.WriteUps, func(w WriteUp) bool { return w.Owns(c.ID) }) {
				return fmt.Errorf("experiment %s: claim %s belongs to none of the write-ups the experiment declares", where, c.ID)
			}
		}
	}
	return nil
}

// validateChart checks a chart's metrics, title and room.
func validateChart(c *Chart, where string, known func(string, ...string) error) error {
	what := "chart " + strconv.Quote(c.Title)
	if c.Title == "" || c.Axis == "" || len(c.Stack) == 0 || c.Room < 0 {
		return fmt.Errorf("experiment %s: a chart needs a title, an axis, stacked metrics and no negative room", where)
	}
	if err := known(what, c.Stack...); err != nil {
		return err
	}
	if c.Total != "" {
		return known(what, c.Total)
	}
	return nil
}

// validate checks a peer request: a parameter of the experiment and one
// of its values, and a workload name.
func (p *Peer) validate(e *Experiment, where string) error {
	if p == nil {
		return nil
	}
	param := e.Param(p.Param)
	if param == nil {
		return fmt.Errorf("experiment %s: peer names unknown parameter %q; %s", where, p.Param, e.paramList())
	}
	if _, err := param.Check(p.Value); err != nil {
		return fmt.Errorf("experiment %s: peer: %w", where, err)
	}
	if !nameRE.MatchString(p.Workload) {
		return fmt.Errorf("experiment %s: peer workload %q: name one of the plugin's workload binaries (lower-case letters, digits, - and _)", where, p.Workload)
	}
	return nil
}

// Wants says whether a run with these (resolved) parameters needs the
// peer guest.
func (p *Peer) Wants(params map[string]string) bool {
	return p != nil && params[p.Param] == p.Value
}

// nameRE is what a plugin name may look like: it is a directory and a
// file name on the host and in the guest.
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Check validates one value of the parameter and returns it in canonical
// form. Errors name the parameter, the value and what is allowed.
func (p *Param) Check(v string) (string, error) {
	bad := func(what string) error {
		return fmt.Errorf("parameter %s: %q %s; want %s", p.Name, v, what, p.allowed())
	}
	if len(p.Choices) > 0 && !slices.Contains(p.Choices, v) {
		return "", bad("is not one of the choices")
	}
	var (
		num   float64
		canon string
	)
	switch p.Type {
	case TypeString:
		return v, nil
	case TypeBool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "", bad("is not a bool")
		}
		return strconv.FormatBool(b), nil
	case TypeInt:
		i, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return "", bad("is not an integer")
		}
		num, canon = float64(i), strconv.FormatInt(i, 10)
	case TypeFloat:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return "", bad("is not a number")
		}
		num, canon = f, strconv.FormatFloat(f, 'g', -1, 64)
	case TypeDuration:
		dur, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return "", bad("is not a duration")
		}
		num, canon = dur.Seconds(), dur.String()
	default:
		return "", fmt.Errorf("parameter %s has unknown type %q", p.Name, p.Type)
	}
	if (p.Min != nil && num < *p.Min) || (p.Max != nil && num > *p.Max) {
		return "", bad("is out of range")
	}
	return canon, nil
}

// allowed describes the values a parameter takes, for error messages.
func (p *Param) allowed() string {
	if len(p.Choices) > 0 {
		return "one of " + strings.Join(p.Choices, ", ")
	}
	kind := map[string]string{
		TypeInt: "an integer", TypeFloat: "a number", TypeBool: "true or false",
		TypeDuration: "a duration such as 1.5s", TypeString: "a string",
	}[p.Type]
	if r := p.rangeText(); r != "" {
		return kind + " in " + r
	}
	return kind
}

// rangeText is "1..1000000", ">= 1", "<= 5" or "".
func (p *Param) rangeText() string {
	f := func(v float64) string {
		if p.Type == TypeDuration {
			return time.Duration(v * float64(time.Second)).String()
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	switch {
	case p.Min != nil && p.Max != nil:
		return f(*p.Min) + ".." + f(*p.Max)
	case p.Min != nil:
		return ">= " + f(*p.Min)
	case p.Max != nil:
		return "<= " + f(*p.Max)
	}
	return ""
}

// String describes the parameter in one line: "n (int, default 2000,
// 1..1000000): help".
func (p Param) String() string {
	var b strings.Builder
	def := p.Default
	if def == "" {
		def = `""`
	}
	fmt.Fprintf(&b, "%s (%s, default %s", p.Name, p.Type, def)
	if r := p.rangeText(); r != "" {
		b.WriteString(", " + r)
	}
	if len(p.Choices) > 0 {
		b.WriteString(", one of " + strings.Join(p.Choices, "|"))
	}
	b.WriteString(")")
	if p.Help != "" {
		b.WriteString(": " + p.Help)
	}
	return b.String()
}

// Param is the experiment's parameter name, nil if it has none.
func (e *Experiment) Param(name string) *Param {
	for i := range e.Params {
		if e.Params[i].Name == name {
			return &e.Params[i]
		}
	}
	return nil
}

func (e *Experiment) paramList() string {
	if len(e.Params) == 0 {
		return "it takes no parameters"
	}
	lines := make([]string, len(e.Params))
	for i, p := range e.Params {
		lines[i] = p.String()
	}
	return "valid parameters: " + strings.Join(lines, "; ")
}
