package images

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBuiltinProfilesValid(t *testing.T) {
	want := []string{"celeron-2.4", "celeron-2.4-era", "celeron-2.4-linux-2.6.32", "modern-x86_64", "p3-450", "p4-2.4", "p4-2.4-era", "p4-2.4-linux-2.6.32", "rockhopper-2.4", "rockhopper-2.4-linux-2.6.32", "split-1g3g", "split-2g2g", "split-3g1g", "split-3g1g-linux-2.6.32", "xeon5130-1core", "xeon5130-1core-era", "xeon5130-1core-linux-2.6.32", "xeon5130-2core", "xeon5130-2core-linux-2.6.32", "xeon5130-fb", "xeon5130-vga"}
	// The console each built-in has: E3's profiles draw their VTs on a
	// framebuffer and in VGA text mode (its console strata), the others
	// keep the serial port only (a VGA card would cost them boot time and
	// change nothing they measure).
	consoles := map[string]string{"xeon5130-fb": "fb", "xeon5130-vga": "vga"}
	got := Builtin()
	if len(got) != len(want) {
		t.Fatalf("Builtin() has %d profiles, want %d", len(got), len(want))
	}
	for i, p := range got {
		if p.Name != want[i] {
			t.Errorf("Builtin()[%d].Name = %q, want %q", i, p.Name, want[i])
		}
		if err := p.Validate(); err != nil {
			t.Errorf("built-in %s: %v", p.Name, err)
		}
		if p.Summary == "" || len(p.Experiments) == 0 || p.Original.Kernel == "" || len(p.Original.Differences) == 0 {
			t.Errorf("built-in %s: summary, experiments, original.kernel and original.differences must be filled in", p.Name)
		}
		wantConsole := consoles[p.Name]
		if wantConsole == "" {
			wantConsole = "serial"
		}
		if p.Console != wantConsole || p.Clock != "host" {
			t.Errorf("built-in %s: console %q clock %q, want %s host", p.Name, p.Console, p.Clock, wantConsole)
		}
		if p.Arch == "i386" && !hasString(p.CPU.Drop, "hypervisor") {
			t.Errorf("built-in %s: historical CPUs had no hypervisor flag; drop it", p.Name)
		}
	}
}

func TestBuiltinProfileDetails(t *testing.T) {
	c, err := LoadCatalog("")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name           string
		model, modelID string
		family, model2 int
		present        int
		online         int
		memory         int
		kernel         string
	}{
		{"celeron-2.4", "qemu32", "Intel(R) Celeron(R) CPU 2.00GHz", 15, 2, 1, 1, 256, "debian-6.1-686"},
		{"xeon5130-1core", "core2duo", "Intel(R) Xeon(R) CPU            5130  @ 2.00GHz", 6, 15, 2, 1, 512, "debian-6.1-686"},
		{"xeon5130-2core", "core2duo", "Intel(R) Xeon(R) CPU            5130  @ 2.00GHz", 6, 15, 2, 2, 512, "debian-6.1-686"},
		{"xeon5130-fb", "core2duo", "Intel(R) Xeon(R) CPU            5130  @ 2.00GHz", 6, 15, 2, 1, 512, "debian-6.1-686"},
		{"xeon5130-vga", "core2duo", "Intel(R) Xeon(R) CPU            5130  @ 2.00GHz", 6, 15, 2, 1, 512, "debian-6.1-686"},
		{"split-3g1g", "pentium3", "", 0, 0, 1, 1, 1024, "debian-6.1-686"},
		{"p4-2.4", "qemu32", "Intel(R) Pentium(R) 4 CPU 2.60GHz", 15, 2, 1, 1, 512, "debian-6.1-686"},
		{"p3-450", "pentium3", "", 6, 7, 1, 1, 256, "debian-6.1-686"},
		{"rockhopper-2.4", "pentium3", "Intel(R) Pentium(R) III CPU family      733MHz", 6, 8, 2, 2, 1331, "debian-6.1-686"},
		{"modern-x86_64", "max", "", 0, 0, 2, 2, 1024, "debian-6.1-amd64"},
	}
	for _, tt := range tests {
		p, err := c.Lookup(tt.name)
		if err != nil {
			t.Errorf("Lookup(%q): %v", tt.name, err)
			continue
		}
		got := []any{p.CPU.Model, p.CPU.ModelID, p.CPU.Family, p.CPU.ModelNumber, p.Topology.Present(), p.Topology.OnlineCPUs(), p.MemoryMB, p.Kernel, p.Guest.StackKB}
		want := []any{tt.model, tt.modelID, tt.family, tt.model2, tt.present, tt.online, tt.memory, tt.kernel, 8192}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: field %d = %v, want %v", tt.name, i, got[i], want[i])
			}
		}
		if c.Source(tt.name) != BuiltinSource {
			t.Errorf("Source(%q) = %q, want %q", tt.name, c.Source(tt.name), BuiltinSource)
		}
	}
}

