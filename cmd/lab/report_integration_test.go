package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"lab/internal/labtest"
	"lab/results"
	rclaims "lab/results/claims"
)

// TestIntegrationReport makes real runs in a celeron-2.4 guest
// (forkbench forktime, a threadbench hello sweep, printfbench's targets),
// puts a corrupt file beside them, runs `bin/lab report` on the store and
// renders the page in a real browser (headless Chromium, Debian's
// chromium package): the screenshot must not be blank and the page must
// log nothing to the console; the DOM the browser parsed must hold the
// plots, every run used and every claim with the verdict `lab claims`
// gives it. The same for a store with no runs. First the browser check
// itself is shown able to fail: a page that throws, and a blank page.
func TestIntegrationReport(t *testing.T) {
	const profile = "celeron-2.4"
	itBootEnv(t, itProfile(t, profile))
	chromium := itChromium(t)
	labBin := filepath.Join(labtest.LibDir(), "lab")
	if _, err := os.Stat(labBin); err != nil {
		labtest.Unavailable(t, "%s missing: run `make build`", labBin)
	}

	t.Run("the browser check can fail", func(t *testing.T) {
		dir := t.TempDir()
		bad := filepath.Join(dir, "bad.html")
		writeTestFile(t, bad, `<!DOCTYPE html><html><head><meta charset="utf-8"><title>bad</title></head><body><h1>bad</h1>`+
			`<script>console.error("logged error"); throw new Error("thrown here");</script></body></html>`)
		b := itRender(t, chromium, bad)
		if len(b.console) < 2 || !strings.Contains(strings.Join(b.console, "\n"), "Uncaught Error: thrown here") {
			t.Errorf("a page that logs an error and throws: console lines %q, want both seen", b.console)
		}
		blank := filepath.Join(dir, "blank.html")
		writeTestFile(t, blank, `<!DOCTYPE html><html><head><meta charset="utf-8"><title>blank</title></head><body></body></html>`)
		b = itRender(t, chromium, blank)
		if all, _ := itInk(t, b.png); all > 0.001 {
			t.Errorf("a blank page: %.2f%% of its pixels are not white, want none", 100*all)
		}
	})

	itUp(t, profile, "rep")
	dir := itResultsDir(t)
	fork, _ := itRunJSON(t, 0, "forkbench", "--vm", "rep", "-e", "forktime", "-p", "n=100", "--repeat", "4")
	tb, _ := itRunJSON(t, 0, "threadbench", "--vm", "rep", "-e", "hello", "-p", "workers=8", "--sweep", "count=5,20", "--repeat", "2")
	pf, _ := itRunJSON(t, 0, "printfbench", "--vm", "rep", "-p", "lines=100", "--repeat", "2")
	const broken = "20261201T000000.000000Z-forkbench-forktime-broken.json"
	writeTestFile(t, filepath.Join(dir, broken), `{"id": "20261201T000000.000000Z-forkbench-forktime-bro`)

	// The verdicts `lab claims` gives, which the report must show.
	r := itMust(t, itCallTimeout, nil, "claims", "--json", "--results", dir)
	var sts []rclaims.ClaimStatus
	if err := json.Unmarshal([]byte(r.stdout), &sts); err != nil || len(sts) == 0 {
		t.Fatalf("lab claims --json: %v\n%s", err, r.stdout)
	}

	// The guest busy while the browser renders: a host loaded by TCG.
	busy, _, busyErr, busyDone := itStartLab(t, labBin, "exec", "rep", "--", "sh", "-c", "while :; do :; done")
	t.Cleanup(func() { itStopBusy(t, busy, busyDone, busyErr) })

	out := t.TempDir()
	page, stderr := itReport(t, labBin, "--out", out, "--results", dir)
	if want := filepath.Join(out, "index.html"); page != want {
		t.Errorf("lab report printed %q, want %q", page, want)
	}
	if !strings.Contains(stderr, broken) {
		t.Errorf("lab report does not name the corrupt result file %s on stderr:\n%s", broken, stderr)
	}
	html := itReadFile(t, page)
	for _, id := range []string{fork.ID, tb.ID, pf.ID} {
		if !strings.Contains(html, `id="run-`+id+`"`) {
			t.Errorf("the report has no provenance of run %s", id)
		}
	}
	for _, want := range []string{broken, "QEMU emulator version", "/usr/bin/qemu-system-i386", fork.Machine.KernelSHA256,
		fork.Guest.Uname, "forkbench " + fork.PluginVersion} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	itCheckClaims(t, html, sts)

	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("rendering with the guest spinning; load average %s", strings.TrimSpace(string(load)))
	b := itRender(t, chromium, page)
	itCheckPage(t, b, 2, fork.ID, tb.ID, pf.ID)

	// No runs: every claim not run but those untestable here, and how to
	// make runs.
	empty := filepath.Join(t.TempDir(), "no-store")
	out = t.TempDir()
	page, _ = itReport(t, labBin, "--out", out, "--results", empty)
	html = itReadFile(t, page)
	for i := range sts {
		// Untestable claims stay so, and so does a claim no run can
		// reproduce (E1.7: not comparable before any run).
		if sts[i].Verdict != results.Untestable && !strings.HasPrefix(sts[i].Judged.Reason, "not comparable before any run") {
			sts[i].Verdict = results.NotRun
		}
	}
	itCheckClaims(t, html, sts)
	if !strings.Contains(html, "No runs yet: how to make them") || !strings.Contains(html, "lab run forkbench -e forktime") {
		t.Errorf("the report of an empty store does not say how to make runs")
	}
	b = itRender(t, chromium, page)
	itCheckPage(t, b, 0)
}

