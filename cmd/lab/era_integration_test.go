package main

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"lab/images"
	"lab/internal/labtest"
	"lab/vm"
)

// eraProbeScript prints, from inside the guest, what says which kernel
// configuration runs: the sha256 of /proc/config.gz's text, the release,
// whether the kernel has modules at all, and the tick rate (local APIC
// timer interrupts, or IRQ 0's where there is no APIC timer, counted over
// two seconds: the era kernels tick periodically, idle or not).
const eraProbeScript = `
echo "config_sha256 $(zcat /proc/config.gz | sha256sum | cut -d' ' -f1)"
echo "release $(uname -r)"
if [ -e /proc/modules ]; then echo "modules yes"; else echo "modules no"; fi
ticks() { awk '$1 == "LOC:" { loc = $2 } $1 == "0:" { irq0 = $2 } END { print loc + irq0 }' /proc/interrupts; }
a=$(ticks); t0=$(cut -d' ' -f1 /proc/uptime)
sleep 2
b=$(ticks); t1=$(cut -d' ' -f1 /proc/uptime)
echo "tick_hz $(awk -v a=$a -v b=$b -v t0=$t0 -v t1=$t1 'BEGIN { printf "%.0f", (b - a) / (t1 - t0) }')"
echo "split_mb $(/init addrspace | awk '$1 == "address_space_mb" { print $2 }')"
echo "boot_protocol $(cat /sys/kernel/boot_params/version)"
`

// pvhBootProtocol is the boot protocol version a kernel entered through
// its PVH entry reports (arch/x86/platform/pvh/enlighten.c fills in
// boot_params itself, as version 2.12); entered as a bzImage it reports
// its own header's (2.15 for 6.1).
const pvhBootProtocol = "0x020c"

// eraProfiles are the built-in profiles on 6.1 kernels lab builds (the
// 2.6.32 ones have TestIntegrationLinux2632).
func eraProfiles() []images.Profile {
	var ps []images.Profile
	for _, p := range images.Builtin() {
		if r, ok := images.Recipes[p.Kernel]; ok && r.Upstream == "" {
			ps = append(ps, p)
		}
	}
	return ps
}

