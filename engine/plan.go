package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"lab/images"
	"lab/plugins"
	"lab/plugins/host"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/vm"

	"golang.org/x/sys/unix"
)

// Request is a run to make: what `lab run` is asked on its command line,
// as plain values.
type Request struct {
	Plugin string
	// VM is the VM to run in ("": the only one up); not with Profiles.
	VM string
	// Profiles are throwaway VMs to boot, one run on each in turn.
	Profiles []string
	// ProfileFiles hold extra profiles (images.Lookup).
	ProfileFiles []string
	// Experiment is the plugin's experiment ("": its first).
	Experiment string
	Params     map[string]string
	// Sweep are the swept parameters (ParseSweeps); their cross product
	// is run point by point.
	Sweep  []results.SweepAxis
	Repeat int
	// ChooseRepeat: no repeats were asked for, so Do runs as many as
	// the claims in scope need within DefaultRepeatBudget (Repeat 0 is
	// then 1 until chosen).
	ChooseRepeat bool
	// ChooseExperiment: no experiment, parameter or sweep was asked for,
	// so Do runs, on a profile whose machine the claims of another of
	// the plugin's experiments are about, that experiment as those
	// claims' runs do (chooseExperiment; ExperimentChosen says so).
	ChooseExperiment bool
	Timeout          time.Duration
	// Clock is the guest clock of the throwaway VMs ("": the profile's).
	Clock string
	// Out is the results directory.
	Out string
	// Command is the command line recorded in the result and in the run
	// lock.
	Command []string
	// Roots are the directories the run uses.
	Roots Roots
	// CheckOnly: NewPlan checks that Out could be made and written
	// without making it (a matrix checks its cells before it runs any).
	CheckOnly bool
	// AddTo is a run in Out (an ID, a unique prefix of one, or latest)
	// whose repeats this run adds to: a run of the same cell, checked
	// before anything boots and again on the VM (addto.go). With no
	// experiment, parameter or sweep given they are the stored run's.
	AddTo string
}

// Plan is a Request checked before anything boots.
type Plan struct {
	Request
	// Started is when planning began: the harness's start-up time
	// counts from it.
	Started time.Time
	OutDir  string
	Desc    *plugins.Description
	Exp     *plugins.Experiment
	// Bundles are the plugin's builds by guest arch, each checked to
	// record Desc (bundle): found once, then reused.
	Bundles map[string]*host.Bundle
	// Resolved holds every parameter; a swept key holds its values
	// joined ("50,100"), each point's own are in Points.
	Resolved map[string]string
	Axes     []results.SweepAxis
	Points   []Point
	Refs     []results.Reference
	Claims   []results.Claim
	// ClaimProfiles are the catalogue's profiles as the claims' judge
	// needs them (their variants and calibrations).
	ClaimProfiles rclaims.Profiles
	// addTo is the stored run Request.AddTo names.
	addTo *results.Result
	// Profiles and Clocks are the throwaway VMs to boot, one run each.
	Profiles []images.Profile
	Clocks   []vm.Clock
}

// Point is one point of a sweep: its labels (the swept keys' values) and
// every parameter of the experiment resolved for it.
type Point struct {
	Labels map[string]string
	Params map[string]string
}

// MaxSweepPoints bounds a sweep's cross product: a typo in a value list
// should not start a week of emulation.
const MaxSweepPoints = 1000

