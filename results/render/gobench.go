package render

import (
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

	"lab/results"
)

// WriteGoBench writes runs in the Go benchmark format
// (golang.org/design/14313-benchmark-format), the text `go test -bench`
// prints and benchstat and github-action-benchmark's `go` tool read, so
// `benchstat old.txt new.txt` compares two exports as it compares two
// `go test` outputs.
//
// Every sample is one benchmark line of one iteration, named after its
// cell and series (GoBenchName):
//
//	BenchmarkForkbench/forktime/profile=celeron-2.4/clock=icount:0/n=200/metric=fork_wait_us 1 162880 ns/op
//
// Units: a time (s, ms, µs, ns) is written as ns/op, as `go test` writes
// it; benchfmt's reader tidies that to its canonical sec/op (benchunit.Tidy
// knows ns/op and MB, nothing of ms or µs), so benchstat shows seconds
// with SI prefixes. A size in kB (the kernel's kB, 1024 bytes) is written
// as B/op, which benchstat scales in binary prefixes. A unit with a "/"
// in it is a rate or already per something (conn/s) and is written as it
// is; any other unit (a count, a ratio "x") gets "/op": one sample is
// one operation of a benchmark run at one iteration.
//
// A run's lines follow its file configuration (written when it differs
// from the previous run's), the keys benchstat splits tables by: goos, goarch (the guest's), pkg (lab/PLUGIN), cpu
// (the guest's CPU model) and accel (the accelerator, as lab refuses to
// compare across accelerators). They are the same for every run of a
// cell, so runs of a cell land in one table; run IDs and times are not
// written, as they would split it. A run's samples are written whatever
// its outcome (a failed or interrupted run's partial ones too); a run
// without samples writes nothing.
func WriteGoBench(w io.Writer, runs []*results.Result) error {
	bw := benchfmt.NewWriter(w)
	for _, r := range runs {
		config := goBenchConfig(r)
		for _, s := range r.Samples {
			res := &benchfmt.Result{
				Config: config,
				Name:   benchfmt.Name(GoBenchName(r, s)),
				Iters:  1,
				Values: []benchfmt.Value{GoBenchValue(s.Value, s.Unit)},
			}
			if err := bw.Write(res); err != nil {
				return err
			}
		}
	}
	return nil
}

// goBenchConfig is a run's file configuration (see WriteGoBench).
func goBenchConfig(r *results.Result) []benchfmt.Config {
	var cfg []benchfmt.Config
	add := func(k, v string) {
		if v = strings.TrimSpace(v); v != "" {
			cfg = append(cfg, benchfmt.Config{Key: k, Value: []byte(v), File: true})
		}
	}
	add("goos", "linux")
	add("goarch", goArch(r))
	add("pkg", "lab/"+r.Plugin)
	add("cpu", r.Guest.CPUModel)
	add("accel", r.Machine.Accelerator)
	return cfg
}

// goArch is the guest's architecture as GOARCH spells it: the profile's
// arch, else the machine uname reported in the guest.
func goArch(r *results.Result) string {
	arch := results.ProfileField(r.Machine.Profile, "arch", "Arch")
	if f := strings.Fields(r.Guest.Uname); arch == "" && len(f) > 0 {
		arch = f[len(f)-1]
	}
	switch arch {
	case "i386", "i486", "i586", "i686":
		return "386"
	case "x86_64":
		return "amd64"
	}
	return arch
}