// TestIntegrationEraProfiles boots each era profile cold and then restored
// from its booted snapshot, and checks from inside the guest that the
// kernel running is the one lab built for it: /proc/config.gz is exactly
// the recorded .config, the tick rate is the configured HZ, no modules,
// entered through its PVH entry. The first also boots --bzimage, which
// enters the same kernel through the Linux boot protocol.
func TestIntegrationEraProfiles(t *testing.T) {
	ps := eraProfiles()
	if len(ps) == 0 {
		t.Fatal("no built-in profile names an era kernel")
	}
	labtest.RequireBoot(t, ps...)
	list := itMust(t, itCallTimeout, nil, "image", "list").stdout
	for _, p := range ps {
		found := false
		for _, line := range strings.Split(list, "\n") {
			if f := strings.Fields(line); len(f) > 6 && f[0] == p.Kernel {
				found = f[6] == images.EntryPVH
			}
		}
		if !found {
			t.Errorf("lab image list: no row for %s booting pvh:\n%s", p.Kernel, list)
		}
	}
	for i, p := range ps {
		t.Run(p.Name, func(t *testing.T) {
			itBootEnv(t, p)
			k, err := envCache(t).LoadKernel(p.Kernel)
			if err != nil {
				t.Fatal(err)
			}
			b, err := envCache(t).LoadBuild(k)
			if err != nil {
				t.Fatalf("kernel %s: %v", k.ID, err)
			}
			cfg, err := os.ReadFile(envCache(t).BlobPath(b.Config))
			if err != nil {
				t.Fatal(err)
			}
			parsed := images.ParseConfig(cfg)
			wantHZ, err := strconv.Atoi(images.ConfigValue(parsed, "CONFIG_HZ"))
			if err != nil {
				t.Fatalf("kernel %s: CONFIG_HZ: %v", k.ID, err)
			}
			// Only a periodic tick comes at HZ when the guest is idle.
			periodic := images.ConfigValue(parsed, "CONFIG_HZ_PERIODIC") == "y"
			check := func(how string, st *vm.State, entry string) {
				t.Helper()
				wantSHA, wantProto := k.PVH, pvhBootProtocol
				if entry == images.EntryBzImage {
					wantSHA = k.Vmlinuz
				}
				if st.KernelEntry != entry || st.KernelSHA256 != wantSHA {
					t.Errorf("%s: booted %.12s entered as %q, want %.12s as %q", how, st.KernelSHA256, st.KernelEntry, wantSHA, entry)
				}
				r := itMust(t, itCallTimeout, nil, "exec", "era", "--", "sh", "-c", eraProbeScript)
				g := itParseProbe(r.stdout)
				t.Logf("%s (%s): release %s, tick %s Hz (CONFIG_HZ=%d), modules %s, address space %s MB, boot protocol %s, /proc/config.gz sha256 %.12s (recorded %.12s); %s",
					p.Name, how, g["release"], g["tick_hz"], wantHZ, g["modules"], g["split_mb"], g["boot_protocol"], g["config_sha256"], b.Config, b.NotableString())
				if proto := g["boot_protocol"]; (entry == images.EntryPVH) != (proto == wantProto) {
					t.Errorf("%s: boot protocol %q in the guest; entered through %s it should be %s", how, proto, entry, map[bool]string{true: wantProto, false: "the bzImage's own, not " + wantProto}[entry == images.EntryPVH])
				}
				if g["config_sha256"] != b.Config {
					t.Errorf("%s: /proc/config.gz hashes to %q, the recorded .config to %s", how, g["config_sha256"], b.Config)
				}
				if g["release"] != k.Release {
					t.Errorf("%s: uname -r %q, kernel %s is %s", how, g["release"], k.ID, k.Release)
				}
				if g["modules"] != "no" {
					t.Errorf("%s: the guest has /proc/modules; an era kernel is built without modules", how)
				}
				hz, err := strconv.Atoi(g["tick_hz"])
				if err != nil {
					t.Fatalf("%s: tick rate %q: %v\n%s", how, g["tick_hz"], err, r.stdout)
				}
				// The rate tells the CONFIG_HZ choices apart: it is
				// nearer (as a ratio) to the kernel's than to any other
				// choice. A TCG guest on a loaded host takes fewer ticks
				// than it is set for (56 a second for HZ=100, the host
				// busy with a compiler loop and another lab's tests); a
				// quarter of HZ is the floor a periodic tick keeps.
				if periodic && (nearestHZ(hz) != wantHZ || hz < wantHZ/4) {
					t.Errorf("%s: %d timer interrupts a second, want about %d (the nearest of %v, and at least %d)", how, hz, wantHZ, configHZ, wantHZ/4)
				}
			}
			if k.PVH == "" {
				t.Fatalf("kernel %s has no PVH vmlinux; base.config asks for CONFIG_PVH", k.ID)
			}
			st := itUp(t, p.Name, "era", "--cold")
			if st.Boot != "cold" {
				t.Errorf("--cold: boot %q, want cold", st.Boot)
			}
			check("cold", st, images.EntryPVH)
			itMust(t, itCallTimeout, nil, "down", "era")
			if i == 0 {
				st = itUp(t, p.Name, "era", "--cold", "--bzimage")
				check("cold --bzimage", st, images.EntryBzImage)
				itMust(t, itCallTimeout, nil, "down", "era")
			}
			// The first plain boot makes the snapshot if there is none; the
			// second restores it.
			itUp(t, p.Name, "era")
			itMust(t, itCallTimeout, nil, "down", "era")
			st = itUp(t, p.Name, "era")
			if st.Boot != "restored from snapshot" {
				t.Errorf("boot %q, want restored from snapshot", st.Boot)
			}
			check("restored", st, images.EntryPVH)
			itMust(t, itCallTimeout, nil, "down", "era")
			itNoneLeft(t, getenvFor(t)("LAB_STATE_DIR"), "era")
		})
	}
}

