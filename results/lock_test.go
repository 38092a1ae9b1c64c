package results_test

import (
	"strings"
	"testing"

	"lab/results"
)

// TestLockDir: one writer per output directory (issue 31: two lab
// reproduce into one --out ran the same cell twice at once): a second
// taker is refused, naming the first's command and pid; after release it
// gets the lock.
func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	release, err := results.LockDir(dir, "lab reproduce all --out x")
	if err != nil {
		t.Fatal(err)
	}
	_, err = results.LockDir(dir, "lab matrix m.yaml --out x")
	if err == nil || !strings.Contains(err.Error(), "in use by `lab reproduce all --out x` (pid ") || !strings.Contains(err.Error(), "give another --out") {
		t.Fatalf("second LockDir = %v, want refused naming the first", err)
	}
	release()
	again, err := results.LockDir(dir, "lab matrix m.yaml --out x")
	if err != nil {
		t.Fatalf("LockDir after release: %v", err)
	}
	again()
}