// GoBenchName is a sample's benchmark name, without the "Benchmark"
// prefix benchfmt.Name leaves off: the plugin capitalised, the
// experiment, then profile=, clock=, the run's parameters in key order
// (but repeat, the number of samples, not what they measure), metric= and
// the sample's labels in key order, each a "/" part as Go names
// sub-benchmarks, so benchstat's -row and -col can pick any of them as
// "/profile" or "/n". Characters github-action-benchmark's name pattern
// does not take (spaces, "/", non-ASCII) become "_", and so does "=" in a
// key. A name that would end in "-digits" (which benchfmt reads as
// GOMAXPROCS, and github-action-benchmark as procs) has that "-" written
// as "_".
func GoBenchName(r *results.Result, s results.Sample) string {
	var b strings.Builder
	b.WriteString(goBenchBase(r.Plugin))
	exp := r.Experiment
	if exp == "" {
		exp = "default"
	}
	b.WriteString("/" + goBenchPart(exp, true))
	kv := func(k, v string) {
		b.WriteString("/" + goBenchPart(k, true) + "=" + goBenchPart(v, false))
	}
	kv("profile", results.ProfileName(r.Machine))
	kv("clock", results.OrUnknown(r.Machine.Clock))
	params := results.MeasuredParams(r.Parameters) // runs of 4 and of 6 repeats are one benchmark
	for _, k := range results.SortedKeys(params) {
		kv(k, params[k])
	}
	kv("metric", s.Metric)
	for _, k := range results.SortedKeys(s.Labels) {
		kv(k, s.Labels[k])
	}
	name := b.String()
	if m := procsSuffix.FindStringIndex(name); m != nil {
		name = name[:m[0]] + "_" + name[m[0]+1:]
	}
	return name
}

// procsSuffix is what benchfmt.Name splits off as GOMAXPROCS.
var procsSuffix = regexp.MustCompile(`-[0-9]+$`)

// goBenchBase is the benchmark's base name: the plugin, capitalised, so
// "Benchmark" is followed by an upper-case letter as in a Go benchmark
// function's name ("Plugin" first if the plugin's name starts otherwise).
func goBenchBase(plugin string) string {
	p := goBenchPart(plugin, true)
	if p == "" || !unicode.IsLetter(rune(p[0])) {
		p = "Plugin" + p
	}
	return strings.ToUpper(p[:1]) + p[1:]
}

// goBenchPart is s with every character a name part cannot hold as "_":
// whitespace (it ends a name), "/" (it starts a part), "=" in a key or a
// positional part (it makes one key=value), and anything outside
// github-action-benchmark's name class (ASCII letters, digits, "_" and
// ()$%^&*+,-.:;<=|[]{}"#).
func goBenchPart(s string, key bool) string {
	return strings.Map(func(c rune) rune {
		if c == '=' && key {
			return '_'
		}
		if isWord(c) || strings.ContainsRune(`()$%^&*+,-.:;<=|[]{}"#`, c) {
			return c
		}
		return '_'
	}, s)
}

// isWord is JavaScript's \w: an ASCII letter, digit or "_".
func isWord(c rune) bool {
	return c < unicode.MaxASCII && (unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_')
}

// GoBenchValue is one sample's value in benchfmt units (see WriteGoBench):
// tidied as benchfmt's reader would tidy it (a time in sec/op), with the
// unit written (ns/op for a time) as the original.
func GoBenchValue(v float64, unit string) benchfmt.Value {
	orig, origUnit := v, strings.Join(strings.Fields(unit), "_")
	switch {
	case results.IsTimeUnit(unit):
		orig, _ = results.ConvertUnit(v, unit, "ns")
		origUnit = "ns/op"
	case unit == "kB" || unit == "KiB":
		orig, origUnit = v*1024, "B/op"
	case origUnit == "":
		origUnit = "value/op"
	case !strings.Contains(origUnit, "/"):
		origUnit += "/op"
	}
	orig = round15(orig)
	tidy, tidyUnit := benchunit.Tidy(orig, origUnit)
	if tidyUnit == origUnit {
		return benchfmt.Value{Value: orig, Unit: origUnit}
	}
	return benchfmt.Value{Value: tidy, Unit: tidyUnit, OrigValue: orig, OrigUnit: origUnit}
}

// round15 is v to 15 significant digits, dropping the last-bit noise of
// a unit conversion (162.88 µs is 162880 ns, not 162880.00000000003).
func round15(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	if err != nil {
		return v
	}
	return r
}