// NewPlan checks everything that can be checked without a guest,
// starting with where the result goes: a run must not measure for an
// hour and then find it cannot save.
func NewPlan(req Request) (*Plan, error) {
	if req.ChooseRepeat && req.Repeat == 0 {
		req.Repeat = 1
	}
	if req.Repeat < 1 || req.Repeat > 1000 {
		return nil, fmt.Errorf("--repeat %d: want 1..1000", req.Repeat)
	}
	if req.Timeout <= 0 {
		return nil, fmt.Errorf("--timeout %v: want a positive duration, such as 30m (it bounds the whole run, a sweep included)", req.Timeout)
	}
	if req.VM != "" && len(req.Profiles) > 0 {
		return nil, errors.New("give --vm or --profile, not both")
	}
	if req.Clock != "" && len(req.Profiles) == 0 {
		return nil, fmt.Errorf("--clock %s needs --profile: a VM that is up keeps the clock it booted with (`lab up --clock %s`)", req.Clock, req.Clock)
	}
	for i, p := range req.Profiles {
		if slices.Contains(req.Profiles[:i], p) {
			return nil, fmt.Errorf("--profile %s given twice; each profile runs once (use --repeat for more samples)", p)
		}
	}
	plan := &Plan{Request: req, Started: time.Now(), OutDir: req.Out}
	if plan.OutDir == "" {
		return nil, errors.New("no results directory given; choose one with --out DIR")
	}
	check := results.CheckDir
	if req.CheckOnly {
		check = checkCreatable
	}
	if err := check(plan.OutDir); err != nil {
		return nil, fmt.Errorf("%w; make it writable or choose another with --out DIR (nothing was started)", err)
	}
	var prev *results.Result
	if req.AddTo != "" {
		var err error
		if req, prev, err = addTo(req); err != nil {
			return nil, err
		}
		plan.Request = req
	}
	// The plugin's description is the one recorded when it was built: no
	// plugin code runs on the host.
	b, err := req.Roots.Plugins.FindAny(req.Plugin)
	if err != nil {
		return nil, err
	}
	desc := b.Description
	plan.Bundles = map[string]*host.Bundle{b.Arch: b}
	exp, resolved, err := desc.Resolve(req.Experiment, req.Params)
	if err != nil {
		return nil, err
	}
	plan.Desc, plan.Exp, plan.Resolved = desc, exp, resolved
	if len(req.Sweep) > 0 {
		if plan.Axes, plan.Points, err = planSweep(desc, exp, req.Params, req.Sweep); err != nil {
			return nil, err
		}
		for _, a := range plan.Axes {
			plan.Resolved[a.Key] = strings.Join(a.Values, ",")
		}
	}
	if prev != nil {
		if diff := checkAddTo(plan, prev); diff != "" {
			return nil, fmt.Errorf("--add-to %s: that run is not of this cell: it has %s; repeats add only to a run of the same experiment and parameters (give none of -e, -p, --sweep to take the stored run's; nothing was started)", req.AddTo, diff)
		}
		plan.addTo = prev
	}
	for _, name := range req.Profiles {
		p, err := images.Lookup(req.Roots.Profiles, name, req.ProfileFiles...)
		if err != nil {
			return nil, err
		}
		clock, err := ResolveClock(req.Clock, p)
		if err == nil {
			err = vm.CheckClock(p, "auto", clock)
		}
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", p.Name, err)
		}
		if err := plan.CheckNeeds(p); err != nil {
			return nil, err
		}
		plan.Profiles = append(plan.Profiles, p)
		plan.Clocks = append(plan.Clocks, clock)
	}
	if prev != nil && len(plan.Profiles) == 1 {
		m := results.MachineRecord{Profile: plan.Profiles[0].Name, Clock: plan.Clocks[0].String(),
			KernelID: prev.Machine.KernelID, Accelerator: prev.Machine.Accelerator} // known once it boots
		if diff := addToMachine(prev, m); diff != "" {
			return nil, fmt.Errorf("--add-to %s: that run was on another machine: %s; run on its profile and clock (nothing was started)", req.AddTo, diff)
		}
	}
	// The published figures the experiment declares, for the comparison,
	// and the claims its runs decide.
	plan.Refs = host.References(exp)
	plan.Claims = host.Claims(desc.Name, exp)
	// A catalogue that does not load fails the plan above when it names
	// a profile; a run on a VM that is up is judged with the built-in
	// profiles then.
	plan.ClaimProfiles, _ = CatalogProfiles(req.Roots.Profiles, req.ProfileFiles...)
	return plan, nil
}

// bundle is the plugin's build for guests of arch, checked once to
// record the description the plan was checked against.
func (plan *Plan) bundle(arch string) (*host.Bundle, error) {
	if b, ok := plan.Bundles[arch]; ok {
		return b, nil
	}
	b, err := plan.Roots.Plugins.Find(plan.Plugin, arch)
	if err != nil {
		return nil, err
	}
	if !reflect.DeepEqual(b.Description, plan.Desc) {
		return nil, fmt.Errorf("plugin %s: the %s build records another description than the plugin's other build; %s",
			plan.Plugin, b.Arch, "rebuild it with `make plugins` (lab's own plugins) or `lab plugin build DIR` (yours)")
	}
	if plan.Bundles == nil {
		plan.Bundles = map[string]*host.Bundle{}
	}
	plan.Bundles[arch] = b
	return b, nil
}

