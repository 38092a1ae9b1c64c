package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"lab/plugins"
)

// NumDesigns is how many server designs there are, 0 (iterative) to 8.
const NumDesigns = 9

// ClientdPort is the TCP port clientd listens on in the peer guest
// (clients=peer): the args of the experiment's peer in description.json,
// with which lab starts the workload clientd there. A test that runs
// clientd by hand can point the plugin elsewhere with $NETBENCH_CLIENTD_PORT.
const ClientdPort = "7070"

// clientdPortEnv overrides ClientdPort (tests only).
const clientdPortEnv = "NETBENCH_CLIENTD_PORT"

// noPeerError is what clients=peer says without a second guest.
const noPeerError = "clients=peer needs a second guest; run it with lab run, which boots one"

// bench is the netbench Benchmark; desc is its description.json.
type bench struct{ desc *plugins.Description }

// Run runs the designs once per repeat; plugins.Repeat owns the loop,
// progress and outcome. A repeat that fails (a server that died mid-run)
// returns the samples of the designs measured before it with its error,
// and Repeat keeps them.
func (b bench) Run(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
	return plugins.Repeat(ctx, b.desc, req, progress, func(ctx context.Context, t *plugins.Trial) ([]plugins.Sample, error) {
		if t.Experiment.Name != "designs" {
			return nil, fmt.Errorf("netbench has no workload for experiment %s", t.Experiment.Name)
		}
		return runDesigns(ctx, t, os.LookupEnv)
	})
}

// parseDesigns parses the designs parameter: "all", or design numbers
// 0..8 separated by commas, plus signs or spaces, each once, run in the
// order given (-p designs=0,1,6 or 0+1+6).
func parseDesigns(s string) ([]int, error) {
	if strings.TrimSpace(s) == "all" {
		s = "0,1,2,3,4,5,6,7,8"
	}
	var out []int
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '+' || r == ' ' })
	if len(fields) == 0 {
		return nil, fmt.Errorf("parameter designs: %q names no design; want numbers 0..8 separated by + or commas (-p designs=0,1,6), or all", s)
	}
	for _, f := range fields {
		d, err := strconv.Atoi(f)
		if err != nil || d < 0 || d >= NumDesigns {
			return nil, fmt.Errorf("parameter designs: %q is not a design; want numbers 0..8 separated by + or commas (-p designs=0,1,6), or all", f)
		}
		if slices.Contains(out, d) {
			return nil, fmt.Errorf("parameter designs: design %d is listed twice in %q", d, s)
		}
		out = append(out, d)
	}
	return out, nil
}

// addresses says where the servers listen and where the clients run:
// clients=local binds 127.0.0.1 and runs the clients beside the server;
// clients=peer binds this guest's address on the link to the peer guest
// and has the clientd there run them (peer is its address).
func addresses(clients string, lookup func(string) (string, bool)) (bind, peer string, err error) {
	if clients != "peer" {
		return "127.0.0.1", "", nil
	}
	peer, ok := lookup("LAB_PEER_ADDR")
	if !ok || peer == "" {
		return "", "", fmt.Errorf("%s (LAB_PEER_ADDR is not set in the plugin's environment)", noPeerError)
	}
	bind, ok = lookup("LAB_SELF_ADDR")
	if !ok || bind == "" {
		return "", "", fmt.Errorf("%s (LAB_PEER_ADDR is set but LAB_SELF_ADDR, this guest's address on the link, is not)", noPeerError)
	}
	return bind, peer, nil
}

// load is what one design's run asks of its clients.
type load struct {
	clients, children, loops int64
}

// expected is how many connections the clients make.
func (l load) expected() int64 { return l.clients * l.children * l.loops }

// loadOf is design d's load: the book ran the iterative server with one
// client (baseline_children x baseline_loops), every other design with
// nclients clients at once.
func loadOf(d int, p map[string]string) load {
	n := func(k string) int64 {
		v, _ := strconv.ParseInt(p[k], 10, 64)
		return v
	}
	if d == 0 {
		return load{1, n("baseline_children"), n("baseline_loops")}
	}
	return load{n("nclients"), n("children"), n("loops")}
}

// designArgs is the design workload's command line for design d.
func designArgs(d int, p map[string]string, bind, peer, clientdPort, timeoutS string) []string {
	l := loadOf(d, p)
	die := "0"
	if p["test_die_design"] == strconv.Itoa(d) {
		die = p["test_die_after"]
	}
	args := []string{strconv.Itoa(d), bind, p["port"], p["prefork"], die,
		strconv.FormatInt(l.clients, 10), strconv.FormatInt(l.children, 10), strconv.FormatInt(l.loops, 10), p["bytes"], timeoutS}
	if peer != "" {
		args = append(args, peer, clientdPort)
	}
	return args
}

// seconds renders a duration parameter as whole seconds, at least 1.
func seconds(d string) (string, error) {
	v, err := time.ParseDuration(d)
	if err != nil {
		return "", fmt.Errorf("timeout %q: %w", d, err)
	}
	return strconv.Itoa(max(1, int(math.Ceil(v.Seconds())))), nil
}

