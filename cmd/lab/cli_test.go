package main

// Unit tests of the CLI, run in-process with captured output. Nothing here
// boots QEMU: every command either needs no VM or fails before one starts.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"lab/images"
	"lab/internal/labtest"
	"lab/plugins"
	"lab/plugins/host"
)

// labResult is what one `lab ARGS...` run in-process did.
type labResult struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// runLab runs `lab ARGS...` in-process with stdin, cancelled after
// timeout: the one harness of the unit and the integration tests.
func runLab(t testing.TB, timeout time.Duration, stdin io.Reader, args ...string) labResult {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out, errb bytes.Buffer
	start := time.Now()
	code := run(ctx, append([]string{"lab"}, args...), getenvFor(t), stdin, &out, &errb)
	return labResult{code: code, stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
}

// cliRun runs `lab ARGS...` in-process with empty stdin.
func cliRun(t *testing.T, args ...string) labResult {
	t.Helper()
	return runLab(t, 30*time.Second, strings.NewReader(""), args...)
}

// cliEnv points every directory lab touches at fresh temp dirs and returns
// the state root.
func cliEnv(t *testing.T) (stateRoot string) {
	t.Helper()
	stateRoot = t.TempDir()
	setEnv(t, "LAB_STATE_DIR", stateRoot)
	setEnv(t, "LAB_CACHE_DIR", t.TempDir())
	setEnv(t, "XDG_CONFIG_HOME", t.TempDir())
	setEnv(t, "XDG_STATE_HOME", t.TempDir())
	setEnv(t, "XDG_CACHE_HOME", t.TempDir())
	setEnv(t, "LAB_SUPERVISOR_EXE", "/nonexistent/lab")
	return stateRoot
}

// wantOutput checks r's exit code and that each substring is in stream.
func wantOutput(t *testing.T, r labResult, args string, code int, stream string, subs ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("lab %s: exit %d, want %d\nstdout: %s\nstderr: %s", args, r.code, code, r.stdout, r.stderr)
	}
	got := r.stdout
	if stream == "stderr" {
		got = r.stderr
	}
	for _, s := range subs {
		if !strings.Contains(got, s) {
			t.Errorf("lab %s: %s = %q, want it to contain %q", args, stream, got, s)
		}
	}
}

// noVMDirs fails if anything was left in the state root.
func noVMDirs(t *testing.T, root string) {
	t.Helper()
	des, _ := os.ReadDir(root)
	for _, de := range des {
		t.Errorf("state root holds %s after a failed command", de.Name())
	}
}

func TestCLIProfilesTable(t *testing.T) {
	cliEnv(t)
	r := cliRun(t, "profiles")
	wantOutput(t, r, "profiles", 0, "stdout")
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if got := strings.Fields(lines[0]); !slices.Equal(got, []string{"NAME", "ARCH", "CPU", "IDENTITY", "CPUS", "MEMORY", "KERNEL", "STACK", "CONSOLE", "REPRODUCES"}) {
		t.Errorf("header = %q", lines[0])
	}
	builtins := images.Builtin()
	if got, want := len(lines)-1, len(builtins); got != want || want != 21 {
		t.Errorf("%d profile rows, %d built-ins; want 21 of each:\n%s", got, want, r.stdout)
	}
	rows := map[string]string{}
	for _, l := range lines[1:] {
		rows[strings.Fields(l)[0]] = l
	}
	for _, p := range builtins {
		if _, ok := rows[p.Name]; !ok {
			t.Errorf("built-in %s missing from `lab profiles`", p.Name)
		}
	}
	tests := []struct {
		name string
		want []string
	}{
		{"celeron-2.4", []string{"i386", "Intel(R) Celeron(R) CPU 2.00GHz (family 15 model 2)", " 1/1 ", "256 MB", "debian-6.1-686", "8192 KB", " serial ", "E1"}},
		{"xeon5130-fb", []string{" 1/2 ", "512 MB", " fb ", "E1,E3"}},
		{"xeon5130-1core", []string{"Intel(R) Xeon(R) CPU 5130 @ 2.00GHz (family 6 model 15)", " 1/2 ", "512 MB"}},
		{"xeon5130-2core", []string{" 2/2 "}},
		{"rockhopper-2.4", []string{" 2/2 ", "1331 MB", "E2"}},
		{"modern-x86_64", []string{"x86_64", "max", "debian-6.1-amd64", "E1,E2,E3,E4,E5"}},
		{"split-3g1g", []string{"pentium3", "1024 MB"}},
	}
	for _, tt := range tests {
		for _, w := range tt.want {
			if !strings.Contains(rows[tt.name], w) {
				t.Errorf("row %q, want it to contain %q", rows[tt.name], w)
			}
		}
	}
}

