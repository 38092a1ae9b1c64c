package images

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Era kernels are built the first time a profile needs one, not ahead:
// `make demo` boots only celeron-2.4 (Debian's kernel, fetched), and
// building the four era kernels first made it a quarter of an hour on a
// fresh machine. `make setup-all` (`lab image build --profiles`) still
// builds them all ahead, as `make test` needs.

// BuildNice is the niceness of a kernel built on first use, as `make
// era-kernels` runs `lab image build`: minutes of two compilers must not
// starve the guests and tests sharing the host.
const BuildNice = 19

// defaultBuildTime is what a kernel build takes when the cache has none
// recorded: measured on the idle 2-core development host (BenchmarkEraKernel,
// docs/measurements.md "Era kernels": 403-440 s a kernel, the source's
// unpacking included).
const defaultBuildTime = 7 * time.Minute

// defaultUpstreamBuildTime is the same for an upstream 2.6.32 kernel:
// 138-168 s a kernel on the busy 2-core development host, unpacking and
// patching included (docs/measurements.md "Linux 2.6.32").
const defaultUpstreamBuildTime = 3 * time.Minute

// BuildTime is how long a kernel build is expected to take.
type BuildTime struct {
	Typical time.Duration
	// Local says Typical is this machine's own figure (from builds
	// recorded in its cache).
	Local bool
	// Source says where Typical comes from.
	Source string
}

// NeedsBuild says whether kernel id is built on first use: lab has a
// recipe for it (Recipes) and the cache has no kernel of that id. Fetched
// and imported kernels never are.
func (c Cache) NeedsBuild(id string) bool {
	if _, ok := Recipes[id]; !ok || !idRE.MatchString(id) {
		return false
	}
	_, err := os.Stat(c.kernelManifest(id))
	return errors.Is(err, fs.ErrNotExist)
}

// BuildEstimate is how long building a kernel should take here: the
// median of the builds of its kind (upstream: from an upstream release,
// else from Debian's 6.1 source) recorded in the cache (this machine's
// figure), else the figure measured for that kind.
func (c Cache) BuildEstimate(upstream bool) BuildTime {
	paths, _ := filepath.Glob(filepath.Join(string(c), "builds", "*.json"))
	var secs []float64
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var b Build
		if json.Unmarshal(data, &b) == nil && (b.Source.Tree != "") == upstream {
			secs = append(secs, b.Seconds)
		}
	}
	if len(secs) == 0 && upstream {
		return BuildTime{Typical: defaultUpstreamBuildTime, Source: "measured on a busy 2-core host: 138-168 s a kernel, docs/measurements.md"}
	}
	return buildEstimate(secs)
}

// buildEstimate is the median of the recorded build times in seconds
// (those under a minute are not builds from scratch and are left out),
// else defaultBuildTime.
func buildEstimate(recorded []float64) BuildTime {
	var s []float64
	for _, x := range recorded {
		if x >= 60 {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return BuildTime{Typical: defaultBuildTime, Source: "measured on an idle 2-core host: 403-440 s a kernel, docs/measurements.md"}
	}
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + m) / 2
	}
	src := "the build recorded in this cache"
	if len(s) > 1 {
		src = fmt.Sprintf("the median of %d builds recorded in this cache", len(s))
	}
	return BuildTime{Typical: time.Duration(m * float64(time.Second)), Local: true, Source: src}
}

// lazyBuildMessage is the note a first-use build starts with; haveSource
// says the kernel source package is already in the cache.
func lazyBuildMessage(id, profile string, est BuildTime, haveSource bool) string {
	mins := int(est.Typical.Round(time.Minute) / time.Minute)
	if mins < 1 {
		mins = 1
	}
	where := "on this machine"
	if !est.Local {
		where = "on a 2-core host"
	}
	fetch := ""
	if !haveSource {
		fetch = " plus downloading the kernel source once"
	}
	return fmt.Sprintf("building kernel %s for profile %s: first time only, about %d min %s%s (%s; niced; Ctrl-C stops it, `make setup-all` builds every era kernel ahead)",
		id, profile, mins, where, fetch, est.Source)
}

// EnsureKernel loads kernel id for profile; a kernel lab builds that is
// not in the cache yet (NeedsBuild) is built first, as `lab image build
// id` would (niced, BuildNice), with a note and the build's progress on
// log, and a line a minute while the compilers run. Any other missing
// kernel is LoadKernel's error.
func (c Cache) EnsureKernel(ctx context.Context, id, profile string, src SourceOptions, log io.Writer) (*Kernel, error) {
	if !c.NeedsBuild(id) {
		return c.LoadKernel(id)
	}
	if log == nil {
		log = io.Discard
	}
	lw := &lockedWriter{w: log}
	est := c.BuildEstimate(Recipes[id].Upstream != "")
	_, err := c.cachedSourceKey(Recipes[id])
	fmt.Fprintln(lw, lazyBuildMessage(id, profile, est, err == nil))
	o, err := BuildOptions{ID: id, Log: lw, Nice: BuildNice, Source: src}.WithRecipe()
	if err != nil {
		return nil, err
	}
	stop := heartbeat(lw, id, est.Typical, time.Minute)
	_, _, _, err = c.BuildKernel(ctx, o)
	stop()
	if err != nil {
		return nil, fmt.Errorf("profile %s boots kernel %s, which is built the first time it is needed, and building it failed: %w", profile, id, err)
	}
	return c.LoadKernel(id)
}

// heartbeat writes a line to w every interval until stopped, so a build
// of minutes does not look hung.
func heartbeat(w io.Writer, id string, typical, interval time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				fmt.Fprintf(w, "kernel %s: still building, %d min so far (about %d expected)\n", id,
					int(now.Sub(start).Round(time.Minute)/time.Minute), int(typical.Round(time.Minute)/time.Minute))
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// lockedWriter serialises writes from the build and the heartbeat, so
// each line reaches a line-splitting writer whole.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