// again is a plan made checking only (a matrix checks every cell before
// any runs, CheckOnly) made ready to run now, recording command: its
// results directory made and checked writable, and its start-up counted
// from now.
func (plan *Plan) again(command []string) (*Plan, error) {
	if err := results.CheckDir(plan.OutDir); err != nil {
		return nil, fmt.Errorf("%w; make it writable or choose another with --out DIR (nothing was started)", err)
	}
	q := *plan
	q.Command, q.CheckOnly, q.Started = command, false, time.Now()
	return &q, nil
}

// CheckNeeds says whether the plan's parameter values (each sweep
// point's too) can run on profile p: a value the plugin declares needs a
// console p lacks is refused, before anything boots.
func (plan *Plan) CheckNeeds(p images.Profile) error {
	sets := []map[string]string{plan.Resolved}
	if len(plan.Points) > 0 {
		sets = sets[:0]
		for _, pt := range plan.Points {
			sets = append(sets, pt.Params)
		}
	}
	if r, ok := images.Recipes[p.Kernel]; ok && r.Upstream != "" && wantsPeer(plan) {
		// The peer's card is hot-plugged (vm/nic.go); the 2.6.32 kernels
		// are built without PCI hotplug, and it was never tried there.
		instead := "a profile on Linux 6.1"
		if p.VariantOf != "" {
			instead = p.VariantOf + " (the same machine on Linux 6.1)"
		}
		return fmt.Errorf("%s/%s: a peer guest joins by a hot-plugged network card, and profile %s boots kernel %s (Linux %s), built without PCI hotplug: run the peer experiment on %s", plan.Desc.Name, plan.Exp.Name, p.Name, p.Kernel, r.Upstream, instead)
	}
	console := p.ConsoleKind()
	for _, params := range sets {
		for i := range plan.Exp.Params {
			prm := &plan.Exp.Params[i]
			v := params[prm.Name]
			if n := prm.Unmet(v, console); n != nil {
				return fmt.Errorf("%s/%s: %s=%s needs %s (console %s); profile %s has console %s: run it on a profile with one of those consoles (%s) or choose another %s",
					plan.Desc.Name, plan.Exp.Name, prm.Name, v, n.Why, strings.Join(n.Consoles, " or "), p.Name, console, withConsole(prm, v), prm.Name)
			}
		}
	}
	return nil
}

// ParseParams parses -p flags, each KEY=VALUE.
func ParseParams(kvs []string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-p %q: want KEY=VALUE", kv)
		}
		m[k] = v
	}
	return m, nil
}

