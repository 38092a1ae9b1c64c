package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"lab/images"
	"lab/vm"
)

// linux2632Probe prints, from inside a 2.6.32 guest, what says the kernel
// is upstream 2.6.32 as lab built it and that what lab relies on there
// works: busybox's applets that list directories and processes (glibc
// 2.36's fstat needs patch 06 there), the stack limit the agent set through
// the old system calls, the CPUs online, the tick.
const linux2632Probe = `
echo "release $(uname -r)"
echo "config_sha256 $(zcat /proc/config.gz | sha256sum | cut -d' ' -f1)"
echo "ls_dev $(ls /dev | grep -cx -e null -e hvc0 -e ttyS0)"
echo "ps_init $(ps | awk '$1 == 1 { n++ } END { print n + 0 }')"
# The soft RLIMIT_STACK from the kernel itself: busybox's ulimit builtin
# asks prlimit64 only, which 2.6.32 lacks (it prints garbage there).
echo "stack_kb $(awk '/^Max stack size/ { print ($4 == "unlimited" ? "unlimited" : $4 / 1024) }' /proc/self/limits)"
echo "online $(cat /sys/devices/system/cpu/online)"
echo "randomize_va_space $(cat /proc/sys/kernel/randomize_va_space)"
ticks() { awk '$1 == "LOC:" { loc = $2 } $1 == "0:" { irq0 = $2 } END { print loc + irq0 }' /proc/interrupts; }
a=$(ticks); t0=$(cut -d' ' -f1 /proc/uptime)
sleep 1
b=$(ticks); t1=$(cut -d' ' -f1 /proc/uptime)
echo "tick_hz $(awk -v a=$a -v b=$b -v t0=$t0 -v t1=$t1 'BEGIN { printf "%.0f", (b - a) / (t1 - t0) }')"
`