// validProfile is a minimal profile that passes Validate.
func validProfile() Profile {
	return Profile{
		Name: "test-box", Arch: "i386", Machine: "pc",
		CPU:      CPU{Model: "qemu32"},
		Topology: Topology{Sockets: 1, Cores: 2, Threads: 1},
		MemoryMB: 256, Kernel: "debian-6.1-686",
	}
}

func TestValidateRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Profile)
		want   []string // substrings of the error
	}{
		{"bad name", func(p *Profile) { p.Name = "Celeron" }, []string{"name:", "Celeron"}},
		{"empty name", func(p *Profile) { p.Name = "" }, []string{"name:"}},
		{"experiment", func(p *Profile) { p.Experiments = []string{"E9"} }, []string{"experiments:", "E1, E2"}},
		{"arch", func(p *Profile) { p.Arch = "arm64" }, []string{"arch:", `"arm64"`, "i386, x86_64"}},
		{"machine", func(p *Profile) { p.Machine = "microvm" }, []string{"machine:", "pc, q35"}},
		{"cpu model", func(p *Profile) { p.CPU.Model = "" }, []string{"cpu.model:"}},
		{"model_id length", func(p *Profile) { p.CPU.ModelID = strings.Repeat("x", 49) }, []string{"cpu.model_id:", "48"}},
		{"model_id escaped comma", func(p *Profile) { p.CPU.ModelID = "a,,b" }, []string{"cpu.model_id:", "comma once"}},
		{"vendor", func(p *Profile) { p.CPU.Vendor = "Intel" }, []string{"cpu.vendor:", "12 characters"}},
		{"family", func(p *Profile) { p.CPU.Family = -1 }, []string{"cpu.family:"}},
		{"model number", func(p *Profile) { p.CPU.ModelNumber = 256 }, []string{"cpu.model_number:"}},
		{"stepping", func(p *Profile) { p.CPU.Stepping = 16 }, []string{"cpu.stepping:"}},
		{"flag", func(p *Profile) { p.CPU.Drop = []string{"-pni"} }, []string{"cpu.drop:"}},
		{"add and drop", func(p *Profile) { p.CPU.Drop = []string{"pni"}; p.CPU.Add = []string{"pni"} }, []string{"cpu.add:"}},
		{"sockets", func(p *Profile) { p.Topology.Sockets = 0 }, []string{"topology.sockets:", "at least 1"}},
		{"cores", func(p *Profile) { p.Topology.Cores = -1 }, []string{"topology.cores:"}},
		{"threads", func(p *Profile) { p.Topology.Threads = 0 }, []string{"topology.threads:"}},
		{"online above present", func(p *Profile) { p.Topology.Online = 3 }, []string{"topology.online:", "0..2"}},
		{"memory low", func(p *Profile) { p.MemoryMB = 8 }, []string{"memory_mb:", "16..3072"}},
		{"memory i386 high", func(p *Profile) { p.MemoryMB = 4096 }, []string{"memory_mb:", "16..3072", "i386"}},
		{"memory x86_64 high", func(p *Profile) {
			p.Arch, p.Kernel, p.MemoryMB = "x86_64", "debian-6.1-amd64", 32768
		}, []string{"memory_mb:", "16..16384"}},
		{"kernel empty", func(p *Profile) { p.Kernel = "" }, []string{"kernel:", "debian-6.1-686"}},
		{"kernel arch", func(p *Profile) { p.Kernel = "debian-6.1-amd64" }, []string{"kernel:", "x86_64 kernel but arch is i386"}},
		{"cmdline", func(p *Profile) { p.Cmdline = "a\nb" }, []string{"cmdline:"}},
		{"stack", func(p *Profile) { p.Guest.StackKB = -1 }, []string{"guest.stack_kb:"}},
		{"offline cpu0", func(p *Profile) { p.Guest.OfflineCPUs = []int{0} }, []string{"guest.offline_cpus:", "cpu 0"}},
		{"offline out of range", func(p *Profile) { p.Guest.OfflineCPUs = []int{2} }, []string{"guest.offline_cpus:", "cpu 2 out of range"}},
		{"offline not online", func(p *Profile) { p.Topology.Online = 1; p.Guest.OfflineCPUs = []int{1} }, []string{"guest.offline_cpus:"}},
		{"offline twice", func(p *Profile) { p.Topology.Cores = 4; p.Guest.OfflineCPUs = []int{1, 1} }, []string{"guest.offline_cpus:", "twice"}},
		{"sysctl", func(p *Profile) { p.Guest.Sysctls = map[string]string{"../etc/passwd": "x"} }, []string{"guest.sysctls:"}},
		{"console", func(p *Profile) { p.Console = "tty" }, []string{"console:", "serial, vga, fb"}},
		{"clock", func(p *Profile) { p.Clock = "realtime" }, []string{"clock:", "host, icount"}},
		{"clock shift", func(p *Profile) { p.Clock = "icount:11" }, []string{"clock:", "0 <= N <= 10"}},
		{"icount smp", func(p *Profile) { p.Clock = "icount:2" }, []string{"clock:", "exactly one online CPU", "SMP bring-up"}},
		{"calibration zero", func(p *Profile) { p.Calibration = &Calibration{InstrPerNsHi: 1, Basis: "b", Confidence: "low"} },
			[]string{"calibration.instr_per_ns_lo:", "0 < instr_per_ns_lo <= instr_per_ns_hi"}},
		{"calibration upside down", func(p *Profile) {
			p.Calibration = &Calibration{InstrPerNsLo: 1.2, InstrPerNsHi: 0.5, Basis: "b", Confidence: "low"}
		}, []string{"calibration.instr_per_ns_lo:", "1.2..0.5"}},
		{"calibration no basis", func(p *Profile) {
			p.Calibration = &Calibration{InstrPerNsLo: 0.5, InstrPerNsHi: 1.2, Basis: " ", Confidence: "low"}
		},
			[]string{"calibration.basis:", "where the interval comes from"}},
		{"calibration confidence", func(p *Profile) {
			p.Calibration = &Calibration{InstrPerNsLo: 0.5, InstrPerNsHi: 1.2, Basis: "b", Confidence: "certain"}
		}, []string{"calibration.confidence:", `"certain" is not one of low, medium, high`}},
		{"calibration no confidence", func(p *Profile) { p.Calibration = &Calibration{InstrPerNsLo: 0.5, InstrPerNsHi: 1.2, Basis: "b"} },
			[]string{"calibration.confidence:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validProfile()
			tt.mutate(&p)
			err := p.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want an error containing %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Profile)
	}{
		{"minimal", func(p *Profile) {}},
		{"comma in model_id", func(p *Profile) { p.CPU.ModelID = "Intel(R) Pentium(R) III, 733MHz" }},
		{"icount one online", func(p *Profile) { p.Clock = "icount:3"; p.Topology.Online = 1 }},
		{"icount one present", func(p *Profile) { p.Clock = "icount"; p.Topology.Cores = 1 }},
		{"offline cpu1", func(p *Profile) { p.Guest.OfflineCPUs = []int{1} }},
		{"vga q35", func(p *Profile) { p.Console = "vga"; p.Machine = "q35" }},
		{"fb", func(p *Profile) { p.Console = "fb" }},
		{"imported kernel", func(p *Profile) { p.Kernel = "my-2.6.32" }},
		{"i386 max memory", func(p *Profile) { p.MemoryMB = 3072 }},
		{"calibration", func(p *Profile) {
			p.Calibration = &Calibration{InstrPerNsLo: 0.5, InstrPerNsHi: 0.5, Basis: "b", Confidence: "high"}
		}},
	}
	for _, tt := range tests {
		p := validProfile()
		tt.mutate(&p)
		if err := p.Validate(); err != nil {
			t.Errorf("%s: Validate() = %v, want nil", tt.name, err)
		}
	}
}