func TestCLIProfilesJSON(t *testing.T) {
	cliEnv(t)
	r := cliRun(t, "profiles", "--json")
	wantOutput(t, r, "profiles --json", 0, "stdout")
	var rows []images.ProfileSummary
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("lab profiles --json is not JSON: %v\n%s", err, r.stdout)
	}
	var names []string
	for _, row := range rows {
		names = append(names, row.Name)
		if row.Source != images.BuiltinSource {
			t.Errorf("%s: source %q, want %q", row.Name, row.Source, images.BuiltinSource)
		}
		if row.Arch == "" || row.CPU == "" || row.Online < 1 || row.Present < row.Online || row.MemoryMB == 0 || row.Kernel == "" || row.StackKB == 0 || row.Console == "" || len(row.Experiments) == 0 || row.Summary == "" {
			t.Errorf("%s: incomplete row %+v", row.Name, row)
		}
	}
	want := []string{"celeron-2.4", "celeron-2.4-era", "celeron-2.4-linux-2.6.32", "modern-x86_64", "p3-450", "p4-2.4", "p4-2.4-era", "p4-2.4-linux-2.6.32", "rockhopper-2.4", "rockhopper-2.4-linux-2.6.32", "split-1g3g", "split-2g2g", "split-3g1g", "split-3g1g-linux-2.6.32", "xeon5130-1core", "xeon5130-1core-era", "xeon5130-1core-linux-2.6.32", "xeon5130-2core", "xeon5130-2core-linux-2.6.32", "xeon5130-fb", "xeon5130-vga"}
	if !slices.Equal(names, want) {
		t.Errorf("names = %q, want %q", names, want)
	}
	// The JSON keys are a format for scripts.
	for _, k := range []string{`"cpus_online"`, `"cpus_present"`, `"memory_mb"`, `"stack_kb"`, `"console"`, `"experiments"`} {
		if !strings.Contains(r.stdout, k) {
			t.Errorf("JSON lacks key %s", k)
		}
	}
}

