package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"lab/plugins"
	"lab/plugins/plugintest"
)

// fakeSystem is a guest's screen as the tests want it.
type fakeSystem struct {
	cmdline  string
	consoles []string
}

func (f fakeSystem) Cmdline() string      { return f.cmdline }
func (f fakeSystem) VTConsoles() []string { return f.consoles }

var (
	// serialGuest is what a console serial guest shows (measured in
	// celeron-2.4): the VTs exist, vgacon's guess "*CGA" draws them into
	// memory with no device behind it.
	serialGuest = fakeSystem{"console=ttyS0,115200 rdinit=/init lab.profile=celeron-2.4 lab.console=serial\n", []string{"(S) *CGA"}}
	// fbGuest is a console fb guest (measured in xeon5130-fb).
	fbGuest = fakeSystem{"console=ttyS0,115200 lab.profile=xeon5130-fb lab.console=fb vga=0x317\n", []string{"(M) frame buffer device"}}
)

func testBench(sys system) bench {
	return bench{desc: plugins.MustParseDescription(description), sys: sys}
}

var workloadNames = []string{"targets", "logging"}

// buildWorkloads compiles the C workloads with cc for the host, as `lab
// plugin build` does for the guests (plugintest.BuildWorkloads).
func buildWorkloads(t *testing.T, cc string) string {
	t.Helper()
	return plugintest.BuildWorkloads(t, cc, workloadNames)
}

func run(t *testing.T, sys system, dir, exp string, params map[string]string, repeat int) *plugins.RunResponse {
	t.Helper()
	// Never switch the VTs of the machine the tests run on.
	t.Setenv("PRINTFBENCH_LEAVE_SCREEN", "1")
	resp, err := testBench(sys).Run(context.Background(), &plugins.RunRequest{Experiment: exp, Params: params, Repeat: repeat, WorkloadDir: dir}, nil)
	if err != nil {
		t.Fatalf("Run %s %v: %v", exp, params, err)
	}
	return resp
}

// series groups samples by metric and label.
func series(samples []plugins.Sample) map[string][]float64 {
	out := map[string][]float64{}
	for _, s := range samples {
		k := s.Metric
		for _, l := range []string{"target", "sink"} {
			if v, ok := s.Labels[l]; ok {
				k += " " + l + "=" + v
			}
		}
		out[k] = append(out[k], s.Value)
	}
	return out
}

