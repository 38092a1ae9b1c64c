package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"lab/vm"
)

// TestVMMachineEnded: the real machine reads why its VM ended from the
// state root, as the supervisor records it: a `lab down` mid-run is
// said, any other end (or none) is not a take-down; a VM whose state is
// gone is gone. No QEMU: only the records a supervisor leaves.
func TestVMMachineEnded(t *testing.T) {
	root := vm.Root(t.TempDir())
	h := &vm.Handle{Name: "c", Dir: root.Dir("c"), State: &vm.State{}}
	m := &vmMachine{h: h}
	if down := m.TakenDown(); down != "" {
		t.Errorf("no record: TakenDown = %q", down)
	}
	record := func(e vm.Ended) {
		t.Helper()
		dir := filepath.Join(string(root), ".ended")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(e)
		if err := os.WriteFile(filepath.Join(dir, "c.json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	record(vm.Ended{Name: "c", Cause: vm.EndDied, Reason: "qemu killed by SIGKILL", Time: time.Now()})
	if down := m.TakenDown(); down != "" {
		t.Errorf("QEMU died: TakenDown = %q, want none (it is not `lab down`)", down)
	}
	record(vm.Ended{Name: "c", Cause: vm.EndDown, Reason: "taken down by `lab down` (pid 42)", Time: time.Now()})
	if down := m.TakenDown(); down != "the VM was taken down by `lab down` (pid 42) mid-run" {
		t.Errorf("TakenDown = %q", down)
	}
	start := time.Now()
	if !m.Gone(time.Second) || time.Since(start) > 500*time.Millisecond {
		t.Errorf("no state directory: Gone took %v or said no", time.Since(start))
	}
	if m.Name() != "c" || m.State() != h.State {
		t.Error("Name and State are not the handle's")
	}
}