func TestCLIProfilesShow(t *testing.T) {
	cliEnv(t)
	r := cliRun(t, "profiles", "show", "celeron-2.4")
	wantOutput(t, r, "profiles show celeron-2.4", 0, "stdout",
		"name: celeron-2.4",
		"# QEMU command line (tcg, clock host):",
		"qemu-system-i386 ",
		"model-id=Intel(R) Celeron(R) CPU 2.00GHz",
		"family=15,model=2,stepping=9",
		",-pni,-hypervisor",
		"-m 256",
		"-kernel KERNEL", // not in the (empty) cache
		"calibration:\n    instr_per_ns_lo: 0.5\n    instr_per_ns_hi: 1.2\n",
	)
	// A variant shows the calibration it inherits.
	r = cliRun(t, "profiles", "show", "celeron-2.4-era")
	wantOutput(t, r, "profiles show celeron-2.4-era", 0, "stdout", "variant_of: celeron-2.4", "instr_per_ns_lo: 0.5", "confidence: low")

	r = cliRun(t, "profiles", "show", "--json", "celeron-2.4")
	wantOutput(t, r, "profiles show --json celeron-2.4", 0, "stdout")
	var got struct {
		Profile images.Profile `json:"profile"`
		Argv    []string       `json:"qemu_argv"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	if got.Profile.Name != "celeron-2.4" || got.Profile.CPU.Family != 15 {
		t.Errorf("profile = %+v", got.Profile)
	}
	i := slices.Index(got.Argv, "-cpu")
	if i < 0 || got.Argv[i+1] != "qemu32,vendor=GenuineIntel,family=15,model=2,stepping=9,model-id=Intel(R) Celeron(R) CPU 2.00GHz,-pni,-hypervisor" {
		t.Errorf("argv = %q, want the Celeron -cpu", got.Argv)
	}

	r = cliRun(t, "profiles", "show", "--accel", "kvm", "--clock", "icount:2", "celeron-2.4")
	wantOutput(t, r, "profiles show --accel kvm --clock icount:2", 1, "stderr", "icount needs the tcg accelerator")
	r = cliRun(t, "profiles", "show", "--clock", "icount", "xeon5130-2core")
	wantOutput(t, r, "profiles show --clock icount xeon5130-2core", 1, "stderr", "exactly one online CPU", "--clock host")
	r = cliRun(t, "profiles", "show", "--clock", "icount:4", "xeon5130-1core")
	wantOutput(t, r, "profiles show --clock icount:4 xeon5130-1core", 0, "stdout", "-icount shift=4,sleep=off", "maxcpus=1")
	r = cliRun(t, "profiles", "show")
	wantOutput(t, r, "profiles show", 1, "stderr", "needs one NAME", "lab profiles")
}

// TestCLIProfilesShowUnknownParts: a profile file naming a CPU model
// QEMU does not have, or a kernel lab neither fetches, builds nor holds,
// is refused by `lab profiles show` with each named (issue 31: it
// printed a command line that cannot boot).
func TestCLIProfilesShowUnknownParts(t *testing.T) {
	cliEnv(t)
	p, err := images.Lookup("", "celeron-2.4")
	if err != nil {
		t.Fatal(err)
	}
	p.Name, p.CPU.Model, p.Kernel = "odd", "pentium9", "linux-9.9-nosuch"
	b, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "odd.yaml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := cliRun(t, "profiles", "show", "--profile-file", file, "odd")
	wantOutput(t, r, "profiles show odd", 1, "stderr", "profile odd cannot boot",
		`kernel: "linux-9.9-nosuch" is no kernel lab fetches (debian-6.1-686, debian-6.1-amd64), builds (`,
		`cpu.model: qemu-system-i386 has no CPU model "pentium9"`, "fix its profile file")
}

func TestCLIUnknownProfile(t *testing.T) {
	known := "known: celeron-2.4, celeron-2.4-era, celeron-2.4-linux-2.6.32, modern-x86_64, p3-450, p4-2.4, p4-2.4-era, p4-2.4-linux-2.6.32, rockhopper-2.4, rockhopper-2.4-linux-2.6.32, split-1g3g, split-2g2g, split-3g1g, split-3g1g-linux-2.6.32, xeon5130-1core, xeon5130-1core-era, xeon5130-1core-linux-2.6.32, xeon5130-2core, xeon5130-2core-linux-2.6.32, xeon5130-fb, xeon5130-vga"
	tests := [][]string{
		{"up", "celeron2.4"},
		{"profiles", "show", "celeron2.4"},
	}
	for _, args := range tests {
		root := cliEnv(t)
		r := cliRun(t, args...)
		wantOutput(t, r, strings.Join(args, " "), 1, "stderr", `unknown profile "celeron2.4"`, `did you mean "celeron-2.4"?`, known)
		if r.stdout != "" {
			t.Errorf("lab %s: stdout = %q, want nothing", strings.Join(args, " "), r.stdout)
		}
		noVMDirs(t, root)
	}
	cliEnv(t)
	r := cliRun(t, "up", "vax")
	wantOutput(t, r, "up vax", 1, "stderr", `unknown profile "vax"; known: celeron-2.4`)
}

const userProfile = `name: my-box
summary: a test machine
experiments: [E1]
arch: i386
machine: pc
cpu:
  model: qemu32
  model_id: "ACME, Inc. CPU"
topology: {sockets: 1, cores: 1, threads: 1}
memory_mb: 128
kernel: debian-6.1-686
`

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCLIUserProfiles(t *testing.T) {
	t.Run("good file in the profiles dir", func(t *testing.T) {
		cliEnv(t)
		path := filepath.Join(getenvFor(t)("XDG_CONFIG_HOME"), "lab", "profiles", "mine.yaml")
		writeFile(t, path, userProfile)
		r := cliRun(t, "profiles", "--json")
		wantOutput(t, r, "profiles --json", 0, "stdout", `"name": "my-box"`, path)
		r = cliRun(t, "profiles", "show", "my-box")
		// A comma in model-id is doubled for QEMU.
		wantOutput(t, r, "profiles show my-box", 0, "stdout", "model-id=ACME,, Inc. CPU", "-m 128")
	})
	t.Run("unknown field in the profiles dir", func(t *testing.T) {
		cliEnv(t)
		path := filepath.Join(getenvFor(t)("XDG_CONFIG_HOME"), "lab", "profiles", "typo.yaml")
		writeFile(t, path, userProfile+"memroy_mb: 256\n")
		for _, args := range [][]string{{"profiles"}, {"up", "celeron-2.4"}, {"profiles", "show", "celeron-2.4"}} {
			r := cliRun(t, args...)
			wantOutput(t, r, strings.Join(args, " "), 1, "stderr", path, `unknown field "memroy_mb"`)
		}
	})
	t.Run("unknown field in --profile-file", func(t *testing.T) {
		cliEnv(t)
		path := filepath.Join(t.TempDir(), "typo.json")
		writeFile(t, path, `{"name": "j", "famly": 6}`)
		r := cliRun(t, "profiles", "show", "--profile-file", path, "j")
		wantOutput(t, r, "profiles show --profile-file", 1, "stderr", path, `unknown field "famly"`)
	})
	t.Run("bad value", func(t *testing.T) {
		cliEnv(t)
		path := filepath.Join(t.TempDir(), "bad.yaml")
		writeFile(t, path, strings.Replace(userProfile, "memory_mb: 128", "memory_mb: 4", 1))
		r := cliRun(t, "profiles", "--profile-file", path)
		wantOutput(t, r, "profiles --profile-file bad.yaml", 1, "stderr", path, "memory_mb:", "out of range")
	})
}

// fakeQEMUDir returns a directory holding executables named like the QEMU
// system emulators, for a PATH where QEMU is "installed".
func fakeQEMUDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"qemu-system-i386", "qemu-system-x86_64"} {
		writeFile(t, filepath.Join(dir, name), "#!/bin/sh\nexit 1\n")
		if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCLIUpFailsBeforeBooting(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		path   string // "qemu": fake QEMU on PATH; "": empty PATH
		stderr []string
	}{
		{"kernel not in cache", []string{"up", "celeron-2.4"}, "qemu",
			[]string{"kernel debian-6.1-686 not in cache", "make setup", "lab image fetch debian-6.1-686"}},
		{"amd64 kernel not in cache", []string{"up", "modern-x86_64"}, "qemu",
			[]string{"kernel debian-6.1-amd64 not in cache", "make setup"}},
		{"no QEMU i386", []string{"up", "celeron-2.4"}, "",
			[]string{"qemu-system-i386 not found", "apt-get install qemu-system-x86", "make setup"}},
		{"no QEMU x86_64", []string{"up", "modern-x86_64"}, "",
			[]string{"qemu-system-x86_64 not found", "apt-get install qemu-system-x86"}},
		{"bad clock", []string{"up", "--clock", "wall", "celeron-2.4"}, "qemu",
			[]string{`"wall"`, "not one of host, icount, icount:N"}},
		{"negative memory", []string{"up", "--memory", "-5", "celeron-2.4"}, "qemu",
			[]string{"--memory -5"}},
		{"tiny memory", []string{"up", "--memory", "1", "celeron-2.4"}, "qemu",
			[]string{"--memory 1", "out of range 16..3072 for arch i386", "profile's 256 MB"}},
		{"huge memory", []string{"up", "--memory", "999999", "modern-x86_64"}, "qemu",
			[]string{"--memory 999999", "out of range 16..16384 for arch x86_64"}},
		{"bad name", []string{"up", "--name", "../evil", "celeron-2.4"}, "qemu",
			[]string{`vm name "../evil"`, "letters, digits"}},
		{"no profile", []string{"up"}, "qemu",
			[]string{"needs exactly one PROFILE", "lab profiles"}},
		{"two profiles", []string{"up", "celeron-2.4", "p4-2.4"}, "qemu",
			[]string{"needs exactly one PROFILE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := cliEnv(t)
			if tt.path == "qemu" {
				setEnv(t, "PATH", fakeQEMUDir(t))
			} else {
				setEnv(t, "PATH", t.TempDir())
			}
			r := cliRun(t, tt.args...)
			wantOutput(t, r, strings.Join(tt.args, " "), 1, "stderr", tt.stderr...)
			noVMDirs(t, root)
		})
	}
}

func TestCLINoVMsUp(t *testing.T) {
	none := "no VMs are up; start one with `lab up PROFILE`"
	tests := []struct {
		args   []string
		stderr []string
	}{
		{[]string{"exec", "--", "uname", "-a"}, []string{none}},
		{[]string{"exec", "uname"}, []string{none}},
		{[]string{"exec", "ghost", "--", "ls"}, []string{`vm "ghost" is not up`, "lab up PROFILE"}},
		{[]string{"down"}, []string{none}},
		{[]string{"down", "ghost"}, []string{`vm "ghost" is not up`}},
		{[]string{"console"}, []string{none}},
		{[]string{"console", "ghost"}, []string{`vm "ghost" is not up`}},
		{[]string{"cp", "./file", "ghost:/root/"}, []string{`vm "ghost" is not up`}},
		{[]string{"cp", "ghost:/etc/passwd", "."}, []string{`vm "ghost" is not up`}},
	}
	for _, tt := range tests {
		cliEnv(t)
		r := cliRun(t, tt.args...)
		wantOutput(t, r, strings.Join(tt.args, " "), 1, "stderr", tt.stderr...)
	}
}

func TestCLIStatusNone(t *testing.T) {
	cliEnv(t)
	r := cliRun(t, "status")
	wantOutput(t, r, "status", 0, "stdout", "no VMs are up")
	r = cliRun(t, "status", "--json")
	wantOutput(t, r, "status --json", 0, "stdout")
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("lab status --json = %q, want []", r.stdout)
	}
}

func TestCLIStatusStale(t *testing.T) {
	root := cliEnv(t)
	dir := filepath.Join(root, "ghost")
	writeFile(t, filepath.Join(dir, "state.json"), `{"name":"ghost","profile":{"name":"celeron-2.4"},"phase":"running","supervisor_pid":0}`)
	r := cliRun(t, "status")
	wantOutput(t, r, "status", 0, "stdout", "ghost", "celeron-2.4", "stale")
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("stale state %s not cleaned", dir)
	}
}

func TestCLIExecArgErrors(t *testing.T) {
	tests := []struct {
		args   []string
		stderr string
	}{
		{[]string{"exec"}, "no command given"},
		{[]string{"exec", "vm", "--"}, "no command given after --"},
		{[]string{"exec", "a", "b", "--", "ls"}, "got 2 words before --"},
	}
	for _, tt := range tests {
		cliEnv(t)
		r := cliRun(t, tt.args...)
		wantOutput(t, r, strings.Join(tt.args, " "), 1, "stderr", tt.stderr)
	}
}

func TestCLICpArgErrors(t *testing.T) {
	tests := []struct {
		args   []string
		stderr string
	}{
		{[]string{"cp", "a"}, "needs SRC and DST"},
		{[]string{"cp", "a", "b"}, `neither "a" nor "b" names a VM`},
		{[]string{"cp", "x:/a", "y:/b"}, "both"},
	}
	for _, tt := range tests {
		cliEnv(t)
		r := cliRun(t, tt.args...)
		wantOutput(t, r, strings.Join(tt.args, " "), 1, "stderr", tt.stderr)
	}
}

func TestSplitNameCmd(t *testing.T) {
	tests := []struct {
		args     []string
		wantName string
		wantCmd  []string
		wantErr  string
	}{
		{[]string{"uname", "-a"}, "", []string{"uname", "-a"}, ""},
		{[]string{"--", "uname", "-a"}, "", []string{"uname", "-a"}, ""},
		{[]string{"vm1", "--", "ls", "-l"}, "vm1", []string{"ls", "-l"}, ""},
		{[]string{"vm1", "--", "sh", "-c", "a -- b"}, "vm1", []string{"sh", "-c", "a -- b"}, ""},
		{[]string{"vm1", "--", "git", "diff", "--", "f"}, "vm1", []string{"git", "diff", "--", "f"}, ""},
		{[]string{"sh", "-c", "echo --"}, "", []string{"sh", "-c", "echo --"}, ""},
		{nil, "", nil, "no command given"},
		{[]string{"--"}, "", nil, "no command given after --"},
		{[]string{"vm1", "--"}, "", nil, "no command given after --"},
		{[]string{"a", "b", "--", "ls"}, "", nil, "got 2 words before --"},
	}
	for _, tt := range tests {
		name, cmd, err := splitNameCmd(tt.args)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("splitNameCmd(%q) = %q, %q, %v; want an error containing %q", tt.args, name, cmd, err, tt.wantErr)
			}
			continue
		}
		if err != nil || name != tt.wantName || !slices.Equal(cmd, tt.wantCmd) {
			t.Errorf("splitNameCmd(%q) = %q, %q, %v; want %q, %q", tt.args, name, cmd, err, tt.wantName, tt.wantCmd)
		}
	}
}

func TestStackString(t *testing.T) {
	if got := stackString(-1); got != "unlimited" {
		t.Errorf("stackString(-1) = %q", got)
	}
	if got := stackString(8192); got != "8192 KB" {
		t.Errorf("stackString(8192) = %q", got)
	}
}

func TestStdinPiped(t *testing.T) {
	if stdinPiped(nil) {
		t.Errorf("stdinPiped(nil) = true")
	}
	if !stdinPiped(strings.NewReader("x")) {
		t.Errorf("stdinPiped(strings.Reader) = false")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if !stdinPiped(r) {
		t.Errorf("stdinPiped(pipe) = false")
	}
}

// commandsIn lists the command names in the COMMANDS section of a help text.
func commandsIn(help string) []string {
	_, after, ok := strings.Cut(help, "COMMANDS:\n")
	if !ok {
		return nil
	}
	var names []string
	for _, l := range strings.Split(after, "\n") {
		if strings.TrimSpace(l) == "" || !strings.HasPrefix(l, "   ") {
			break
		}
		name := strings.TrimSuffix(strings.Fields(l)[0], ",")
		if name != "help" {
			names = append(names, name)
		}
	}
	return names
}

// exampleRE is an example invocation in a help text's description: an
// indented line that runs lab (USAGE lines are excluded by the caller).
var exampleRE = regexp.MustCompile(`(?m)^\s+(\$ )?lab [a-z]`)

// noExampleYet lists top-level commands whose help has no example yet.
// Shrink it, never grow it.
var noExampleYet = map[string]bool{}

func TestCLIHelp(t *testing.T) {
	cliEnv(t)
	r := cliRun(t, "--help")
	wantOutput(t, r, "--help", 0, "stdout", "lab up celeron-2.4")
	cmds := commandsIn(r.stdout)
	for _, want := range []string{"up", "status", "exec", "cp", "console", "down", "profiles", "image"} {
		if !slices.Contains(cmds, want) {
			t.Errorf("lab --help lists commands %q, want %s among them", cmds, want)
		}
	}
	var all []string
	for _, c := range cmds {
		all = append(all, c)
		h := cliRun(t, c, "--help")
		for _, sub := range commandsIn(h.stdout) {
			all = append(all, c+" "+sub)
		}
	}
	for _, c := range all {
		args := append(strings.Fields(c), "--help")
		h := cliRun(t, args...)
		if h.code != 0 {
			t.Errorf("lab %s --help: exit %d, want 0\n%s", c, h.code, h.stderr)
			continue
		}
		if !strings.Contains(h.stdout, "lab "+c) {
			t.Errorf("lab %s --help does not name the command:\n%s", c, h.stdout)
		}
		_, desc, _ := strings.Cut(h.stdout, "USAGE:\n")
		if _, d, ok := strings.Cut(desc, "\n"); ok {
			desc = d // past the usage line itself
		}
		if strings.Contains(c, " ") {
			continue // subcommands: their parent's help shows the examples
		}
		has := exampleRE.MatchString(desc)
		switch {
		case !has && !noExampleYet[c]:
			t.Errorf("lab %s --help shows no example:\n%s", c, h.stdout)
		case has && noExampleYet[c]:
			t.Errorf("lab %s --help now has an example; remove it from noExampleYet", c)
		}
	}
}

func TestCLIUnknownCommand(t *testing.T) {
	cliEnv(t)
	r := cliRun(t, "frobnicate")
	if r.code == 0 {
		t.Errorf("lab frobnicate: exit 0, want non-zero\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
}

// TestCLIExecDoubleDash: in `lab exec -- CMD...` the command may contain
// its own "--" (git diff -- f). urfave/cli drops the first "--" before the
// action sees the arguments, so splitNameCmd takes the command's "--" for
// lab's.
func TestCLIExecDoubleDash(t *testing.T) {
	none := "no VMs are up; start one with `lab up PROFILE`"
	for _, args := range [][]string{
		{"exec", "--", "git", "diff", "--", "f"},
		{"exec", "--", "ls", "--", "x"},
	} {
		cliEnv(t)
		r := cliRun(t, args...)
		wantOutput(t, r, strings.Join(args, " "), 1, "stderr", none)
	}
}

// `lab plugins`, `lab plugins show` and the checks of `lab run` work from
// the description recorded at build time: here a plugin has only its guest
// (i386) build, which this host could not run, and nothing is run.
func TestCLIPluginsGuestBuildOnly(t *testing.T) {
	cliEnv(t)
	root := t.TempDir()
	setEnv(t, "LAB_LIBDIR", t.TempDir()) // no built-ins
	setEnv(t, "XDG_DATA_HOME", t.TempDir())
	setEnv(t, "LAB_PLUGIN_PATH", root)
	dir := filepath.Join(root, "guestonly", "i386")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	labtest.WriteELF(t, filepath.Join(dir, "guestonly"), "i386", "")
	desc := &plugins.Description{Name: "guestonly", Version: "0.3", Summary: "only a guest build", Experiments: []plugins.Experiment{{
		Name: "x", Summary: "the one", Params: []plugins.Param{{Name: "n", Type: plugins.TypeInt, Default: "7", Min: plugins.Ptr(1)}},
		Metrics:    []plugins.Metric{{Name: "t", Unit: "s", Help: "time"}},
		References: []plugins.Reference{{Experiment: "E9", Source: "notes", Machine: "old box", Metric: "t", Value: 1.5, Unit: "s"}},
	}}}
	if err := host.WriteRecord(dir, desc); err != nil {
		t.Fatal(err)
	}

	r := cliRun(t, "plugins")
	wantOutput(t, r, "plugins", 0, "stdout", "guestonly 0.3", "x", "n=7", "t (s)")
	r = cliRun(t, "plugins", "show", "guestonly")
	wantOutput(t, r, "plugins show guestonly", 0, "stdout", "only a guest build", "n (int, default 7, >= 1)", "old box (notes)")
	r = cliRun(t, "plugins", "--json")
	var got []*plugins.Description
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], desc) {
		t.Errorf("lab plugins --json = %s (%v), want the recorded description", r.stdout, err)
	}
	r = cliRun(t, "run", "guestonly", "-p", "n=0")
	wantOutput(t, r, "run guestonly -p n=0", 1, "stderr", "parameter n", ">= 1")

	// A rebuilt binary with the old record: a clear error naming the fix.
	labtest.WriteELF(t, filepath.Join(dir, "guestonly"), "i386", "rebuilt")
	r = cliRun(t, "plugins", "show", "guestonly")
	wantOutput(t, r, "plugins show guestonly (stale)", 1, "stderr", "stale", "lab plugin build DIR")
	r = cliRun(t, "run", "guestonly")
	wantOutput(t, r, "run guestonly (stale)", 1, "stderr", "stale", "make plugins")
}
