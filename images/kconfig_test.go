package images

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseFragment(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]string
		wantErr string
	}{
		{name: "set and unset", in: "# a comment\nCONFIG_A=y\n\n# CONFIG_B is not set\nCONFIG_HZ=100\nCONFIG_S=\"x y\"\n",
			want: map[string]string{"CONFIG_A": "y", "CONFIG_B": "n", "CONFIG_HZ": "100", "CONFIG_S": `"x y"`}},
		{name: "same twice", in: "CONFIG_A=y\nCONFIG_A=y\n", want: map[string]string{"CONFIG_A": "y"}},
		{name: "conflict", in: "CONFIG_A=y\n# CONFIG_A is not set\n", wantErr: "CONFIG_A given twice"},
		{name: "garbage", in: "HZ=100\n", wantErr: `f.config:1: "HZ=100" is not`},
		{name: "no value", in: "CONFIG_A=\n", wantErr: "CONFIG_A has no value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFragment("f.config", []byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Options) != len(tt.want) {
				t.Fatalf("got %v, want %v", f.Options, tt.want)
			}
			for k, v := range tt.want {
				if f.Options[k] != v {
					t.Errorf("%s: got %q, want %q", k, f.Options[k], v)
				}
			}
		})
	}
}

func TestCheckConfig(t *testing.T) {
	base, _ := ParseFragment("base.config", []byte("CONFIG_VIRTIO_PCI=y\n# CONFIG_IPV6 is not set\nCONFIG_VMSPLIT_3G=y\n"))
	split, _ := ParseFragment("vmsplit-2g.config", []byte("CONFIG_VMSPLIT_2G=y\n"))
	over, _ := ParseFragment("over.config", []byte("# CONFIG_VIRTIO_PCI is not set\n"))
	tests := []struct {
		name   string
		frags  []*Fragment
		config string
		want   []string // Missed.String() substrings, in order
	}{
		{name: "all took", frags: []*Fragment{base},
			config: "CONFIG_VIRTIO_PCI=y\n# CONFIG_IPV6 is not set\nCONFIG_VMSPLIT_3G=y\n"},
		{name: "absent means off", frags: []*Fragment{base},
			config: "CONFIG_VIRTIO_PCI=y\nCONFIG_VMSPLIT_3G=y\n"},
		{name: "dependency missing", frags: []*Fragment{base},
			config: "# CONFIG_VIRTIO_PCI is not set\nCONFIG_VMSPLIT_3G=y\n",
			want:   []string{"CONFIG_VIRTIO_PCI=y (asked for by base.config) did not take: the configuration has CONFIG_VIRTIO_PCI=n"}},
		{name: "a choice made by another fragment", frags: []*Fragment{base, split},
			config: "CONFIG_VIRTIO_PCI=y\nCONFIG_VMSPLIT_2G=y\n",
			want:   []string{"CONFIG_VMSPLIT_3G=y (asked for by base.config)"}},
		{name: "overridden by a later fragment", frags: []*Fragment{base, over},
			config: "CONFIG_VMSPLIT_3G=y\n",
			want:   []string{"CONFIG_VIRTIO_PCI=y (asked for by base.config) did not take: the configuration has CONFIG_VIRTIO_PCI=n (over.config, later, asks for n)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckConfig(tt.frags, ParseConfig([]byte(tt.config)))
			if len(got) != len(tt.want) {
				t.Fatalf("got %d missed %v, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i].String(), w) {
					t.Errorf("missed[%d]: got %q, want it to contain %q", i, got[i].String(), w)
				}
			}
		})
	}
}

// The shipped fragments parse, are documented option by option (a comment
// block before each group) and leave the built kernels' needs built in.
func TestShippedFragments(t *testing.T) {
	for _, name := range FragmentNames() {
		f, err := LoadFragment(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Order) == 0 {
			t.Errorf("%s asks for nothing", name)
		}
		lines := strings.Split(string(f.Data), "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "CONFIG_") && (i == 0 || (lines[i-1] == "")) {
				t.Errorf("%s:%d: %s has no comment saying why", name, i+1, l)
			}
		}
	}
	base, err := LoadFragment("base")
	if err != nil {
		t.Fatal(err)
	}
	// The rest of what CheckBuiltin wants (VIRTIO, the PCI libraries) is
	// selected by these.
	for _, sym := range []string{"CONFIG_VIRTIO_PCI", "CONFIG_VIRTIO_CONSOLE", "CONFIG_HW_RANDOM_VIRTIO", "CONFIG_VIRTIO_NET", "CONFIG_COMPAT_32BIT_TIME", "CONFIG_IKCONFIG_PROC"} {
		if base.Options[sym] != "y" {
			t.Errorf("base.config: %s is %q, want y", sym, base.Options[sym])
		}
	}
	for id, r := range Recipes {
		for _, fr := range r.Fragments {
			if _, err := LoadFragment(fr); err != nil {
				t.Errorf("recipe %s: %v", id, err)
			}
		}
	}
}

func TestCheckBuiltin(t *testing.T) {
	cfg := ParseConfig([]byte("CONFIG_VIRTIO=y\nCONFIG_VIRTIO_PCI=y\nCONFIG_VIRTIO_PCI_LIB=y\nCONFIG_VIRTIO_PCI_LIB_LEGACY=y\nCONFIG_VIRTIO_CONSOLE=y\nCONFIG_HW_RANDOM_VIRTIO=y\nCONFIG_VIRTIO_NET=y\n"))
	if err := CheckBuiltin(cfg, nil); err != nil {
		t.Fatalf("all built in: %v", err)
	}
	cfg["CONFIG_VIRTIO_CONSOLE"] = "m"
	err := CheckBuiltin(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "virtio_console (CONFIG_VIRTIO_CONSOLE=y)") {
		t.Fatalf("got %v, want virtio_console named", err)
	}
}