func TestParseClock(t *testing.T) {
	tests := []struct {
		in      string
		want    Clock
		wantErr bool
	}{
		{"", Clock{Mode: ClockHost}, false},
		{"host", Clock{Mode: ClockHost}, false},
		{"icount", Clock{Mode: ClockICount}, false},
		{"icount:0", Clock{Mode: ClockICount}, false},
		{"icount:10", Clock{Mode: ClockICount, Shift: 10}, false},
		{"icount:-1", Clock{}, true},
		{"icount:x", Clock{}, true},
		{"icount:", Clock{}, true},
		{"wall", Clock{}, true},
	}
	for _, tt := range tests {
		got, err := ParseClock(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseClock(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestLoadFile(t *testing.T) {
	tests := []struct {
		file    string
		want    string   // profile name on success
		wantErr []string // substrings of the error otherwise
	}{
		{"good.yaml", "my-box", nil},
		{"good.json", "my-json-box", nil},
		{"unknown-field.yaml", "", []string{"unknown-field.yaml", "line 8", `unknown field "memroy_mb"`}},
		{"unknown-field.json", "", []string{"unknown-field.json", `unknown field "famly"`}},
		{"bad-values.yaml", "", []string{"bad-values.yaml", "name:", "arch:", `"sparc"`, "memory_mb:", "clock:"}},
		{"missing.yaml", "", []string{"missing.yaml", "no such file"}},
	}
	for _, tt := range tests {
		p, err := LoadFile(filepath.Join("testdata", tt.file))
		if tt.wantErr == nil {
			if err != nil || p.Name != tt.want {
				t.Errorf("LoadFile(%s) = %q, %v; want %q, nil", tt.file, p.Name, err, tt.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("LoadFile(%s) = nil error, want one containing %q", tt.file, tt.wantErr)
			continue
		}
		for _, w := range tt.wantErr {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("LoadFile(%s) = %q, want it to contain %q", tt.file, err, w)
			}
		}
	}
}

func TestLoadFileRejectsTwoDocuments(t *testing.T) {
	data, err := os.ReadFile("testdata/good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "two.yaml")
	writeTestFile(t, p, string(data)+"---\n"+string(data))
	if _, err := LoadFile(p); err == nil || !strings.Contains(err.Error(), "more than one YAML document") {
		t.Errorf("LoadFile(two documents) = %v, want a 'more than one YAML document' error", err)
	}
}

func TestLookupSuggests(t *testing.T) {
	c, err := LoadCatalog("")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, want string
	}{
		{"celeron2.4", `unknown profile "celeron2.4"; did you mean "celeron-2.4"? known: celeron-2.4, celeron-2.4-era, celeron-2.4-linux-2.6.32, modern-x86_64, p3-450, p4-2.4, p4-2.4-era, p4-2.4-linux-2.6.32, rockhopper-2.4, rockhopper-2.4-linux-2.6.32, split-1g3g, split-2g2g, split-3g1g, split-3g1g-linux-2.6.32, xeon5130-1core, xeon5130-1core-era, xeon5130-1core-linux-2.6.32, xeon5130-2core, xeon5130-2core-linux-2.6.32, xeon5130-fb, xeon5130-vga`},
		{"xeon5130-1", `did you mean "xeon5130-1core"?`},
		{"p4-2", `did you mean "p4-2.4"?`},
		{"modern-x86-64", `did you mean "modern-x86_64"?`},
		{"Rockhopper-2.4", `did you mean "rockhopper-2.4"?`},
		{"vax", `unknown profile "vax"; known: celeron-2.4,`},
	}
	for _, tt := range tests {
		_, err := c.Lookup(tt.name)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Lookup(%q) = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestCatalogUserProfiles(t *testing.T) {
	t.Parallel()
	good, err := os.ReadFile("testdata/good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("user dir and explicit file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeTestFile(t, filepath.Join(dir, "mine.yaml"), string(good))
		writeTestFile(t, filepath.Join(dir, "notes.txt"), "not a profile")
		c, err := LoadCatalog(dir, "testdata/good.json")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Lookup("my-box"); err != nil {
			t.Errorf("Lookup(my-box) from the user dir: %v", err)
		}
		if _, err := c.Lookup("my-json-box"); err != nil {
			t.Errorf("Lookup(my-json-box) from an explicit file: %v", err)
		}
		if got, want := c.Source("my-box"), filepath.Join(dir, "mine.yaml"); got != want {
			t.Errorf("Source(my-box) = %q, want %q", got, want)
		}
		if got, want := len(c.Names()), len(Builtin())+2; got != want {
			t.Errorf("len(Names()) = %d, want %d", got, want)
		}
	})
	t.Run("Lookup in the user dir", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "lab", "profiles")
		writeTestFile(t, filepath.Join(dir, "mine.yml"), string(good))
		if _, err := Lookup(dir, "my-box"); err != nil {
			t.Errorf("Lookup(my-box): %v", err)
		}
	})
	t.Run("missing dir is fine", func(t *testing.T) {
		t.Parallel()
		if _, err := LoadCatalog(filepath.Join(t.TempDir(), "nope")); err != nil {
			t.Errorf("LoadCatalog(missing dir) = %v, want nil", err)
		}
	})
	t.Run("shadowing a built-in", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		shadow := strings.Replace(string(good), "name: my-box", "name: celeron-2.4", 1)
		writeTestFile(t, filepath.Join(dir, "celeron.yaml"), shadow)
		_, err := LoadCatalog(dir)
		for _, w := range []string{`"celeron-2.4"`, filepath.Join(dir, "celeron.yaml"), "built-in"} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("LoadCatalog(shadowing) = %v, want an error containing %q", err, w)
			}
		}
	})
	t.Run("two user files with one name", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		writeTestFile(t, filepath.Join(dir, "a.yaml"), string(good))
		other := filepath.Join(t.TempDir(), "b.yaml")
		writeTestFile(t, other, string(good))
		_, err := LoadCatalog(dir, other)
		for _, w := range []string{filepath.Join(dir, "a.yaml"), other} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("LoadCatalog(duplicate) = %v, want an error containing %q", err, w)
			}
		}
	})
	t.Run("same file twice", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		p := filepath.Join(dir, "a.yaml")
		writeTestFile(t, p, string(good))
		if _, err := LoadCatalog(dir, p); err != nil {
			t.Errorf("LoadCatalog(dir, file in dir) = %v, want nil", err)
		}
	})
	t.Run("broken user file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		data, _ := os.ReadFile("testdata/unknown-field.yaml")
		writeTestFile(t, filepath.Join(dir, "broken.yaml"), string(data))
		_, err := LoadCatalog(dir)
		if err == nil || !strings.Contains(err.Error(), "broken.yaml") {
			t.Errorf("LoadCatalog(broken file) = %v, want an error naming broken.yaml", err)
		}
	})
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"celeron2.4", "celeron-2.4", 1},
		{"kitten", "sitting", 3}, {"p4-2.4", "p4-2.4", 0},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestConsoleKinds pins what each console kind gives a guest.