// itChromium is the path of Debian's chromium, failing (not skipping)
// without it: `make test` installs it first, so it missing is a broken
// set-up.
func itChromium(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found: the report test renders the page in it; `make deps` (run by `make test` and `make setup`) installs Debian's chromium package")
	}
	return p
}

// itReport runs `bin/lab report ARGS` and returns the path it printed and
// its stderr.
func itReport(t *testing.T, labBin string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), itCallTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, labBin, append([]string{"report"}, args...)...)
	cmd.Env = environFor(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("lab report %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	t.Logf("lab report %s: %.2fs: %s", strings.Join(args, " "), time.Since(start).Seconds(), strings.TrimSpace(stderr.String()))
	return strings.TrimSpace(stdout.String()), stderr.String()
}

// itCheckClaims checks that the claims table of html lists every claim
// of sts with its verdict.
func itCheckClaims(t *testing.T, html string, sts []rclaims.ClaimStatus) {
	t.Helper()
	row := regexp.MustCompile(`<tr><td class="id"><a href="#claim-[^"]*">([^<]*)</a></td><td><span class="badge [a-z-]+">([^<]*)</span>`)
	got := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(html, -1) {
		got[m[1]] = m[2]
	}
	for _, s := range sts {
		if v, ok := got[s.Claim.ID]; !ok {
			t.Errorf("claim %s is not in the report's claims table", s.Claim.ID)
		} else if v != s.Verdict {
			t.Errorf("claim %s is %q in the report, %q in lab claims", s.Claim.ID, v, s.Verdict)
		}
	}
	if len(got) != len(sts) {
		t.Errorf("the report lists %d claims, lab claims %d", len(got), len(sts))
	}
}

// browserResult is what Chromium made of a page.
type browserResult struct {
	png     string
	dom     string
	console []string
}

// consoleLine is how Chromium's log (--enable-logging=stderr) reports a
// message the page logged or an uncaught exception:
// `[pid:tid:time:INFO:CONSOLE:1] "Uncaught Error: x", source: file:///...`
// (older versions log console.error as ERROR:CONSOLE(1)). The rest of
// its stderr is the browser's own (D-Bus, GPU) and says nothing about
// the page.
var consoleLine = regexp.MustCompile(`^\[[^\]]*:CONSOLE[^\]]*\]`)

// itRender renders the page at path in headless Chromium, 1280x2000:
// a screenshot, the DOM after parsing, and the console messages.
func itRender(t *testing.T, chromium, path string) browserResult {
	t.Helper()
	dir := t.TempDir()
	b := browserResult{png: filepath.Join(dir, "shot.png")}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + filepath.Join(dir, "profile"),
		"--no-first-run", "--window-size=1280,2000", "--screenshot=" + b.png, "--dump-dom",
		"--enable-logging=stderr", "--v=0", "file://" + abs}
	cmd := exec.CommandContext(ctx, chromium, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("chromium %s: %v (after %.1fs)\nstderr:\n%s", strings.Join(args, " "), err, took.Seconds(), stderr.String())
	}
	t.Logf("chromium rendered %s in %.2fs", filepath.Base(path), took.Seconds())
	b.dom = stdout.String()
	for _, l := range strings.Split(stderr.String(), "\n") {
		if consoleLine.MatchString(l) || strings.Contains(l, "Uncaught") {
			b.console = append(b.console, l)
		}
	}
	return b
}