func TestBuildKey(t *testing.T) {
	a, _ := ParseFragment("base.config", []byte("CONFIG_A=y\n"))
	b, _ := ParseFragment("era.config", []byte("CONFIG_HZ_100=y\n"))
	b2, _ := ParseFragment("era.config", []byte("CONFIG_HZ_1000=y\n"))
	renamed, _ := ParseFragment("other.config", []byte("CONFIG_HZ_100=y\n"))
	key := BuildKey("src", "i386", "gcc 12", []*Fragment{a, b})
	if again := BuildKey("src", "i386", "gcc 12", []*Fragment{a, b}); again != key {
		t.Fatalf("same inputs: got %s, want %s", again, key)
	}
	for name, other := range map[string]string{
		"source":         BuildKey("src2", "i386", "gcc 12", []*Fragment{a, b}),
		"arch":           BuildKey("src", "x86_64", "gcc 12", []*Fragment{a, b}),
		"toolchain":      BuildKey("src", "i386", "gcc 13", []*Fragment{a, b}),
		"fragment text":  BuildKey("src", "i386", "gcc 12", []*Fragment{a, b2}),
		"fragment name":  BuildKey("src", "i386", "gcc 12", []*Fragment{a, renamed}),
		"fragment order": BuildKey("src", "i386", "gcc 12", []*Fragment{b, a}),
		"one fragment":   BuildKey("src", "i386", "gcc 12", []*Fragment{a}),
	} {
		if other == key {
			t.Errorf("a different %s gave the same key", name)
		}
	}
}

func TestNotableOptions(t *testing.T) {
	cfg := ParseConfig([]byte("CONFIG_HZ=100\nCONFIG_PREEMPT_NONE=y\n# CONFIG_HIGH_RES_TIMERS is not set\nCONFIG_PAGE_OFFSET=0x80000000\nCONFIG_MPENTIUM4=y\nCONFIG_MMU=y\n"))
	got := notableString(NotableOptions(cfg))
	if want := "hz=100 preempt=none hrtimers=off split=2G/2G cpu=MPENTIUM4"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestLoadFragment(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mine.config")
	if err := os.WriteFile(p, []byte("CONFIG_X=y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{p, "era-2.4", "era-2.4.config"} {
		if _, err := LoadFragment(arg); err != nil {
			t.Errorf("%s: %v", arg, err)
		}
	}
	if _, err := LoadFragment("era-9.9"); err == nil || !strings.Contains(err.Error(), "era-2.4") {
		t.Errorf("unknown fragment: got %v, want the shipped names listed", err)
	}
}

// A missing build tool is named before anything is fetched or built.
func TestBuildKernelMissingTool(t *testing.T) {
	cache := testCache(t)
	t.Setenv("PATH", t.TempDir())
	_, _, _, err := cache.BuildKernel(t.Context(), BuildOptions{ID: "era-test", Arch: "i386", Fragments: []string{"base", "era-2.4"}})
	if err == nil || !strings.Contains(err.Error(), "needs make, which is not on PATH; install the make package") {
		t.Fatalf("got %v, want the missing make named", err)
	}
	for _, tt := range []struct {
		o    BuildOptions
		want string
	}{
		{BuildOptions{ID: "era-test", Arch: "x86_64", Fragments: []string{"base"}}, "i386 only"},
		{BuildOptions{ID: "debian-6.1-686", Arch: "i386", Fragments: []string{"base"}}, "belongs to a kernel lab fetches"},
		{BuildOptions{ID: "era-test", Arch: "i386"}, "no --config fragment"},
		{BuildOptions{ID: "era-test", Arch: "i386", Fragments: []string{"nope"}}, `fragment "nope"`},
	} {
		if _, _, _, err := cache.BuildKernel(t.Context(), tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want an error containing %q", tt.o, err, tt.want)
		}
	}
}

// TestStaleRecipe: a recipe's kernel built from what the recipe gives now
// is current; one built with other inputs is named stale, with the command
// that rebuilds it; kernels of no recipe are never stale.
func TestStaleRecipe(t *testing.T) {
	t.Parallel()
	prefix := crossCompile["i386"]
	toolchain, err := toolchainVersion(context.Background(), prefix)
	if err != nil {
		t.Fatalf("the cross toolchain (make deps installs it): %v", err)
	}
	cache := testCache(t)
	sha, err := cache.PutReader(strings.NewReader("not really a .deb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := writeJSONAtomic(cache.sourceManifest(), &Source{Package: SourcePackage, Version: "6.1.0-test", SHA256: sha}); err != nil {
		t.Fatal(err)
	}
	r := Recipes["era-2.4-i386"]
	frags, err := loadFragments(r.Fragments)
	if err != nil {
		t.Fatal(err)
	}
	current := BuildKey(sha, r.Arch, toolchain, frags)
	ctx := context.Background()
	if why := cache.StaleRecipe(ctx, &Kernel{ID: "era-2.4-i386", Source: "build:" + current}); why != "" {
		t.Errorf("a kernel built from the recipe as it is: %s", why)
	}
	why := cache.StaleRecipe(ctx, &Kernel{ID: "era-2.4-i386", Source: "build:" + BuildKey(sha, r.Arch, toolchain, frags[:1])})
	if !strings.Contains(why, "lab image build era-2.4-i386") {
		t.Errorf("a kernel built from other fragments: %q, want it named stale with the rebuild command", why)
	}
	for _, k := range []*Kernel{{ID: "debian-6.1-686", Source: "debian"}, {ID: "my-k", Source: "build:" + current}} {
		if why := cache.StaleRecipe(ctx, k); why != "" {
			t.Errorf("%s: %s", k.ID, why)
		}
	}
}