// TestIntegrationLinux2632 boots a profile on each upstream 2.6.32 kernel
// lab builds, cold and then restored from its booted snapshot, and from
// inside checks the release, that /proc/config.gz is the recorded .config,
// the tick rate, the CPUs online, the stack limit and sysctls the agent
// set, busybox's ls and ps; then runs a plugin on each (forkbench's two
// experiments, threadbench's thread limit with 8 MB and 1 MB stacks) and
// copies a file both ways over the link (hvc0).
func TestIntegrationLinux2632(t *testing.T) {
	names := []string{"xeon5130-2core-linux-2.6.32", "celeron-2.4-linux-2.6.32", "split-3g1g-linux-2.6.32"}
	var ps []images.Profile
	kernels := map[string]bool{}
	for _, n := range names {
		p := itProfile(t, n)
		ps = append(ps, p)
		kernels[p.Kernel] = true
	}
	// One profile on each 2.6.32 kernel lab builds.
	for id, r := range images.Recipes {
		if r.Upstream != "" && !kernels[id] {
			t.Errorf("kernel %s is built from upstream %s but no profile here boots it", id, r.Upstream)
		}
	}
	root := itBootEnv(t, ps...)
	// lab image list says where each came from: the tree and the patches.
	list := itMust(t, itCallTimeout, nil, "image", "list").stdout
	for id := range kernels {
		found := false
		for _, line := range strings.Split(list, "\n") {
			found = found || strings.HasPrefix(line, id+" ") && strings.Contains(line, " tree ac28e4adaded + 6 patches (01-compiler-gcc-newer.patch ")
		}
		if !found {
			t.Errorf("lab image list: no row for %s naming its tree and patches:\n%s", id, list)
		}
	}
	for _, p := range ps {
		t.Run(p.Name, func(t *testing.T) {
			k, err := envCache(t).LoadKernel(p.Kernel)
			if err != nil {
				t.Fatal(err)
			}
			b, err := envCache(t).LoadBuild(k)
			if err != nil {
				t.Fatal(err)
			}
			if k.Release != "2.6.32.28" || b.Source.Tree != images.Upstreams["2.6.32.28"].Tree || len(b.Source.Patches) == 0 || k.LinkOf() != images.LinkHVC {
				t.Errorf("kernel %s: release %s, tree %s, patches %v, link %s; want 2.6.32.28 from its tree with lab's patches, over hvc", k.ID, k.Release, b.Source.Tree, b.Source.Patches, k.LinkOf())
			}
			wantHZ, _ := strconv.Atoi(images.ConfigValue(mustConfig(t, b), "CONFIG_HZ"))
			check := func(how string, st *vm.State) {
				t.Helper()
				if st.KernelEntry != images.EntryBzImage || st.Guest.KernelRelease != "2.6.32.28" {
					t.Errorf("%s: entered as %q, release %q; want a bzImage and 2.6.32.28", how, st.KernelEntry, st.Guest.KernelRelease)
				}
				r := itMust(t, itCallTimeout, nil, "exec", "k26", "--", "sh", "-c", linux2632Probe)
				g := itParseProbe(r.stdout)
				t.Logf("%s (%s): %v", p.Name, how, g)
				if g["release"] != "2.6.32.28" {
					t.Errorf("%s: uname -r = %q, want 2.6.32.28", how, g["release"])
				}
				if g["config_sha256"] != b.Config {
					t.Errorf("%s: /proc/config.gz hashes to %q, the recorded .config to %s", how, g["config_sha256"], b.Config)
				}
				if g["ls_dev"] != "3" {
					t.Errorf("%s: ls /dev found %q of null, hvc0 and ttyS0, want all 3 (glibc's fstat on 2.6.32: patch 06)\n%s", how, g["ls_dev"], r.stdout)
				}
				if g["ps_init"] != "1" {
					t.Errorf("%s: ps lists PID 1 %q times, want once", how, g["ps_init"])
				}
				if g["stack_kb"] != strconv.Itoa(p.Guest.StackKB) {
					t.Errorf("%s: soft stack limit %q KB, want the profile's %d (set through setrlimit where prlimit64 is missing)", how, g["stack_kb"], p.Guest.StackKB)
				}
				if online, err := itCountCPUs(g["online"]); err != nil || online != p.Topology.OnlineCPUs() {
					t.Errorf("%s: CPUs online %q, want %d", how, g["online"], p.Topology.OnlineCPUs())
				}
				for key, want := range p.Guest.Sysctls {
					if key == "kernel.randomize_va_space" && g["randomize_va_space"] != want {
						t.Errorf("%s: randomize_va_space = %q, want %s", how, g["randomize_va_space"], want)
					}
				}
				hz, err := strconv.Atoi(g["tick_hz"])
				if err != nil || hz < wantHZ*6/10 || hz > wantHZ*14/10 {
					t.Errorf("%s: %q timer interrupts a second, want about %d (a periodic tick)", how, g["tick_hz"], wantHZ)
				}
			}
			st := itUp(t, p.Name, "k26", "--cold")
			check("cold", st)
			itMust(t, itCallTimeout, nil, "down", "k26")
			itUp(t, p.Name, "k26") // makes the snapshot
			itMust(t, itCallTimeout, nil, "down", "k26")
			st = itUp(t, p.Name, "k26")
			if st.Boot != "restored from snapshot" {
				t.Errorf("boot %q, want restored from snapshot", st.Boot)
			}
			check("restored", st)

			switch p.Name {
			case "xeon5130-2core-linux-2.6.32":
				res, _ := itRunJSON(t, 0, "forkbench", "--vm", "k26", "-p", "n=200", "--repeat", "1")
				fork, thread := itSeries(res, "fork_wait_us", nil), itSeries(res, "thread_create_join_us", nil)
				if res.Guest.KernelRelease != "2.6.32.28" || len(fork) != 1 || len(thread) != 1 || fork[0] <= 0 || thread[0] <= 0 {
					t.Errorf("forktime on 2.6.32: release %q, fork+wait %v, create+join %v", res.Guest.KernelRelease, fork, thread)
				}
				// A file both ways over hvc0, a megabyte and some.
				dir := t.TempDir()
				data := bytes.Repeat([]byte("2.6.32 link\n"), 100000)
				src, back := filepath.Join(dir, "src"), filepath.Join(dir, "back")
				if err := os.WriteFile(src, data, 0o644); err != nil {
					t.Fatal(err)
				}
				itMust(t, itCallTimeout, nil, "cp", src, "k26:/tmp/f")
				itMust(t, itCallTimeout, nil, "cp", "k26:/tmp/f", back)
				if got, _ := os.ReadFile(back); !bytes.Equal(got, data) {
					t.Errorf("lab cp there and back: %d bytes came back, %d went", len(got), len(data))
				}
			case "celeron-2.4-linux-2.6.32":
				res, _ := itRunJSON(t, 0, "forkbench", "--vm", "k26", "-e", "create", "-p", "m=200", "--repeat", "1")
				proc, thread := itSeries(res, "process_ms", nil), itSeries(res, "thread_ms", nil)
				if len(proc) != 1 || len(thread) != 1 || proc[0] <= 0 || thread[0] <= 0 {
					t.Errorf("create on 2.6.32: process %v, thread %v", proc, thread)
				}
			case "split-3g1g-linux-2.6.32":
				for _, stack := range []string{"8192", "1024"} {
					res, _ := itRunJSON(t, 0, "threadbench", "--vm", "k26", "-e", "limit", "-p", "stack_kb="+stack, "--repeat", "1")
					got := itSeries(res, "max_threads", map[string]string{"stack_kb": stack})
					t.Logf("2.6.32, 3G/1G, %s KB stacks: %v threads", stack, got)
					if len(got) != 1 {
						t.Fatalf("max_threads at stack_kb=%s: %v, want 1 sample (outcome %+v)", stack, got, res.Outcome)
					}
					// 3072 MB of user space holds 384 stacks of 8 MB; the
					// program and its mappings take a few.
					if stack == "8192" && (got[0] > 384 || got[0] < 345) {
						t.Errorf("8 MB stacks: %v threads, want 345..384", got[0])
					}
					if stack == "1024" && got[0] <= 384 {
						t.Errorf("1 MB stacks: %v threads, want more than 8 MB stacks allow", got[0])
					}
				}
			}
			itMust(t, itCallTimeout, nil, "down", "k26")
			itNoneLeft(t, root, "k26")
		})
	}
}

