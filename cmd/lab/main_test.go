package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"lab/internal/labtest"
	"lab/vm"
)

// TestMain lets the test binary stand in for bin/lab as the supervisor:
// `lab up` run in-process re-executes os.Executable() (this test binary)
// with `__supervise DIR`, and that must run the supervisor, not the tests.
func TestMain(m *testing.M) {
	if len(os.Args) >= 2 && os.Args[1] == vm.SuperviseArg {
		os.Exit(run(context.Background(), os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr))
	}
	if _, err := labtest.SetLibDir(); err != nil {
		fmt.Fprintln(os.Stderr, "lab tests: LAB_LIBDIR unset and the repository's bin/ not found:", err)
	}
	// A run a test makes without --out must not land in the user's
	// result store (the bad-handshake run did): the default store is a
	// temp dir for the whole test binary and every lab it starts.
	store, err := os.MkdirTemp("", "lab-test-results")
	if err != nil {
		fmt.Fprintln(os.Stderr, "lab tests:", err)
		os.Exit(1)
	}
	os.Setenv("LAB_RESULTS_DIR", store)
	// Every VM a test boots ends with this binary: one killed (go test's
	// timeout) leaves none running.
	os.Setenv(ownerEnv, strconv.Itoa(os.Getpid()))
	code := m.Run()
	os.RemoveAll(store)
	os.Exit(code)
}

// testRoots are the roots a command run in-process now would use: the
// test's environment (stateRoot sets $LAB_STATE_DIR).
func testRoots(t testing.TB) roots { return readRoots(getenvFor(t)) }