func TestConsoleKinds(t *testing.T) {
	tests := []struct {
		console, kind string
		vts           bool
	}{
		{"", "serial", false},
		{"serial", "serial", false},
		{"vga", "vga", true},
		{"fb", "fb", true},
	}
	for _, tt := range tests {
		p := Profile{Console: tt.console}
		if got := p.ConsoleKind(); got != tt.kind {
			t.Errorf("Console %q: ConsoleKind() = %q, want %q", tt.console, got, tt.kind)
		}
		if got := HasVTs(p.ConsoleKind()); got != tt.vts {
			t.Errorf("HasVTs(%q) = %v, want %v", p.ConsoleKind(), got, tt.vts)
		}
	}
}

// TestCheckVariant: the built-in era profiles are variants of their
// machines; a variant must name an existing, non-variant profile with the
// same machine and another kernel, and LoadCatalog rejects one that does
// not, naming its file.
func TestCheckVariant(t *testing.T) {
	all := map[string]Profile{}
	for _, p := range Builtin() {
		all[p.Name] = p
	}
	for _, n := range []string{"celeron-2.4-era", "p4-2.4-era", "xeon5130-1core-era"} {
		if p := all[n]; p.VariantOf == "" {
			t.Errorf("%s: no variant_of", n)
		}
	}
	for _, p := range all {
		if err := CheckVariant(p, all); err != nil {
			t.Errorf("built-in: %v", err)
		}
	}
	base := all["celeron-2.4"]
	good := base
	good.Name, good.Kernel, good.VariantOf, good.Summary = "mine", "era-2.4-i386", "celeron-2.4", "mine"
	good.Calibration = nil // inherited
	if err := CheckVariant(good, all); err != nil {
		t.Fatalf("a variant differing in its kernel: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(p *Profile)
		want string
	}{
		{"unknown", func(p *Profile) { p.VariantOf = "celeron" }, `no profile "celeron"`},
		{"variant of a variant", func(p *Profile) { p.VariantOf = "celeron-2.4-era" }, "is itself a variant of celeron-2.4; name celeron-2.4"},
		{"same kernel", func(p *Profile) { p.Kernel = base.Kernel }, "boots the same kernel"},
		{"memory", func(p *Profile) { p.MemoryMB = 512 }, "is another machine"},
		{"cpu", func(p *Profile) { p.CPU.Model = "pentium3" }, "is another machine"},
		{"guest", func(p *Profile) { p.Guest.StackKB = 1024 }, "is another machine"},
		{"own calibration", func(p *Profile) { p.Calibration = base.Calibration }, "calibration: a variant inherits celeron-2.4's (the same machine); remove its own"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := good
			p.CPU.Drop = slices.Clone(good.CPU.Drop)
			c.edit(&p)
			err := CheckVariant(p, all)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("CheckVariant = %v, want %q", err, c.want)
			}
		})
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "bad.yaml")
	data := strings.Replace(builtinYAML(t, "celeron-2.4-era"), "name: celeron-2.4-era", "name: bad", 1)
	data = strings.Replace(data, "memory_mb: 256", "memory_mb: 128", 1)
	if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCatalog("", f); err == nil || !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "celeron-2.4 is another machine") {
		t.Errorf("LoadCatalog of a variant with another memory size: %v", err)
	}
}