// mustConfig is the parsed .config of build b.
func mustConfig(t *testing.T, b *images.Build) map[string]string {
	t.Helper()
	data, err := os.ReadFile(envCache(t).BlobPath(b.Config))
	if err != nil {
		t.Fatal(err)
	}
	return images.ParseConfig(data)
}

// TestLinux2632ProfilesAreVariants: each 2.6.32 profile is a variant of
// the machine it names, on a kernel lab builds from upstream, and its
// differences say which kernel it runs instead of the original's.
func TestLinux2632ProfilesAreVariants(t *testing.T) {
	n := 0
	for _, p := range images.Builtin() {
		r, ok := images.Recipes[p.Kernel]
		if !ok || r.Upstream == "" {
			continue
		}
		n++
		if p.VariantOf == "" || !strings.HasSuffix(p.Name, "-linux-2.6.32") {
			t.Errorf("%s boots %s: want a variant of its machine named <machine>-linux-2.6.32", p.Name, p.Kernel)
		}
		said := false
		for _, d := range p.Original.Differences {
			said = said || strings.HasPrefix(d, "kernel: upstream Linux 2.6.32.28")
		}
		if !said {
			t.Errorf("%s: its differences do not say it runs upstream 2.6.32.28: %q", p.Name, p.Original.Differences)
		}
	}
	if n < 6 {
		t.Errorf("%d built-in profiles on 2.6.32, want at least 6", n)
	}
}
