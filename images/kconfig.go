package images

import (
	"bufio"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The kernel configuration fragments lab ships (images/kconfig/*.config)
// are embedded, so `lab image build --config era-2.4` works outside the
// source tree too.
//
//go:embed kconfig/*.config
var kconfigFS embed.FS

// Fragment is one kernel configuration fragment: the options it asks for,
// in the form `make` writes them in a .config.
type Fragment struct {
	// Name is the fragment's file name (era-2.4.config) or the path given.
	Name string
	// Data is the fragment's text as read.
	Data []byte
	// Options maps each CONFIG_ symbol to the value asked for: "y", "m", a
	// number or quoted string, or "n" for `# CONFIG_X is not set`.
	Options map[string]string
	// Order lists the symbols in the order they appear.
	Order []string
}

var (
	kconfigSetRE   = regexp.MustCompile(`^(CONFIG_[A-Za-z0-9_]+)=(.*)$`)
	kconfigUnsetRE = regexp.MustCompile(`^# (CONFIG_[A-Za-z0-9_]+) is not set$`)
)

// ParseFragment reads a fragment's options. Comment lines and blank lines
// are skipped; any other line is an error naming it, and so is a symbol
// given twice with different values.
func ParseFragment(name string, data []byte) (*Fragment, error) {
	f := &Fragment{Name: name, Data: data, Options: map[string]string{}}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		var sym, val string
		if m := kconfigSetRE.FindStringSubmatch(line); m != nil {
			sym, val = m[1], m[2]
			if val == "" {
				return nil, fmt.Errorf("fragment %s:%d: %s has no value (write `# %s is not set` to turn it off)", name, n, sym, sym)
			}
		} else if m := kconfigUnsetRE.FindStringSubmatch(line); m != nil {
			sym, val = m[1], "n"
		} else if line == "" || strings.HasPrefix(line, "#") {
			continue
		} else {
			return nil, fmt.Errorf("fragment %s:%d: %q is not CONFIG_X=value, `# CONFIG_X is not set` or a comment", name, n, line)
		}
		if prev, ok := f.Options[sym]; ok {
			if prev != val {
				return nil, fmt.Errorf("fragment %s:%d: %s given twice (%s and %s)", name, n, sym, prev, val)
			}
			continue
		}
		f.Options[sym] = val
		f.Order = append(f.Order, sym)
	}
	return f, nil
}

// FragmentNames lists the fragments lab ships, without ".config".
func FragmentNames() []string {
	des, _ := kconfigFS.ReadDir("kconfig")
	var names []string
	for _, de := range des {
		names = append(names, strings.TrimSuffix(de.Name(), ".config"))
	}
	sort.Strings(names)
	return names
}

// LoadFragment finds a fragment: a file if arg names one (a path, or a
// name ending in .config that exists), else one lab ships ("era-2.4" or
// "era-2.4.config").
func LoadFragment(arg string) (*Fragment, error) {
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		data, err := os.ReadFile(arg)
		if err != nil {
			return nil, fmt.Errorf("fragment %s: %w", arg, err)
		}
		return ParseFragment(arg, data)
	}
	name := strings.TrimSuffix(filepath.Base(arg), ".config") + ".config"
	if !strings.ContainsRune(arg, '/') {
		if data, err := kconfigFS.ReadFile("kconfig/" + name); err == nil {
			return ParseFragment(name, data)
		}
	}
	return nil, fmt.Errorf("fragment %q: no such file, and lab ships no fragment of that name (it ships %s)", arg, strings.Join(FragmentNames(), ", "))
}

// ParseConfig reads a full .config into symbol -> value ("n" for the
// options written as not set). Symbols absent from the file are off too:
// see ConfigValue.
func ParseConfig(data []byte) map[string]string {
	cfg := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if m := kconfigSetRE.FindStringSubmatch(line); m != nil {
			cfg[m[1]] = m[2]
		} else if m := kconfigUnsetRE.FindStringSubmatch(line); m != nil {
			cfg[m[1]] = "n"
		}
	}
	return cfg
}

// ConfigValue is sym's value in cfg, "n" when it is not there (an option
// whose dependencies are off is not even written out).
func ConfigValue(cfg map[string]string, sym string) string {
	if v, ok := cfg[sym]; ok {
		return v
	}
	return "n"
}

// Missed is an option a fragment asked for that the final configuration
// does not have.
type Missed struct {
	Symbol   string
	Want     string
	Got      string
	Fragment string
	// OverriddenBy names a later fragment asking for another value of the
	// same symbol; "" if none did.
	OverriddenBy string
}

func (m Missed) String() string {
	s := fmt.Sprintf("%s=%s (asked for by %s) did not take: the configuration has %s=%s", m.Symbol, m.Want, m.Fragment, m.Symbol, m.Got)
	if m.OverriddenBy != "" {
		s += fmt.Sprintf(" (%s, later, asks for %s)", m.OverriddenBy, m.Got)
	}
	return s
}

// CheckConfig compares what the fragments asked for, in order, with the
// final configuration, and returns every option that did not take (a
// missing dependency, a choice another fragment made, a typo'd symbol).
func CheckConfig(frags []*Fragment, cfg map[string]string) []Missed {
	var missed []Missed
	for i, f := range frags {
		for _, sym := range f.Order {
			want, got := f.Options[sym], ConfigValue(cfg, sym)
			if want == got {
				continue
			}
			m := Missed{Symbol: sym, Want: want, Got: got, Fragment: f.Name}
			for _, later := range frags[i+1:] {
				if v, ok := later.Options[sym]; ok && v != want {
					m.OverriddenBy = later.Name
				}
			}
			missed = append(missed, m)
		}
	}
	return missed
}

// NotableOptions are the configuration choices a benchmark's figures
// depend on most, recorded with a built kernel (and shown by `lab image
// list`): tick rate, preemption model, high-resolution timers, the
// address-space split and the CPU the kernel was built for.
func NotableOptions(cfg map[string]string) map[string]string {
	pick := func(prefix string, choices ...string) string {
		for _, c := range choices {
			if ConfigValue(cfg, prefix+c) == "y" {
				return c
			}
		}
		return "?"
	}
	cpu := "?"
	for sym, v := range cfg {
		if v == "y" && strings.HasPrefix(sym, "CONFIG_M") && isCPUChoice(sym) {
			cpu = strings.TrimPrefix(sym, "CONFIG_")
		}
	}
	split := "?"
	if v, ok := cfg["CONFIG_PAGE_OFFSET"]; ok {
		split = map[string]string{"0xC0000000": "3G/1G", "0x80000000": "2G/2G", "0x78000000": "2G/2G (opt)", "0x40000000": "1G/3G", "0xB0000000": "3G/1G (opt)"}[v]
		if split == "" {
			split = "PAGE_OFFSET " + v
		}
	}
	hr := "off"
	if ConfigValue(cfg, "CONFIG_HIGH_RES_TIMERS") == "y" {
		hr = "on"
	}
	return map[string]string{
		"hz":       ConfigValue(cfg, "CONFIG_HZ"),
		"preempt":  strings.ToLower(pick("CONFIG_PREEMPT_", "NONE", "VOLUNTARY", "RT")),
		"hrtimers": hr,
		"split":    split,
		"cpu":      cpu,
	}
}

// isCPUChoice tells the processor-family choice (CONFIG_MPENTIUM4,
// CONFIG_MCORE2...) from other CONFIG_M* symbols.
func isCPUChoice(sym string) bool {
	switch sym {
	case "CONFIG_M486", "CONFIG_M486SX", "CONFIG_M586", "CONFIG_M586TSC", "CONFIG_M586MMX",
		"CONFIG_M686", "CONFIG_MPENTIUMII", "CONFIG_MPENTIUMIII", "CONFIG_MPENTIUMM",
		"CONFIG_MPENTIUM4", "CONFIG_MK6", "CONFIG_MK7", "CONFIG_MK8", "CONFIG_MCRUSOE",
		"CONFIG_MEFFICEON", "CONFIG_MWINCHIPC6", "CONFIG_MWINCHIP3D", "CONFIG_MELAN",
		"CONFIG_MGEODEGX1", "CONFIG_MGEODE_LX", "CONFIG_MCYRIXIII", "CONFIG_MVIAC3_2",
		"CONFIG_MVIAC7", "CONFIG_MCORE2", "CONFIG_MATOM":
		return true
	}
	return false
}
