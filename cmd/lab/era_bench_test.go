package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"lab/images"
	"lab/vm"
)

// eraPairs are the era profiles, each beside the profile on Debian's 686
// kernel it is compared with: the same emulated machine (the splits, which
// have no Debian twin, beside split-3g1g: Debian's kernel, 3G/1G).
var eraPairs = [][2]string{
	{"celeron-2.4-era", "celeron-2.4"},
	{"p4-2.4-era", "p4-2.4"},
	{"xeon5130-1core-era", "xeon5130-1core"},
	{"split-2g2g", "split-3g1g"},
	{"split-1g3g", "split-3g1g"},
}

// BenchmarkEraKernel: every era kernel (Linux 6.1 built from Debian's
// source, `lab image build`) next to Debian's 686 kernel. Per kernel: its
// build (cold as recorded when it was built, cached measured now). Per
// profile pair: cold boot to ready (the era kernel both through its PVH
// entry and as a bzImage) and restored boot to ready; forktime's fork+wait
// and pthread_create+join on each kernel, one run after the other, as
// ratios.
func BenchmarkEraKernel(b *testing.B) {
	const boots, repeat = 3, 5
	var all []images.Profile
	seen := map[string]bool{}
	for _, pr := range eraPairs {
		for _, n := range pr {
			if !seen[n] {
				seen[n] = true
				all = append(all, itProfile(b, n))
			}
		}
	}
	benchRoot(b, all...)
	prof := func(n string) images.Profile { return itProfile(b, n) }

	// Build: a cache hit is the whole `lab image build` a second `make
	// setup` pays.
	var rows [][]string
	built := map[string]bool{}
	for _, pr := range eraPairs {
		id := prof(pr[0]).Kernel
		if built[id] {
			continue
		}
		built[id] = true
		k, err := envCache(b).LoadKernel(id)
		if err != nil {
			b.Fatal(err)
		}
		bld, err := envCache(b).LoadBuild(k)
		if err != nil {
			b.Fatal(err)
		}
		var cached []float64
		for i := 0; i < 3; i++ {
			t := time.Now()
			benchLab(b, "image", "build", id)
			cached = append(cached, time.Since(t).Seconds())
		}
		cm, clo, chi := benchStats(cached)
		rows = append(rows, []string{id, strings.Join(bld.Fragments, " + "), bld.NotableString(), fmt.Sprintf("%.0f", bld.Seconds),
			fmt.Sprintf("%.2f", cm), fmt.Sprintf("%.2f..%.2f", clo, chi), fmt.Sprint(len(cached))})
	}
	benchTable(b, "era kernels: build time, seconds (linux-source-6.1, i686-linux-gnu-gcc)",
		"KERNEL\tFRAGMENTS\tNOTABLE\tCOLD (RECORDED WHEN BUILT, make -j2)\tCACHED MEDIAN\tRANGE\tN", rows)

	// Boot to ready.
	up := func(p images.Profile, extra ...string) *vm.State { return benchUpDown(b, p.Name, extra...) }
	type bootStats struct{ cold, bz, restored float64 }
	boot := map[string]bootStats{}
	rows = nil
	row := func(p images.Profile, how string, xs, atInit []float64) float64 {
		m, lo, hi := benchStats(xs)
		init := ""
		if atInit != nil {
			im, _, _ := benchStats(atInit)
			init = fmt.Sprintf("%.2f", im)
		}
		rows = append(rows, []string{p.Name, p.Kernel, how, fmt.Sprintf("%.2f", m), fmt.Sprintf("%.2f..%.2f", lo, hi), init, fmt.Sprint(len(xs))})
		return m
	}
	for _, p := range all {
		if _, done := boot[p.Name]; done {
			continue
		}
		up(p) // makes the snapshot if there is none
		k, err := envCache(b).LoadKernel(p.Kernel)
		if err != nil {
			b.Fatal(err)
		}
		var cold, coldInit, bz, bzInit, restored []float64
		for i := 0; i < boots; i++ {
			st := up(p, "--cold")
			cold, coldInit = append(cold, st.BootSeconds), append(coldInit, st.Guest.UptimeAtInit)
			if k.PVH != "" {
				if st.KernelEntry != images.EntryPVH {
					b.Fatalf("%s: entry %q, want pvh", p.Name, st.KernelEntry)
				}
				st = up(p, "--cold", "--bzimage")
				if st.KernelEntry != images.EntryBzImage {
					b.Fatalf("%s --bzimage: entry %q", p.Name, st.KernelEntry)
				}
				bz, bzInit = append(bz, st.BootSeconds), append(bzInit, st.Guest.UptimeAtInit)
			}
			st = up(p)
			if st.Boot != "restored from snapshot" {
				b.Fatalf("%s: boot %q, want a restore", p.Name, st.Boot)
			}
			restored = append(restored, st.BootSeconds)
		}
		var s bootStats
		if k.PVH != "" {
			s.cold = row(p, "cold, pvh vmlinux", cold, coldInit)
			s.bz = row(p, "cold, bzImage", bz, bzInit)
		} else {
			s.cold = row(p, "cold, bzImage", cold, coldInit)
		}
		s.restored = row(p, "restored", restored, nil)
		boot[p.Name] = s
	}
	for _, pr := range eraPairs {
		e, d := boot[pr[0]], boot[pr[1]]
		rows = append(rows, []string{pr[0] + " / " + pr[1], "", "cold (era pvh / Debian)", fmt.Sprintf("%.2fx", e.cold/d.cold), "", "", ""})
		rows = append(rows, []string{pr[0], "", "cold pvh / cold bzImage", fmt.Sprintf("%.2fx", e.cold/e.bz), "", "", ""})
	}
	benchTable(b, fmt.Sprintf("boot to ready under TCG, seconds (%d boots of each kind per profile, interleaved)", boots),
		"PROFILE\tKERNEL\tBOOT\tMEDIAN\tRANGE\tUPTIME AT /init\tN", rows)

	// forktime on each kernel of a pair, one after the other.
	var fails benchFails
	med := map[string]map[string]float64{}
	rows = nil
	for _, p := range all {
		rs, _ := benchRuns(b, &fails, 1, "forkbench", "--profile", p.Name, "-e", "forktime", "--repeat", fmt.Sprint(repeat))
		med[p.Name] = map[string]float64{}
		for _, metric := range []string{"fork_wait_us", "thread_create_join_us"} {
			xs := sampleValues(rs[0].Samples, metric)
			if len(xs) == 0 {
				b.Fatalf("%s: no %s samples", p.Name, metric)
			}
			m, lo, hi := benchStats(xs)
			med[p.Name][metric] = m
			rows = append(rows, []string{p.Name, p.Kernel, metric, fmt.Sprintf("%.1f", m), fmt.Sprintf("%.1f..%.1f", lo, hi), fmt.Sprint(len(xs))})
		}
		rows = append(rows, []string{p.Name, p.Kernel, "fork / thread", fmt.Sprintf("%.2f", med[p.Name]["fork_wait_us"]/med[p.Name]["thread_create_join_us"]), "", ""})
	}
	for _, pr := range eraPairs {
		for _, metric := range []string{"fork_wait_us", "thread_create_join_us"} {
			rows = append(rows, []string{pr[0] + " / " + pr[1], "", metric, fmt.Sprintf("%.2fx", med[pr[0]][metric]/med[pr[1]][metric]), "", ""})
		}
	}
	benchTable(b, fmt.Sprintf("forktime (default n) under TCG, host clock, µs per call: era kernels and Debian's 686 kernel, %d repeats each, one profile after the other%s", repeat, fails.note()),
		"PROFILE\tKERNEL\tMETRIC\tMEDIAN\tRANGE\tN", rows)
	c := boot["celeron-2.4-era"]
	benchMetrics(b, "era_cold_boot_s", []float64{c.cold}, "era_bzimage_cold_boot_s", []float64{c.bz}, "debian_cold_boot_s", []float64{boot["celeron-2.4"].cold})
	fails.check(b)
}