// itCheckPage checks a rendered report: the screenshot is not blank, the
// page logged nothing, and the DOM the browser parsed holds the table of
// contents, svgs inline plots and the runs given.
func itCheckPage(t *testing.T, b browserResult, svgs int, runs ...string) {
	t.Helper()
	if len(b.console) > 0 {
		t.Errorf("the page logged to the console:\n%s", strings.Join(b.console, "\n"))
	}
	all, lower := itInk(t, b.png)
	t.Logf("screenshot %s: %.1f%% of its pixels not white, %.1f%% of its lower half", b.png, 100*all, 100*lower)
	if all < 0.03 || lower < 0.01 {
		t.Errorf("the screenshot is blank or nearly: %.2f%% of its pixels are not white (%.2f%% of the lower half), want 3%% (1%%) or more", 100*all, 100*lower)
	}
	if !strings.Contains(b.dom, `<nav id="toc">`) || !strings.Contains(b.dom, "</html>") {
		t.Errorf("the DOM Chromium parsed lacks the table of contents:\n%.2000s", b.dom)
	}
	if n := strings.Count(b.dom, "<svg"); n != svgs {
		t.Errorf("the DOM Chromium parsed has %d <svg> plots, want %d", n, svgs)
	}
	for _, id := range runs {
		if !strings.Contains(b.dom, `id="run-`+id+`"`) {
			t.Errorf("the DOM Chromium parsed has no run %s", id)
		}
	}
	// Nothing the browser would fetch: links are to the page itself.
	for _, m := range regexp.MustCompile(`(?i)\s(href|src|srcset|xlink:href)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(b.dom, -1) {
		if strings.ToLower(m[1]) != "href" || !strings.HasPrefix(m[2], "#") {
			t.Errorf("the page refers outside itself: %s", m[0])
		}
	}
}

// itInk decodes the PNG at path and returns the fraction of its pixels
// that are not white, over the whole image and over its lower half.
func itInk(t *testing.T, path string) (all, lower float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	bounds := img.Bounds()
	if bounds.Dx() != 1280 || bounds.Dy() != 2000 {
		t.Errorf("screenshot is %dx%d, want 1280x2000", bounds.Dx(), bounds.Dy())
	}
	count := func(r image.Rectangle) float64 {
		n := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				cr, cg, cb, _ := img.At(x, y).RGBA()
				if cr < 0xf000 || cg < 0xf000 || cb < 0xf000 {
					n++
				}
			}
		}
		return float64(n) / float64(r.Dx()*r.Dy())
	}
	half := bounds
	half.Min.Y = bounds.Min.Y + bounds.Dy()/2
	return count(bounds), count(half)
}

// itStopBusy ends the busy loop in the guest: SIGINT to lab exec, which
// forwards it.
func itStopBusy(t *testing.T, cmd *exec.Cmd, done <-chan error, stderr *labtest.SyncBuffer) {
	t.Helper()
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Errorf("lab exec of the busy loop still running 30 s after SIGINT\n%s", stderr.String())
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func itReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