func TestDescription(t *testing.T) {
	d, err := plugins.ParseDescription(description)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "printfbench" {
		t.Errorf("name = %q, want printfbench (the directory's)", d.Name)
	}
	var names []string
	for _, e := range d.Experiments {
		names = append(names, e.Name)
	}
	if !slices.Equal(names, workloadNames) {
		t.Errorf("experiments = %v, want %v (each runs its workload)", names, workloadNames)
	}
	// SEEDS.md's E3.1-E3.3 split into parts decided apart, E3.4 and its
	// counter; each with its experiment and kind.
	want := map[string][2]string{
		"E3.1a": {"targets", plugins.KindRatio}, "E3.1b": {"targets", plugins.KindRange}, "E3.1c": {"targets", plugins.KindUntestable},
		"E3.2a": {"targets", plugins.KindOrder}, "E3.2b": {"targets", plugins.KindRange},
		"E3.3a": {"targets", plugins.KindRatio}, "E3.3b": {"targets", plugins.KindRange}, "E3.3c": {"targets", plugins.KindUntestable},
		"E3.4": {"logging", plugins.KindRatio}, "E3.4.counter": {"logging", plugins.KindRatio},
	}
	got := map[string][2]string{}
	for _, e := range d.Experiments {
		for _, c := range e.Claims {
			got[c.ID] = [2]string{e.Name, c.Kind()}
			// The bounds come from E3's words read by the conventions,
			// never from our numbers: far is 10, cheap 4.1.
			if r := c.Ratio; r != nil {
				for conv, min := range map[string]float64{"far": 10, "cheap": 4.1} {
					if slices.Contains(c.Conventions, conv) && r.Min != min {
						t.Errorf("claim %s reads %q, min %v; want %v", c.ID, conv, r.Min, min)
					}
				}
			}
			if e.Name == "targets" && c.Scope.Params["buffering"] != "auto" {
				t.Errorf("claim %s: scope params %v; want buffering=auto, as E3 ran", c.ID, c.Scope.Params)
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("claims = %v, want %v", got, want)
	}
	// E3.4 sets the terminal on screen against the hand-off: the sink it
	// needs is one of the logging sinks, and all records it.
	if !slices.Contains(Sinks, "vt_shown") || !slices.Contains(Sinks, "socket") || !slices.Contains(Sinks, "counter") {
		t.Errorf("sinks %v lack vt_shown, socket or counter", Sinks)
	}
	// E3's table: six runs, real/user/sys each, labelled by target.
	e := d.Experiments[0]
	if len(e.References) != 18 {
		t.Errorf("%d references, want E3's 6 runs x 3 times", len(e.References))
	}
	for _, r := range e.References {
		if !slices.Contains(Targets, r.Labels["target"]) || r.Profile != "xeon5130-fb" {
			t.Errorf("reference %+v: want a target label and profile xeon5130-fb", r)
		}
	}
	// The default is how E3 ran: stdio's own buffering.
	for _, p := range e.Params {
		if p.Name == "buffering" && p.Default != "auto" {
			t.Errorf("buffering defaults to %q, want auto (E3: line-buffered on a terminal)", p.Default)
		}
	}
}

// TestClaimsScoped: every claim says which runs decide it (a scope with
// the profile, the size E3 ran and both clocks), where its bounds come
// from, what the emulation cannot show, and the conventions it reads its
// words with.
func TestClaimsScoped(t *testing.T) {
	d := plugins.MustParseDescription(description)
	size := map[string]string{"targets": "lines", "logging": "events"}
	for _, e := range d.Experiments {
		for _, c := range e.Claims {
			untestable := c.Kind() == plugins.KindUntestable
			s := c.Scope
			// Both consoles E3 could have had, each a stratum: no claim
			// is pinned to one (issue 30).
			if !untestable && (s == nil || !slices.Equal(s.Profiles, []string{"xeon5130-fb", "xeon5130-vga"})) {
				t.Errorf("claim %s: scope %+v; want profiles xeon5130-fb and xeon5130-vga, its console strata", c.ID, s)
			}
			if s != nil && (s.Params[size[e.Name]] == "" || !slices.Equal(s.Clocks, []string{plugins.ClockHost, plugins.ClockIcount})) {
				t.Errorf("claim %s: scope params %v, clocks %v; want %s fixed, host and icount", c.ID, s.Params, s.Clocks, size[e.Name])
			}
			if c.Rationale == "" || c.Fidelity == "" || c.SourceWords+c.DigestWords == "" || c.Machine == "" {
				t.Errorf("claim %s lacks rationale, fidelity, source words or machine", c.ID)
			}
			if len(c.Conventions) == 0 && !untestable {
				t.Errorf("claim %s names no word convention", c.ID)
			}
			// A share of CPU time is decided where rusage can split it:
			// E3's own N for /dev/null, 10000 lines for a pty.
			if r := c.Range; r != nil && r.ShareWith == "" {
				t.Errorf("claim %s: a range on %s without share_with; E3 names no machine, so no absolute time is a claim", c.ID, r.Metric)
			}
		}
	}
	// The logging claims need the vt_shown sink, which versions before
	// 0.2.0 lack.
	for _, c := range d.Experiments[1].Claims {
		if c.Scope.MinPluginVersion != "0.2.0" {
			t.Errorf("claim %s: min_plugin_version %q, want 0.2.0, the first with sink vt_shown", c.ID, c.Scope.MinPluginVersion)
		}
	}
}

func TestScreen(t *testing.T) {
	s := testBench(serialGuest).screen()
	if s.profile != "celeron-2.4" || s.console != "serial" || s.shown {
		t.Errorf("serial guest: %+v, want profile celeron-2.4, console serial, not shown", s)
	}
	s = testBench(fbGuest).screen()
	if s.profile != "xeon5130-fb" || s.console != "fb" || !s.shown {
		t.Errorf("fb guest: %+v, want profile xeon5130-fb, console fb, shown", s)
	}
	// Without lab.console (an older lab's guest), the bound drivers say.
	for _, tt := range []struct {
		drivers []string
		shown   bool
	}{
		{[]string{"(S) dummy device", "(S) VGA+"}, true},
		{[]string{"(S) dummy device", "(M) frame buffer device"}, true},
		{[]string{"(S) *CGA"}, false},
		{[]string{"(S) dummy device"}, false},
		{nil, false},
	} {
		if s := testBench(fakeSystem{"console=ttyS0", tt.drivers}).screen(); s.shown != tt.shown {
			t.Errorf("drivers %v without lab.console: shown %v, want %v", tt.drivers, s.shown, tt.shown)
		}
	}
}

// TestSinksFor: sink=all records in the VT sink only where VTs are
// shown; vt_shown alone on a guest without them is refused, naming the
// sinks that would do.
func TestSinksFor(t *testing.T) {
	serial, fb := testBench(serialGuest).screen(), testBench(fbGuest).screen()
	if got, skipped, err := sinksFor("all", fb); err != nil || !slices.Equal(got, Sinks) || skipped != 0 {
		t.Errorf("sinksFor(all, fb) = %v, %d, %v; want %v, 0", got, skipped, err, Sinks)
	}
	if got, skipped, err := sinksFor("all", serial); err != nil || !slices.Equal(got, []string{"serial", "file", "counter", "socket"}) || skipped != 1 {
		t.Errorf("sinksFor(all, serial) = %v, %d, %v; want the four that print nothing to a VT, 1 skipped", got, skipped, err)
	}
	if got, _, err := sinksFor("socket", serial); err != nil || !slices.Equal(got, []string{"socket"}) {
		t.Errorf("sinksFor(socket, serial) = %v, %v", got, err)
	}
	_, _, err := sinksFor("vt_shown", serial)
	for _, w := range []string{"sink vt_shown", "profile celeron-2.4", "console serial", "-e logging --profile xeon5130-fb", "-p sink=serial, file, counter or socket"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("sinksFor(vt_shown, serial) error %v, want it to contain %q", err, w)
		}
	}
	// The description refuses vt_shown before anything boots on a
	// profile whose console shows no VTs.
	e := plugins.MustParseDescription(description).Experiments[1]
	for _, p := range e.Params {
		if p.Name == "sink" && (p.Unmet("vt_shown", "serial") == nil || p.Unmet("vt_shown", "fb") != nil || p.Unmet("socket", "serial") != nil) {
			t.Errorf("sink's needs %+v: want vt_shown refused on a serial console only", p.Needs)
		}
	}
}

func TestTargetsFor(t *testing.T) {
	serial, fb := testBench(serialGuest).screen(), testBench(fbGuest).screen()
	tests := []struct {
		param   string
		s       screen
		want    []string
		skipped int
		err     []string
	}{
		{"all", fb, Targets, 0, nil},
		{"all", serial, []string{"serial", "pty", "pipe", "null", "file"}, 2, nil},
		{"null", serial, []string{"null"}, 0, nil},
		{"pty_undrained", fb, []string{"pty_undrained"}, 0, nil},
		{"vt_shown", fb, []string{"vt_shown"}, 0, nil},
		{"vt_shown", serial, nil, 0, []string{"target vt_shown", "profile celeron-2.4", "console serial", "*CGA", "console vga or fb", "--profile xeon5130-fb", "lab profiles"}},
		{"vt_hidden", screen{}, nil, 0, []string{"target vt_hidden", "this guest", "console unknown", "drivers: none"}},
	}
	for _, tt := range tests {
		got, skipped, err := targetsFor(tt.param, tt.s)
		if tt.err != nil {
			if err == nil {
				t.Errorf("targetsFor(%s, %s) = %v, want an error", tt.param, tt.s.console, got)
				continue
			}
			for _, w := range tt.err {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("targetsFor(%s, %s) error %q, want it to contain %q", tt.param, tt.s.console, err, w)
				}
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) || skipped != tt.skipped {
			t.Errorf("targetsFor(%s, %s) = %v, %d, %v; want %v, %d", tt.param, tt.s.console, got, skipped, err, tt.want, tt.skipped)
		}
	}
}

// TestRunTargets prints to the targets that leave the host alone (not its
// VTs or serial port), with workloads built for both guest arches.
func TestRunTargets(t *testing.T) {
	for _, cc := range []string{"gcc", "i686-linux-gnu-gcc"} {
		dir := buildWorkloads(t, cc)
		for _, target := range []string{"pty", "pipe", "null", "file"} {
			t.Run(cc+"/"+target, func(t *testing.T) {
				resp := run(t, fbGuest, dir, "targets", map[string]string{"target": target, "lines": "500"}, 2)
				if resp.Outcome.Status != plugins.StatusOK {
					t.Fatalf("outcome = %+v\nlog:\n%s", resp.Outcome, resp.Log)
				}
				s := series(resp.Samples)
				if len(resp.Samples) != 2*4 {
					t.Errorf("%d samples, want 8 (4 metrics x 2 repeats): %v", len(resp.Samples), s)
				}
				for _, v := range s["real_s target="+target] {
					if v <= 0 {
						t.Errorf("real_s = %v, want > 0", v)
					}
				}
				// 500 lines of "############  %d\n": 500 x 15 bytes and 1390 digits.
				if !strings.Contains(resp.Log, "bytes 8890\n") {
					t.Errorf("the printer did not report 8890 bytes:\n%s", resp.Log)
				}
				// stdio line-buffers a terminal only (E3's default).
				wantTerm := map[string]string{"pty": "1"}[target]
				if wantTerm == "" {
					wantTerm = "0"
				}
				if !strings.Contains(resp.Log, "terminal "+wantTerm+"\n") {
					t.Errorf("target %s: want terminal %s in:\n%s", target, wantTerm, resp.Log)
				}
				if !strings.HasPrefix(resp.Env.Libc, "glibc-") {
					t.Errorf("env libc = %q", resp.Env.Libc)
				}
			})
		}
	}
}

// TestDrainerCountsEveryByte runs the targets workload many times to a
// pty and a pipe: the drainer ends at the byte count the printer reports,
// not at the end of its reads, so a drainer that was slow to read (a
// loaded host once ended one after 15 bytes of 3690, at the EIO of the
// slave's last close) and a pipe drainer gone at EOF before the count
// came (SIGPIPE to the workload) both fail here.
func TestDrainerCountsEveryByte(t *testing.T) {
	dir := buildWorkloads(t, "gcc")
	runs := 200
	if testing.Short() {
		runs = 50
	}
	for _, target := range []string{"pty", "pipe"} {
		for i := range runs {
			out, err := exec.Command(filepath.Join(dir, "targets"), target, "200", "auto", "10", t.TempDir(), "0").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "bytes 3490\n") {
				t.Fatalf("target %s, run %d: %v\n%s", target, i, err, out)
			}
		}
	}
}