func builtinYAML(t *testing.T, name string) string {
	t.Helper()
	data, err := builtinFS.ReadFile("profiles/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestCalibrations: the built-in profiles that stand for a machine carry
// docs/proposals/verdicts.md section 4's interval of instructions per ns,
// with its basis, at low confidence; their era variants inherit it
// through the catalog; the others have none.
func TestCalibrations(t *testing.T) {
	c, err := LoadCatalog("")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{
		"celeron-2.4": {0.5, 1.2}, "celeron-2.4-era": {0.5, 1.2},
		"p4-2.4": {0.65, 1.56}, "p4-2.4-era": {0.65, 1.56},
		"p3-450":         {0.13, 0.41},
		"rockhopper-2.4": {0.25, 0.73},
		"xeon5130-1core": {1.0, 3.0}, "xeon5130-1core-era": {1.0, 3.0}, "xeon5130-2core": {1.0, 3.0},
		// The 2.6.32 variants inherit their machines' too.
		"celeron-2.4-linux-2.6.32": {0.5, 1.2}, "p4-2.4-linux-2.6.32": {0.65, 1.56}, "rockhopper-2.4-linux-2.6.32": {0.25, 0.73},
		"xeon5130-1core-linux-2.6.32": {1.0, 3.0}, "xeon5130-2core-linux-2.6.32": {1.0, 3.0},
	}
	for _, p := range c.Profiles() {
		k := p.Calibration
		w, ok := want[p.Name]
		switch {
		case !ok && k != nil:
			t.Errorf("%s: calibration %+v; it stands for no machine whose times are held against published ones", p.Name, k)
		case ok && k == nil:
			t.Errorf("%s: no calibration, want %v instructions per ns", p.Name, w)
		case ok && (k.InstrPerNsLo != w[0] || k.InstrPerNsHi != w[1] || k.Confidence != "low" || !strings.Contains(k.Basis, " x an IPC of ")):
			t.Errorf("%s: calibration %+v; want %v at low confidence, its basis clock x IPC", p.Name, k, w)
		}
	}
	// As written, a variant has none of its own.
	for _, p := range Builtin() {
		if p.VariantOf != "" && p.Calibration != nil {
			t.Errorf("%s: its file sets a calibration; a variant inherits %s's", p.Name, p.VariantOf)
		}
	}
	// A user's variant file with its own calibration is refused, naming the file.
	dir := t.TempDir()
	f := filepath.Join(dir, "mine.yaml")
	data := strings.Replace(builtinYAML(t, "celeron-2.4-era"), "name: celeron-2.4-era", "name: mine", 1)
	data += "calibration: {instr_per_ns_lo: 1, instr_per_ns_hi: 2, basis: mine, confidence: low}\n"
	if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCatalog("", f); err == nil || !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "a variant inherits celeron-2.4's") {
		t.Errorf("LoadCatalog of a variant with its own calibration: %v", err)
	}
}
