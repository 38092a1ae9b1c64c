package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"lab/images"
	"lab/vm"
)

// BenchmarkEraKernel: celeron-2.4-era (Linux 6.1 built from Debian's source
// with base + era-2.4) next to celeron-2.4 (Debian's 686 kernel) on the
// same emulated machine: the era kernel's build (cold as recorded when it
// was built, cached measured now), cold and restored boot to ready, and
// forktime's fork+wait and pthread_create+join on each kernel, one run
// after the other, as ratios.
func BenchmarkEraKernel(b *testing.B) {
	const boots, repeat = 3, 5
	era, deb := itProfileB(b, "celeron-2.4-era"), itProfileB(b, "celeron-2.4")
	benchRoot(b, era, deb)

	// Build: a cache hit is the whole `lab image build` a second `make
	// setup` pays.
	k, err := images.LoadKernel(era.Kernel)
	if err != nil {
		b.Fatal(err)
	}
	bld, err := images.LoadBuild(k)
	if err != nil {
		b.Fatal(err)
	}
	var cached []float64
	for i := 0; i < 3; i++ {
		t := time.Now()
		benchLab(b, "image", "build", era.Kernel)
		cached = append(cached, time.Since(t).Seconds())
	}
	cm, clo, chi := benchStats(cached)
	benchTable(b, fmt.Sprintf("era kernel %s (%s %s + %s; %s): build time, seconds", k.ID, bld.Source.Package, bld.Source.Version, strings.Join(bld.Fragments, " + "), bld.NotableString()),
		"COLD (RECORDED WHEN BUILT, make -j2)\tCACHED MEDIAN\tRANGE\tN", [][]string{{fmt.Sprintf("%.0f", bld.Seconds), fmt.Sprintf("%.2f", cm), fmt.Sprintf("%.2f..%.2f", clo, chi), fmt.Sprint(len(cached))}})

	// Boot to ready.
	up := func(p images.Profile, extra ...string) *vm.State {
		out := benchLab(b, append(append([]string{"up", "--accel", "tcg", "--json", "--name", "b"}, extra...), p.Name)...)
		var st vm.State
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			b.Fatalf("lab up --json: %v", err)
		}
		benchLab(b, "down", "b")
		return &st
	}
	var rows [][]string
	coldMed := map[string]float64{}
	for _, p := range []images.Profile{deb, era} {
		up(p) // makes the snapshot if there is none
		var cold, restored, atInit []float64
		for i := 0; i < boots; i++ {
			st := up(p, "--cold")
			cold = append(cold, st.BootSeconds)
			atInit = append(atInit, st.Guest.UptimeAtInit)
			st = up(p)
			if st.Boot != "restored from snapshot" {
				b.Fatalf("%s: boot %q, want a restore", p.Name, st.Boot)
			}
			restored = append(restored, st.BootSeconds)
		}
		m, lo, hi := benchStats(cold)
		rm, rlo, rhi := benchStats(restored)
		im, _, _ := benchStats(atInit)
		coldMed[p.Name] = m
		rows = append(rows, []string{p.Name, p.Kernel, fmt.Sprintf("%.2f", m), fmt.Sprintf("%.2f..%.2f", lo, hi), fmt.Sprintf("%.2f", im),
			fmt.Sprintf("%.2f", rm), fmt.Sprintf("%.2f..%.2f", rlo, rhi)})
	}
	benchTable(b, fmt.Sprintf("boot to ready under TCG, seconds (%d cold and %d restored boots each, alternating); cold era/Debian %.2fx", boots, boots, coldMed[era.Name]/coldMed[deb.Name]),
		"PROFILE\tKERNEL\tCOLD MEDIAN\tRANGE\tCOLD: UPTIME AT /init\tRESTORED MEDIAN\tRANGE", rows)

	// forktime on each kernel, one after the other.
	var fails benchFails
	med := map[string]map[string]float64{}
	rows = nil
	for _, p := range []images.Profile{deb, era} {
		rs, _ := benchRuns(b, &fails, 1, "forkbench", "--profile", p.Name, "-e", "forktime", "--repeat", fmt.Sprint(repeat))
		med[p.Name] = map[string]float64{}
		for _, metric := range []string{"fork_wait_us", "thread_create_join_us"} {
			xs := sampleValues(rs[0].Samples, metric)
			if len(xs) == 0 {
				b.Fatalf("%s: no %s samples", p.Name, metric)
			}
			m, lo, hi := benchStats(xs)
			med[p.Name][metric] = m
			rows = append(rows, []string{p.Name, metric, fmt.Sprintf("%.1f", m), fmt.Sprintf("%.1f..%.1f", lo, hi), fmt.Sprint(len(xs))})
		}
	}
	for _, metric := range []string{"fork_wait_us", "thread_create_join_us"} {
		rows = append(rows, []string{"era / Debian", metric, fmt.Sprintf("%.2fx", med[era.Name][metric]/med[deb.Name][metric]), "", ""})
	}
	for _, p := range []images.Profile{deb, era} {
		rows = append(rows, []string{p.Name, "fork / thread", fmt.Sprintf("%.2f", med[p.Name]["fork_wait_us"]/med[p.Name]["thread_create_join_us"]), "", ""})
	}
	benchTable(b, fmt.Sprintf("forktime (default n) under TCG, host clock, µs per call: Debian's 686 kernel vs the era kernel, %d repeats each, back to back%s", repeat, fails.note()),
		"PROFILE\tMETRIC\tMEDIAN\tRANGE\tN", rows)
	benchMetrics(b, "era_cold_boot_s", []float64{coldMed[era.Name]}, "debian_cold_boot_s", []float64{coldMed[deb.Name]})
	fails.check(b)
}

func itProfileB(b *testing.B, name string) images.Profile {
	b.Helper()
	for _, p := range images.Builtin() {
		if p.Name == name {
			return p
		}
	}
	b.Fatalf("no built-in profile %s", name)
	return images.Profile{}
}