// TestRunTargetsBuffering: each buffering mode runs and is what the
// printer used.
func TestRunTargetsBuffering(t *testing.T) {
	dir := buildWorkloads(t, "gcc")
	for _, b := range []string{"auto", "line", "full", "none"} {
		resp := run(t, fbGuest, dir, "targets", map[string]string{"target": "pipe", "lines": "200", "buffering": b}, 1)
		if resp.Outcome.Status != plugins.StatusOK || !strings.Contains(resp.Log, "buffering "+b+"\n") {
			t.Errorf("buffering=%s: outcome %+v\n%s", b, resp.Outcome, resp.Log)
		}
	}
}

// TestRunVTOnSerialGuest: a VT target or sink on a guest whose VTs show
// nothing fails before anything prints, naming the profile and the fix
// (with target=all or sink=all the VT ones are skipped and the result
// counts them: TestTargetsFor, TestSinksFor).
func TestRunVTOnSerialGuest(t *testing.T) {
	dir := buildWorkloads(t, "gcc")
	resp := run(t, serialGuest, dir, "targets", map[string]string{"target": "vt_shown", "lines": "10"}, 1)
	if resp.Outcome.Status != plugins.StatusFailed || !strings.Contains(resp.Outcome.Reason, "profile celeron-2.4") ||
		!strings.Contains(resp.Outcome.Reason, "xeon5130-fb") || len(resp.Samples) != 0 {
		t.Errorf("outcome %+v, %d samples; want failed naming the profile and one with VTs, no samples", resp.Outcome, len(resp.Samples))
	}
	if strings.Contains(resp.Log, "targets vt_shown") {
		t.Errorf("the workload ran anyway:\n%s", resp.Log)
	}
	// The logging sink on the VT shown: the same refusal, nothing recorded.
	resp = run(t, serialGuest, dir, "logging", map[string]string{"sink": "vt_shown", "events": "10"}, 1)
	if resp.Outcome.Status != plugins.StatusFailed || !strings.Contains(resp.Outcome.Reason, "sink vt_shown") ||
		!strings.Contains(resp.Outcome.Reason, "xeon5130-fb") || len(resp.Samples) != 0 || strings.Contains(resp.Log, "sink vt_shown") {
		t.Errorf("logging sink=vt_shown: outcome %+v, %d samples; want failed naming the sink and a profile with VTs, no samples\n%s",
			resp.Outcome, len(resp.Samples), resp.Log)
	}
}