// TestEraProfilesShowKernel: `lab profiles` names each profile's kernel,
// the era kernels included.
func TestEraProfilesShowKernel(t *testing.T) {
	r := itMust(t, itCallTimeout, nil, "profiles")
	for _, p := range images.Builtin() {
		found := false
		for _, line := range strings.Split(r.stdout, "\n") {
			f := strings.Fields(line)
			if len(f) > 0 && f[0] == p.Name {
				found = strings.Contains(line, " "+p.Kernel+" ")
			}
		}
		if !found {
			t.Errorf("lab profiles: no line for %s naming kernel %s:\n%s", p.Name, p.Kernel, r.stdout)
		}
	}
}

// TestIntegrationSplitThreadLimit: the thread limit of 8 MB stacks
// follows the user address space: split-3g1g (Debian's kernel, 3G/1G),
// split-2g2g and split-1g3g (era kernels built with 2G/2G and 1G/3G) each
// stop a few threads short of their user space / 8 MB.
func TestIntegrationSplitThreadLimit(t *testing.T) {
	tests := []struct {
		profile string
		userMB  int
	}{
		{"split-1g3g", 1024},
		{"split-2g2g", 2048},
		{"split-3g1g", 3072},
	}
	var ps []images.Profile
	for _, tt := range tests {
		ps = append(ps, itProfile(t, tt.profile))
	}
	itBootEnv(t, ps...)
	prev := 0.0
	for _, tt := range tests {
		itUp(t, tt.profile, "split")
		// One repeat, as this test was written for: without --repeat,
		// lab run makes what E1.3a needs on split-3g1g.
		res, _ := itRunJSON(t, 0, "threadbench", "--vm", "split", "-e", "limit", "--repeat", "1")
		got := itSeries(res, "max_threads", map[string]string{"stack_kb": "8192"})
		itMust(t, itCallTimeout, nil, "down", "split")
		// A result on a kernel lab built carries its .config's hash and
		// notable options.
		if k, err := envCache(t).LoadKernel(itProfile(t, tt.profile).Kernel); err == nil && k.Config != "" {
			if res.Machine.KernelConfig != k.Config || res.Machine.KernelNotable["split"] == "" {
				t.Errorf("%s: result records kernel config %q notable %v, want %s with the split", tt.profile, res.Machine.KernelConfig, res.Machine.KernelNotable, k.Config)
			}
		}
		if len(got) != 1 {
			t.Fatalf("%s: max_threads at stack_kb=8192: %v, want 1 sample (outcome %+v)", tt.profile, got, res.Outcome)
		}
		// The program, its libraries, the main stack and the guard pages
		// take a few stacks' worth; 10% of the limit is plenty.
		limit := float64(tt.userMB / 8)
		t.Logf("%s: %v threads of 8 MB stacks (user space %d MB / 8 MB = %.0f)", tt.profile, got[0], tt.userMB, limit)
		if got[0] > limit || got[0] < limit*0.9 {
			t.Errorf("%s: max_threads = %v, want %.0f..%.0f", tt.profile, got[0], limit*0.9, limit)
		}
		if got[0] <= prev {
			t.Errorf("%s: max_threads = %v, not more than the smaller split's %v", tt.profile, got[0], prev)
		}
		prev = got[0]
	}
}

// configHZ are the timer frequencies Linux's Kconfig offers.
var configHZ = []int{100, 250, 300, 1000}

// nearestHZ is the choice of configHZ nearest to a measured rate, as a
// ratio.
func nearestHZ(rate int) int {
	best, bestd := 0, math.Inf(1)
	for _, hz := range configHZ {
		if d := math.Abs(math.Log(float64(rate) / float64(hz))); d < bestd {
			best, bestd = hz, d
		}
	}
	return best
}

func TestNearestHZ(t *testing.T) {
	for rate, want := range map[int]int{56: 100, 100: 100, 150: 100, 170: 250, 250: 250, 280: 300, 600: 1000, 1000: 1000, 0: 0} {
		if got := nearestHZ(rate); got != want {
			t.Errorf("nearestHZ(%d) = %d, want %d", rate, got, want)
		}
	}
}
