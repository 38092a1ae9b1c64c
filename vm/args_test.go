package vm

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"lab/images"
	"lab/vm/link"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenOptions are the fixed, fake inputs the golden files are made with.
func goldenOptions(p images.Profile) Options {
	return Options{
		Profile:  p,
		Kernel:   "/cache/vmlinuz",
		Initrd:   "/cache/initrd",
		StateDir: "/state/" + p.Name,
		Accel:    "tcg",
		Clock:    Clock{Mode: "host"},
	}
}

// TestArgsGolden pins the QEMU argv of every built-in profile, one argument
// per line in testdata/PROFILE.args. Refresh with `go test ./vm -run
// TestArgsGolden -update` and review the diff.
func TestArgsGolden(t *testing.T) {
	builtins := images.Builtin()
	if len(builtins) == 0 {
		t.Fatal("images.Builtin() returned no profiles")
	}
	for _, p := range builtins {
		t.Run(p.Name, func(t *testing.T) {
			argv, err := Args(goldenOptions(p))
			if err != nil {
				t.Fatalf("Args(%s) = %v", p.Name, err)
			}
			for i, a := range argv {
				if strings.Contains(a, "\n") {
					t.Fatalf("argv[%d] = %q contains a newline; the golden format cannot hold it", i, a)
				}
			}
			got := strings.Join(argv, "\n") + "\n"
			path := filepath.Join("testdata", p.Name+".args")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run `go test ./vm -run TestArgsGolden -update` to create it)", err)
			}
			if got != string(want) {
				t.Errorf("Args(%s) differs from %s (rerun with -update if the change is intended):\n%s", p.Name, path, lineDiff(string(want), got))
			}
		})
	}
}

// TestArgsGoldenNoStrays fails on golden files left for profiles that no
// longer exist.
func TestArgsGoldenNoStrays(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.args"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range images.Builtin() {
		names = append(names, p.Name)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".args")
		if !slices.Contains(names, name) {
			t.Errorf("%s has no built-in profile %q; delete it", f, name)
		}
	}
}

// lineDiff lists the lines that differ between want and got.
func lineDiff(want, got string) string {
	w := strings.Split(want, "\n")
	g := strings.Split(got, "\n")
	var sb strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			sb.WriteString("line " + strconv.Itoa(i+1) + ":\n  want " + a + "\n  got  " + b + "\n")
		}
	}
	return sb.String()
}

