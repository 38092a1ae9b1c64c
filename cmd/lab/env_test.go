package main

import (
	"os"
	"strings"
	"sync"
	"testing"

	"lab/internal/labtest"
)

// The environment a test gives lab: run takes a getenv, so no test sets
// the process's environment (t.Setenv), and tests that do not share
// files could run in parallel. A test's variables sit over its parent
// test's (a subtest sees what its test set), over the process's (what
// TestMain set for every test: the result store, LAB_LIBDIR).
var (
	envMu sync.Mutex
	envs  = map[string]map[string]string{} // test name -> variables
)

// setEnv sets k to v for t and its subtests, until t ends.
func setEnv(t testing.TB, k, v string) {
	t.Helper()
	envMu.Lock()
	defer envMu.Unlock()
	name := t.Name()
	m := envs[name]
	if m == nil {
		m = map[string]string{}
		envs[name] = m
		t.Cleanup(func() {
			envMu.Lock()
			delete(envs, name)
			envMu.Unlock()
		})
	}
	m[k] = v
}

// lookupEnv is k as t sees it: its own, its parents', else the process's.
func lookupEnv(t testing.TB, k string) (string, bool) {
	envMu.Lock()
	defer envMu.Unlock()
	for _, n := range lineage(t) {
		if v, ok := envs[n][k]; ok {
			return v, true
		}
	}
	return os.LookupEnv(k)
}

// lineage is t's name and its parents' ("A/b/c", "A/b", "A"), nearest
// first: whose variables t sees.
func lineage(t testing.TB) []string {
	var out []string
	for n := t.Name(); ; n = n[:strings.LastIndex(n, "/")] {
		out = append(out, n)
		if !strings.Contains(n, "/") {
			return out
		}
	}
}

// getenvFor is t's environment as run takes it.
func getenvFor(t testing.TB) func(string) string {
	return func(k string) string {
		v, _ := lookupEnv(t, k)
		return v
	}
}

// environFor is t's environment for a lab started as a process: the
// process's with t's (and its parents') variables set.
func environFor(t testing.TB) []string {
	keys := map[string]bool{}
	envMu.Lock()
	for _, n := range lineage(t) {
		for k := range envs[n] {
			keys[k] = true
		}
	}
	envMu.Unlock()
	var out []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !keys[k] {
			out = append(out, kv)
		}
	}
	for k := range keys {
		v, _ := lookupEnv(t, k)
		out = append(out, k+"="+v)
	}
	return out
}

// stateRoot makes t a private VM state root (labtest.TempRoot: short,
// swept on clean-up) and points lab at it.
func stateRoot(t testing.TB) string {
	t.Helper()
	dir := labtest.TempRoot(t)
	setEnv(t, "LAB_STATE_DIR", dir)
	return dir
}

// TestEnvIsTheTests: a variable a test sets reaches lab run in-process
// and as a process, and its subtests, and not the process or another
// test.
func TestEnvIsTheTests(t *testing.T) {
	const k = "LAB_TEST_ENV_PROBE"
	setEnv(t, k, "outer")
	if _, ok := os.LookupEnv(k); ok {
		t.Fatalf("setEnv set the process's %s", k)
	}
	if got := getenvFor(t)(k); got != "outer" {
		t.Errorf("getenvFor = %q, want outer", got)
	}
	t.Run("sub", func(t *testing.T) {
		if got := getenvFor(t)(k); got != "outer" {
			t.Errorf("a subtest sees %q, want its parent's outer", got)
		}
		setEnv(t, k, "inner")
		found := false
		for _, kv := range environFor(t) {
			if kv == k+"=inner" {
				found = true
			}
		}
		if !found {
			t.Errorf("environFor lacks %s=inner", k)
		}
	})
	if got := getenvFor(t)(k); got != "outer" {
		t.Errorf("after the subtest: %q, want outer", got)
	}
	if r := readRoots(getenvFor(t)); r.path != os.Getenv("PATH") {
		t.Errorf("roots' PATH %q is not the process's", r.path)
	}
}