// runDesigns runs each design of the designs parameter once, in the
// order given; each design's samples carry the label design. With
// design 0 in the run, cpu_beyond_s is each design's cpu_s less the
// iterative server's in this repeat (the book's measure). On an error
// the samples measured so far are returned with it.
func runDesigns(ctx context.Context, t *plugins.Trial, lookup func(string) (string, bool)) ([]plugins.Sample, error) {
	p := t.Params
	list, err := parseDesigns(p["designs"])
	if err != nil {
		return nil, err
	}
	bind, peer, err := addresses(p["clients"], lookup)
	if err != nil {
		return nil, err
	}
	timeout, err := seconds(p["timeout"])
	if err != nil {
		return nil, err
	}
	port := ClientdPort
	if v, ok := lookup(clientdPortEnv); ok && v != "" {
		port = v
	}
	var out []plugins.Sample
	for _, d := range list {
		res, err := t.RunWorkload(ctx, "design", designArgs(d, p, bind, peer, port, timeout)...)
		if err != nil {
			return withBeyond(t, out), fmt.Errorf("design %d: %w", d, err)
		}
		samples, err := designSamples(t, d, loadOf(d, p), res)
		out = append(out, samples...)
		if err != nil {
			return withBeyond(t, out), err
		}
	}
	return withBeyond(t, out), nil
}

// designRun is what the design workload reported for one design.
type designRun struct {
	connections, errors, served int64
	wallS, userS, sysS          float64
	status, firstError          string
}

func parseDesignRun(res *plugins.WorkloadResult) (designRun, error) {
	var r designRun
	ints := map[string]*int64{"connections": &r.connections, "errors": &r.errors}
	floats := map[string]*float64{"wall_s": &r.wallS}
	r.status = res.Values["server_status"].Text
	r.firstError = res.Values["first_error"].Text
	if r.status == "" {
		return r, fmt.Errorf("workload %s printed no server_status line", res.Name)
	}
	if r.status == "ok" {
		ints["served"] = &r.served
		floats["user_s"], floats["sys_s"] = &r.userS, &r.sysS
	}
	for k, dst := range ints {
		v, err := res.Float(k)
		if err != nil {
			return r, err
		}
		*dst = int64(v)
	}
	for k, dst := range floats {
		v, err := res.Float(k)
		if err != nil {
			return r, err
		}
		*dst = v
	}
	return r, nil
}

// died says how a server that did not stop as asked ended.
func died(status string) string {
	if sig, ok := strings.CutPrefix(status, "signal:"); ok {
		return "was killed by signal " + sig
	}
	if code, ok := strings.CutPrefix(status, "exit:"); ok {
		return "exited with status " + code
	}
	return "ended (" + status + ")"
}

// designSamples maps design d's run to its samples (label design=d), and
// checks it: the server stopped as asked, and every connection of l was
// completed by the clients and served by the server. A design whose
// server died mid-run keeps what its clients measured.
func designSamples(t *plugins.Trial, d int, l load, res *plugins.WorkloadResult) ([]plugins.Sample, error) {
	r, err := parseDesignRun(res)
	if err != nil {
		return nil, fmt.Errorf("design %d: %w", d, err)
	}
	labels := map[string]string{"design": strconv.Itoa(d)}
	sample := func(m string, v float64) plugins.Sample {
		s := t.Sample(m, v)
		s.Labels = labels
		return s
	}
	clients := []plugins.Sample{sample("wall_s", r.wallS), sample("connections", float64(r.connections)), sample("errors", float64(r.errors))}
	lost := ""
	if r.errors > 0 {
		lost = fmt.Sprintf("; %d client children stopped on errors (first: %s)", r.errors, r.firstError)
	}
	if r.status != "ok" {
		return clients, fmt.Errorf("design %d: the server %s mid-run; the clients completed %d of %d connections%s",
			d, died(r.status), r.connections, l.expected(), lost)
	}
	if r.connections != l.expected() || r.errors > 0 {
		return clients, fmt.Errorf("design %d: the clients completed %d of %d connections%s", d, r.connections, l.expected(), lost)
	}
	if r.served != l.expected() {
		return clients, fmt.Errorf("design %d: the server served %d connections, the clients made %d", d, r.served, l.expected())
	}
	perS := 0.0
	if r.wallS > 0 {
		perS = float64(r.connections) / r.wallS
	}
	return append([]plugins.Sample{sample("user_s", r.userS), sample("sys_s", r.sysS), sample("cpu_s", r.userS+r.sysS)},
		append(clients, sample("conn_per_s", perS))...), nil
}

// withBeyond adds cpu_beyond_s, each design's cpu_s less the iterative
// design's in the same repeat, when design 0 was measured.
func withBeyond(t *plugins.Trial, samples []plugins.Sample) []plugins.Sample {
	base, ok := 0.0, false
	for _, s := range samples {
		if s.Metric == "cpu_s" && s.Labels["design"] == "0" {
			base, ok = s.Value, true
		}
	}
	if !ok {
		return samples
	}
	out := slices.Clone(samples)
	for _, s := range samples {
		if s.Metric == "cpu_s" {
			b := t.Sample("cpu_beyond_s", s.Value-base)
			b.Labels = s.Labels
			out = append(out, b)
		}
	}
	return out
}