// TestRunPtyUndrained: a target that blocks is ended by the timeout and
// reported, never hangs the run.
func TestRunPtyUndrained(t *testing.T) {
	dir := buildWorkloads(t, "gcc")
	start := time.Now()
	resp := run(t, fbGuest, dir, "targets", map[string]string{"target": "pty_undrained", "lines": "100000", "timeout": "1s"}, 1)
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("the blocked run took %v, want about the 1 s timeout", d)
	}
	if resp.Outcome.Status != plugins.StatusFailed || !strings.Contains(resp.Outcome.Reason, "target pty_undrained") ||
		!strings.Contains(resp.Outcome.Reason, "status 4") || !strings.Contains(resp.Outcome.StderrTail, "blocked") ||
		!strings.Contains(resp.Outcome.StderrTail, "within 1 s") {
		t.Errorf("outcome %+v; want failed naming the target, the block and the timeout", resp.Outcome)
	}
}

// TestRunLogging records events in the sinks that leave the host alone.
func TestRunLogging(t *testing.T) {
	for _, cc := range []string{"gcc", "i686-linux-gnu-gcc"} {
		dir := buildWorkloads(t, cc)
		for _, sink := range []string{"file", "counter", "socket"} {
			t.Run(cc+"/"+sink, func(t *testing.T) {
				resp := run(t, fbGuest, dir, "logging", map[string]string{"sink": sink, "events": "2000"}, 2)
				if resp.Outcome.Status != plugins.StatusOK {
					t.Fatalf("outcome = %+v\nlog:\n%s", resp.Outcome, resp.Log)
				}
				s := series(resp.Samples)
				if got := s["event_us sink="+sink]; len(got) != 2 || got[0] <= 0 {
					t.Errorf("event_us at sink=%s: %v, want 2 samples > 0", sink, got)
				}
				for _, m := range []string{"real_s", "user_s", "sys_s"} {
					if len(s[m+" sink="+sink]) != 2 {
						t.Errorf("%s at sink=%s: %v, want 2 samples", m, sink, s[m+" sink="+sink])
					}
				}
			})
		}
	}
}

// TestBadParams: values the description refuses, before any workload runs
// (lab checks the same before it boots anything).
func TestBadParams(t *testing.T) {
	d := plugins.MustParseDescription(description)
	tests := []struct {
		exp    string
		params map[string]string
		want   string
	}{
		{"targets", map[string]string{"target": "tty9"}, "tty9"},
		{"targets", map[string]string{"buffering": "big"}, "big"},
		{"targets", map[string]string{"lines": "0"}, "out of range"},
		{"targets", map[string]string{"timeout": "0s"}, "out of range"},
		{"targets", map[string]string{"sink": "file"}, "sink"},
		{"logging", map[string]string{"sink": "syslog"}, "syslog"},
		{"logging", map[string]string{"events": "-1"}, "out of range"},
	}
	for _, tt := range tests {
		_, _, err := d.Resolve(tt.exp, tt.params)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Resolve(%s, %v) = %v, want an error containing %q", tt.exp, tt.params, err, tt.want)
		}
	}
}