// builtin returns the built-in profile called name.
func builtin(t *testing.T, name string) images.Profile {
	t.Helper()
	for _, p := range images.Builtin() {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no built-in profile %q", name)
	return images.Profile{}
}

// flagValue returns the argument after the first occurrence of flag in argv.
func flagValue(t *testing.T, argv []string, flag string) string {
	t.Helper()
	i := slices.Index(argv, flag)
	if i < 0 || i+1 >= len(argv) {
		t.Fatalf("argv has no %s VALUE: %q", flag, argv)
	}
	return argv[i+1]
}

func TestArgsRefuses(t *testing.T) {
	icount := Clock{Mode: "icount", Shift: 3}
	tests := []struct {
		name    string
		profile string
		accel   string
		clock   Clock
		want    []string // substrings of the error
	}{
		{"icount with two online CPUs", "xeon5130-2core", "tcg", icount, []string{"icount", "one online CPU", "xeon5130-2core", "2", "--clock host"}},
		{"icount on rockhopper", "rockhopper-2.4", "tcg", icount, []string{"icount", "one online CPU", "rockhopper-2.4"}},
		{"icount on modern", "modern-x86_64", "tcg", icount, []string{"icount", "modern-x86_64"}},
		{"icount with kvm", "celeron-2.4", "kvm", icount, []string{"icount", "tcg", "kvm"}},
		{"empty accel", "celeron-2.4", "", Clock{Mode: "host"}, []string{"accelerator", "kvm or tcg"}},
		{"auto is not decided", "celeron-2.4", "auto", Clock{Mode: "host"}, []string{`"auto"`, "kvm or tcg"}},
		{"unknown accel", "celeron-2.4", "hvf", Clock{Mode: "host"}, []string{`"hvf"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := goldenOptions(builtin(t, tt.profile))
			o.Accel, o.Clock = tt.accel, tt.clock
			argv, err := Args(o)
			if err == nil {
				t.Fatalf("Args(%s, accel %q, clock %s) = %q, want an error", tt.profile, tt.accel, tt.clock, argv)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Args(%s) error = %q, want it to contain %q", tt.profile, err, w)
				}
			}
		})
	}
}

func TestArgsAccelAndClock(t *testing.T) {
	tests := []struct {
		name      string
		profile   string
		accel     string
		clock     Clock
		wantAccel string
		wantICnt  string // "" = no -icount
	}{
		{"tcg one CPU", "celeron-2.4", "tcg", Clock{Mode: "host"}, "tcg,thread=single", ""},
		{"tcg SMP", "xeon5130-2core", "tcg", Clock{Mode: "host"}, "tcg,thread=multi", ""},
		{"tcg two present one online", "xeon5130-1core", "tcg", Clock{Mode: "host"}, "tcg,thread=multi", ""},
		{"kvm", "xeon5130-2core", "kvm", Clock{Mode: "host"}, "kvm", ""},
		{"icount one CPU", "celeron-2.4", "tcg", Clock{Mode: "icount", Shift: 3}, "tcg,thread=single", "shift=3,sleep=off"},
		{"icount maxcpus=1 is allowed", "xeon5130-1core", "tcg", Clock{Mode: "icount", Shift: 5}, "tcg,thread=single", "shift=5,sleep=off"},
		{"icount shift 0", "split-3g1g", "tcg", Clock{Mode: "icount"}, "tcg,thread=single", "shift=0,sleep=off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := goldenOptions(builtin(t, tt.profile))
			o.Accel, o.Clock = tt.accel, tt.clock
			argv, err := Args(o)
			if err != nil {
				t.Fatalf("Args = %v", err)
			}
			if got := flagValue(t, argv, "-accel"); got != tt.wantAccel {
				t.Errorf("-accel %q, want %q", got, tt.wantAccel)
			}
			if tt.wantICnt == "" {
				if slices.Contains(argv, "-icount") {
					t.Errorf("argv has -icount with clock %s: %q", tt.clock, argv)
				}
			} else if got := flagValue(t, argv, "-icount"); got != tt.wantICnt {
				t.Errorf("-icount %q, want %q", got, tt.wantICnt)
			}
		})
	}
}

func TestArgsShape(t *testing.T) {
	for _, p := range images.Builtin() {
		t.Run(p.Name, func(t *testing.T) {
			argv, err := Args(goldenOptions(p))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := argv[0], Binary(p.Arch); got != want {
				t.Errorf("argv[0] = %q, want %q", got, want)
			}
			for _, f := range []string{"-nodefaults", "-no-reboot"} {
				if !slices.Contains(argv, f) {
					t.Errorf("argv lacks %s", f)
				}
			}
			if got, want := flagValue(t, argv, "-kernel"), "/cache/vmlinuz"; got != want {
				t.Errorf("-kernel %q, want %q", got, want)
			}
			if got, want := flagValue(t, argv, "-initrd"), "/cache/initrd"; got != want {
				t.Errorf("-initrd %q, want %q", got, want)
			}
			if got := flagValue(t, argv, "-append"); !strings.Contains(got, "panic=-1") {
				t.Errorf("-append %q lacks panic=-1", got)
			}
			if got, want := flagValue(t, argv, "-qmp"), "unix:/state/"+p.Name+"/qmp.sock,server=on,wait=off"; got != want {
				t.Errorf("-qmp %q, want %q", got, want)
			}
			if got, want := flagValue(t, argv, "-cpu"), CPUArg(p.CPU); got != want {
				t.Errorf("-cpu %q, want %q", got, want)
			}
			if !slices.Contains(argv, "virtserialport,chardev=link,name=org.lab.link.0") {
				t.Errorf("argv lacks the link port: %q", argv)
			}
		})
	}
}

func TestBinary(t *testing.T) {
	for arch, want := range map[string]string{"i386": "qemu-system-i386", "x86_64": "qemu-system-x86_64"} {
		if got := Binary(arch); got != want {
			t.Errorf("Binary(%q) = %q, want %q", arch, got, want)
		}
	}
}

func TestArgsMemoryOverride(t *testing.T) {
	tests := []struct {
		override int
		want     string
	}{
		{0, "256"},
		{1024, "1024"},
		{-5, "256"}, // not an override; `lab up` refuses negatives before Args
	}
	for _, tt := range tests {
		o := goldenOptions(builtin(t, "celeron-2.4"))
		o.MemoryMB = tt.override
		argv, err := Args(o)
		if err != nil {
			t.Fatal(err)
		}
		if got := flagValue(t, argv, "-m"); got != tt.want {
			t.Errorf("Args(MemoryMB %d): -m %s, want %s", tt.override, got, tt.want)
		}
	}
}

func TestArgsDoesNotChangeProfile(t *testing.T) {
	p := builtin(t, "celeron-2.4")
	o := goldenOptions(p)
	o.MemoryMB = 999
	if _, err := Args(o); err != nil {
		t.Fatal(err)
	}
	if o.Profile.MemoryMB != 256 {
		t.Errorf("Args changed the profile's memory to %d", o.Profile.MemoryMB)
	}
}

func TestParseClock(t *testing.T) {
	tests := []struct {
		in      string
		want    Clock
		wantErr string // substring; "" = no error
	}{
		{"", Clock{Mode: "host"}, ""},
		{"host", Clock{Mode: "host"}, ""},
		{"icount", Clock{Mode: "icount", Shift: 0}, ""}, // as in profile files
		{"icount:0", Clock{Mode: "icount", Shift: 0}, ""},
		{"icount:7", Clock{Mode: "icount", Shift: 7}, ""},
		{"icount:10", Clock{Mode: "icount", Shift: 10}, ""},
		{"icount:11", Clock{}, "0 <= N <= 10"},
		{"icount:-1", Clock{}, "0 <= N <= 10"},
		{"icount:x", Clock{}, "bad shift"},
		{"icount:", Clock{}, "bad shift"},
		{"wall", Clock{}, "not one of host, icount, icount:N"},
		{"HOST", Clock{}, "not one of host"},
	}
	for _, tt := range tests {
		got, err := ParseClock(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.in) {
				t.Errorf("ParseClock(%q) = %v, %v; want an error naming %q and containing %q", tt.in, got, err, tt.in, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseClock(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
		// String renders what ParseClock reads back.
		if back, err := ParseClock(got.String()); err != nil || back != got {
			t.Errorf("ParseClock(%q) = %+v, %v; want %+v", got.String(), back, err, got)
		}
	}
}

func TestCPUArg(t *testing.T) {
	tests := []struct {
		name string
		cpu  images.CPU
		want string
	}{
		{"model only", images.CPU{Model: "max"}, "max"},
		{
			"celeron identity",
			images.CPU{Model: "qemu32", ModelID: "Intel(R) Celeron(R) CPU 2.00GHz", Vendor: "GenuineIntel", Family: 15, ModelNumber: 2, Stepping: 9, Drop: []string{"pni", "hypervisor"}},
			"qemu32,vendor=GenuineIntel,family=15,model=2,stepping=9,model-id=Intel(R) Celeron(R) CPU 2.00GHz,-pni,-hypervisor",
		},
		{"comma in model-id", images.CPU{Model: "qemu32", ModelID: "ACME, Inc. CPU"}, "qemu32,model-id=ACME,, Inc. CPU"},
		{"two commas", images.CPU{Model: "qemu32", ModelID: "a,b,c"}, "qemu32,model-id=a,,b,,c"},
		{"add and drop", images.CPU{Model: "core2duo", Add: []string{"sse3"}, Drop: []string{"hypervisor"}}, "core2duo,+sse3,-hypervisor"},
		{"zero signature keeps the model's", images.CPU{Model: "qemu32", Vendor: "GenuineIntel"}, "qemu32,vendor=GenuineIntel"},
	}
	for _, tt := range tests {
		if got := CPUArg(tt.cpu); got != tt.want {
			t.Errorf("CPUArg(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestCPUArgModelIDSurvivesSplit checks the escaping the way QEMU undoes
// it: split on single commas, turn ",," back into one.
func TestCPUArgModelIDSurvivesSplit(t *testing.T) {
	id := "Weird, Inc. (R) CPU,, 2GHz,"
	arg := CPUArg(images.CPU{Model: "qemu32", ModelID: id, Drop: []string{"pni"}})
	var opts []string
	var cur strings.Builder
	for i := 0; i < len(arg); i++ {
		if arg[i] == ',' {
			if i+1 < len(arg) && arg[i+1] == ',' {
				cur.WriteByte(',')
				i++
				continue
			}
			opts = append(opts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(arg[i])
	}
	opts = append(opts, cur.String())
	want := []string{"qemu32", "model-id=" + id, "-pni"}
	if !slices.Equal(opts, want) {
		t.Errorf("QEMU would parse CPUArg = %q as %q, want %q", arg, opts, want)
	}
}

func TestCmdline(t *testing.T) {
	custom := builtin(t, "xeon5130-2core")
	custom.Guest.StackKB = 1024
	custom.Guest.OfflineCPUs = []int{1}
	custom.Guest.Sysctls = map[string]string{"vm.overcommit_memory": "2", "kernel.threads-max": "500", "kernel.pid_max": "4096"}
	custom.Cmdline = "nosmt quiet"

	tests := []struct {
		name    string
		p       images.Profile
		want    []string // words that must appear, in this order
		wantNot []string // substrings that must not appear
	}{
		{"celeron", builtin(t, "celeron-2.4"),
			[]string{"console=ttyS0,115200", "panic=-1", "rdinit=/init", "lab.stack=8192", "lab.sysctl=kernel.randomize_va_space=0"},
			[]string{"maxcpus=", "lab.offline="}},
		{"xeon one core", builtin(t, "xeon5130-1core"),
			[]string{"panic=-1", "maxcpus=1", "lab.stack=8192"}, nil},
		{"xeon two cores", builtin(t, "xeon5130-2core"),
			[]string{"lab.stack=8192"}, []string{"maxcpus="}},
		{"guest settings, sysctls sorted, extra cmdline last", custom,
			[]string{"lab.stack=1024", "lab.offline=1", "lab.sysctl=kernel.pid_max=4096", "lab.sysctl=kernel.threads-max=500", "lab.sysctl=vm.overcommit_memory=2", "nosmt", "quiet"},
			[]string{"maxcpus="}},
		{"no stack setting", images.Profile{Topology: images.Topology{Sockets: 1, Cores: 1, Threads: 1}},
			[]string{"panic=-1"}, []string{"lab.stack="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Cmdline(tt.p)
			words := strings.Fields(got)
			at := 0
			for _, w := range tt.want {
				i := slices.Index(words[at:], w)
				if i < 0 {
					t.Errorf("Cmdline = %q, want %q (after word %d)", got, w, at)
					continue
				}
				at += i + 1
			}
			for _, w := range tt.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("Cmdline = %q, want no %q", got, w)
				}
			}
		})
	}
}

func TestCmdlineOfflineList(t *testing.T) {
	p := images.Profile{Topology: images.Topology{Sockets: 1, Cores: 4, Threads: 1}, Guest: images.Guest{OfflineCPUs: []int{3, 1}}}
	if got := Cmdline(p); !strings.Contains(got, " lab.offline=3,1") {
		t.Errorf("Cmdline = %q, want lab.offline=3,1", got)
	}
	p.Topology.Online = 3
	if got := Cmdline(p); !strings.Contains(got, " maxcpus=3") {
		t.Errorf("Cmdline = %q, want maxcpus=3", got)
	}
}

// TestArgsConsole: each console kind gives the guest what it needs for
// its VTs, and the guest is told its profile and console.
func TestArgsConsole(t *testing.T) {
	tests := []struct {
		console          string
		vgaCard, vgaMode bool
	}{
		{"", false, false},
		{"serial", false, false},
		{"vga", true, false},
		{"fb", true, true},
	}
	for _, tt := range tests {
		t.Run("console="+tt.console, func(t *testing.T) {
			p := images.Builtin()[0]
			p.Console = tt.console
			argv, err := Args(goldenOptions(p))
			if err != nil {
				t.Fatal(err)
			}
			joined := strings.Join(argv, " ")
			if got := strings.Contains(joined, " -vga std "); got != tt.vgaCard {
				t.Errorf("-vga std in argv = %v, want %v: %s", got, tt.vgaCard, joined)
			}
			cmdline := Cmdline(p)
			if got := strings.Contains(cmdline, " vga="+images.FBMode); got != tt.vgaMode {
				t.Errorf("vga=%s in cmdline = %v, want %v: %s", images.FBMode, got, tt.vgaMode, cmdline)
			}
			for _, want := range []string{"lab.profile=" + p.Name, "lab.console=" + p.ConsoleKind()} {
				if !strings.Contains(cmdline, want) {
					t.Errorf("cmdline %q lacks %s", cmdline, want)
				}
			}
			if !slices.Contains(argv, "none") || !strings.Contains(joined, "-display none") {
				t.Errorf("argv has no -display none: a guest never opens a window: %s", joined)
			}
		})
	}
}

// TestArgsLink: the kernel's link decides the device that carries the
// link's chardev and what lab.link= tells the agent; an unknown kind is
// refused, naming the ones there are.
func TestArgsLink(t *testing.T) {
	p, err := images.Lookup("", "xeon5130-1core-linux-2.6.32")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		link       string
		device     string
		cmdlineArg string
	}{
		{"", "virtserialport,chardev=link,name=" + link.PortName, ""},
		{images.LinkPort, "virtserialport,chardev=link,name=" + link.PortName, ""},
		{images.LinkHVC, "virtconsole,chardev=link", " lab.link=hvc0"},
		{images.LinkUART, "chardev:link", " lab.link=ttyS1"},
	} {
		argv, err := Args(Options{Profile: p, Kernel: "k", Initrd: "i", StateDir: "/s", Accel: "tcg", Link: tt.link})
		if err != nil {
			t.Fatalf("link %q: %v", tt.link, err)
		}
		joined := strings.Join(argv, " ")
		if !strings.Contains(joined, " "+tt.device+" ") {
			t.Errorf("link %q: argv lacks %q: %s", tt.link, tt.device, joined)
		}
		cmdline := argv[slices.Index(argv, "-append")+1]
		if tt.cmdlineArg != "" && !strings.HasSuffix(cmdline, tt.cmdlineArg) || tt.cmdlineArg == "" && strings.Contains(cmdline, "lab.link=") {
			t.Errorf("link %q: cmdline %q, want it to end in %q", tt.link, cmdline, tt.cmdlineArg)
		}
	}
	if _, err := Args(Options{Profile: p, Kernel: "k", Initrd: "i", StateDir: "/s", Accel: "tcg", Link: "usb"}); err == nil || !strings.Contains(err.Error(), `link "usb"`) || !strings.Contains(err.Error(), images.LinkHVC) {
		t.Errorf("link usb: err = %v, want it refused naming the links", err)
	}
}