// ParseSweeps parses --sweep flags, each KEY=V1,V2,... . A key may be
// given once; values must not be empty. Values are checked against the
// experiment by NewPlan.
func ParseSweeps(flags []string) ([]results.SweepAxis, error) {
	var axes []results.SweepAxis
	for _, f := range flags {
		key, list, ok := strings.Cut(f, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.TrimSpace(list) == "" {
			return nil, fmt.Errorf("--sweep %q: want KEY=V1,V2,... (e.g. --sweep n=50,100)", f)
		}
		for _, a := range axes {
			if a.Key == key {
				return nil, fmt.Errorf("--sweep %s given twice; give all its values in one: --sweep %s=%s,%s", key, key,
					strings.Join(a.Values, ","), list)
			}
		}
		values := strings.Split(list, ",")
		for i, v := range values {
			values[i] = strings.TrimSpace(v)
			if values[i] == "" {
				return nil, fmt.Errorf("--sweep %s: value %d of %q is empty; want KEY=V1,V2,...", f, i+1, list)
			}
		}
		axes = append(axes, results.SweepAxis{Key: key, Values: values})
	}
	return axes, nil
}

// planSweep checks axes against the parameters experiment exp of desc
// declares, before anything boots: each key must be a parameter not also
// set with -p, each value must pass the parameter's type and range (it is
// kept in canonical form: "050" becomes "50"), and no value may be given
// twice. It returns the axes in canonical form and the points of their
// cross product, each with all parameters resolved (params, the -p
// values, filling in the rest).
func planSweep(desc *plugins.Description, exp *plugins.Experiment, params map[string]string, axes []results.SweepAxis) ([]results.SweepAxis, []Point, error) {
	where := desc.Name + "/" + exp.Name
	canon := make([]results.SweepAxis, len(axes))
	total := 1
	for i, a := range axes {
		p := findParam(exp, a.Key)
		if p == nil {
			return nil, nil, fmt.Errorf("--sweep %s: experiment %s has no parameter %q; %s (see `lab plugins show %s`)",
				a.Key, where, a.Key, paramNames(exp), desc.Name)
		}
		if v, set := params[a.Key]; set {
			return nil, nil, fmt.Errorf("--sweep %s and -p %s=%s both set %s; drop one (to run only %s, leave out --sweep; to sweep, leave out -p)",
				a.Key, a.Key, v, a.Key, v)
		}
		canon[i].Key = a.Key
		for _, v := range a.Values {
			c, err := p.Check(v)
			if err != nil {
				return nil, nil, fmt.Errorf("--sweep %s=%s: %w", a.Key, v, err)
			}
			if slices.Contains(canon[i].Values, c) {
				return nil, nil, fmt.Errorf("--sweep %s: value %s given twice", a.Key, c)
			}
			canon[i].Values = append(canon[i].Values, c)
		}
		total *= len(a.Values)
		if total > MaxSweepPoints {
			return nil, nil, fmt.Errorf("--sweep %s: the sweep has more than %d points; sweep fewer values or run it in parts", (&results.Sweep{Axes: axes}).String(), MaxSweepPoints)
		}
	}
	var points []Point
	for _, labels := range results.SweepPoints(canon) {
		all := maps.Clone(params)
		if all == nil {
			all = map[string]string{}
		}
		maps.Copy(all, labels)
		_, resolved, err := desc.Resolve(exp.Name, all)
		if err != nil {
			return nil, nil, fmt.Errorf("--sweep point %s: %w", results.FormatLabels(labels), err)
		}
		points = append(points, Point{Labels: labels, Params: resolved})
	}
	return canon, points, nil
}

func findParam(exp *plugins.Experiment, name string) *plugins.Param {
	for i := range exp.Params {
		if exp.Params[i].Name == name {
			return &exp.Params[i]
		}
	}
	return nil
}

// paramNames lists the parameters a sweep can take.
func paramNames(exp *plugins.Experiment) string {
	if len(exp.Params) == 0 {
		return "it takes no parameters, so there is nothing to sweep"
	}
	lines := make([]string, len(exp.Params))
	for i, p := range exp.Params {
		lines[i] = p.String()
	}
	return "sweep one of its parameters: " + strings.Join(lines, "; ")
}

// ResolveClock is the clock a VM of profile p boots with: flag (--clock)
// if given, else the profile's.
func ResolveClock(flag string, p images.Profile) (vm.Clock, error) {
	s := flag
	if s == "" {
		s = p.Clock
	}
	c, err := vm.ParseClock(s)
	if err != nil && flag == "" {
		return vm.Clock{}, fmt.Errorf("profile %s: %w", p.Name, err)
	}
	return c, err
}

// checkCreatable says whether dir is a writable directory, or could be
// made as one: its nearest existing ancestor is a directory this process
// can write in. Nothing is created.
func checkCreatable(dir string) error {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		switch {
		case err == nil && !fi.IsDir():
			return fmt.Errorf("results directory %s cannot be created: %s is not a directory", dir, d)
		case err == nil:
			if err := unix.Access(d, unix.W_OK|unix.X_OK); err != nil {
				return fmt.Errorf("results directory %s is not writable: %s: %w", dir, d, err)
			}
			return nil
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("results directory %s: %w", dir, err)
		}
		if filepath.Dir(d) == d {
			return fmt.Errorf("results directory %s: no existing ancestor", dir)
		}
	}
}

// withConsole names the built-in profiles whose console meets what value
// of prm needs, for the refusal to suggest.
func withConsole(prm *plugins.Param, value string) string {
	var names []string
	for _, p := range images.Builtin() {
		if prm.Unmet(value, p.ConsoleKind()) == nil {
			names = append(names, p.Name)
		}
	}
	if len(names) == 0 {
		return "`lab profiles` shows each profile's console"
	}
	return "built in: " + strings.Join(names, ", ")
}
