package vm

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRecordEnd: a VM's end is recorded with its console log beside the
// state root, read back by name, reported once if it died, forgotten by
// a new VM of the name, and records a week old are pruned.
func TestRecordEnd(t *testing.T) {
	t.Parallel()
	root := Root(t.TempDir())
	dir := root.Dir("v")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ConsoleLog), []byte("Linux version x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(string(root), endedDir, "gone.json")
	if err := os.MkdirAll(filepath.Dir(old), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	week := time.Now().Add(-8 * 24 * time.Hour)
	if err := os.Chtimes(old, week, week); err != nil {
		t.Fatal(err)
	}
	recordEnd(dir, Ended{Name: "v", Cause: EndDied, Reason: "qemu killed by SIGKILL", Time: time.Now()})
	e, err := root.ReadEnded("v")
	if err != nil || e.Cause != EndDied || e.Reason != "qemu killed by SIGKILL" {
		t.Fatalf("ReadEnded = %+v, %v", e, err)
	}
	if c := root.EndedConsole("v"); c == "" {
		t.Error("no console log kept")
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a record 8 days old survived (stat: %v)", err)
	}
	if got := root.Unreported(); len(got) != 1 || got[0].Name != "v" {
		t.Errorf("Unreported = %+v, want v once", got)
	}
	if got := root.Unreported(); len(got) != 0 {
		t.Errorf("Unreported again = %+v, want none", got)
	}
	forgetEnded(dir)
	if _, err := root.ReadEnded("v"); !os.IsNotExist(err) {
		t.Errorf("ReadEnded after forgetEnded: %v", err)
	}
}
