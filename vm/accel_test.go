package vm

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeQEMU writes an executable shell script standing in for QEMU: body runs
// with $serial set to the file named by "-serial file:PATH".
func fakeQEMU(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "qemu-fake")
	script := `#!/bin/sh
serial=
while [ $# -gt 0 ]; do
	case "$1" in
	-serial) serial="${2#file:}"; shift ;;
	esac
	shift
done
` + body + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunProbe(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		timeout time.Duration
		want    string // "" = success; else a substring of the error
	}{
		{"kernel reaches the panic", `echo "Kernel panic - not syncing: VFS: Unable to mount root fs" > "$serial"`, 5 * time.Second, ""},
		{"hangs", `exec sleep 30`, 300 * time.Millisecond, "did not finish a kernel boot within 300ms (hung)"},
		{"qemu fails", `echo "qemu: could not open kernel" >&2; echo second line >&2; exit 1`, 5 * time.Second, "qemu: could not open kernel"},
		{"stops early", `echo "Booting the kernel." > "$serial"`, 5 * time.Second, "stopped before the end of its boot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qemu := fakeQEMU(t, tt.body)
			err := RunProbe(context.Background(), qemu, "kvm", "/nonexistent/vmlinuz", tt.timeout)
			if tt.want == "" {
				if err != nil {
					t.Errorf("RunProbe = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("RunProbe = %v, want an error containing %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "second line") {
				t.Errorf("RunProbe = %q, want only the first line of QEMU's output", err)
			}
		})
	}
}

func TestChooseAccelExplicit(t *testing.T) {
	tests := []struct {
		want      string
		wantAccel string
		wantErr   string
	}{
		{"tcg", "tcg", ""},
		{"xen", "", `--accel "xen": want auto, kvm or tcg`},
		{"TCG", "", `--accel "TCG"`},
	}
	for _, tt := range tests {
		// The qemu path does not exist: these must not run a probe.
		accel, note, err := ChooseAccel(context.Background(), tt.want, "/nonexistent/qemu", "/nonexistent/vmlinuz", t.TempDir())
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ChooseAccel(%q) = %q, %v; want an error containing %q", tt.want, accel, err, tt.wantErr)
			}
			continue
		}
		if err != nil || accel != tt.wantAccel || note != "" {
			t.Errorf("ChooseAccel(%q) = %q, %q, %v; want %q, \"\", nil", tt.want, accel, note, err, tt.wantAccel)
		}
	}
}

func TestChooseAccelCachedVerdict(t *testing.T) {
	if bootID() == "" {
		t.Skip("no /proc/sys/kernel/random/boot_id on this host")
	}
	tests := []struct {
		kvm  bool
		want string
	}{{true, "kvm"}, {false, "tcg"}}
	for _, tt := range tests {
		dir := t.TempDir()
		v := KVMProbe{BootID: bootID(), KVM: tt.kvm, Reason: "test", When: time.Now()}
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(dir, "accel.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		// A cached verdict for this boot is used without probing: the qemu
		// path does not exist.
		for _, want := range []string{"auto", ""} {
			accel, note, err := ChooseAccel(context.Background(), want, "/nonexistent/qemu", "/nonexistent/vmlinuz", dir)
			if err != nil || accel != tt.want || note != "" {
				t.Errorf("ChooseAccel(%q) with cached KVM=%v = %q, %q, %v; want %q, \"\", nil", want, tt.kvm, accel, note, err, tt.want)
			}
		}
	}
}

func TestChooseAccelFallsBackAndCaches(t *testing.T) {
	dir := t.TempDir()
	// A verdict from another boot of the host is not trusted.
	old, _ := json.Marshal(KVMProbe{BootID: "another-boot", KVM: true})
	if err := os.WriteFile(filepath.Join(dir, "accel.json"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	qemu := fakeQEMU(t, `echo "failed to initialize kvm" >&2; exit 1`)
	accel, note, err := ChooseAccel(context.Background(), "auto", qemu, "/nonexistent/vmlinuz", dir)
	if err != nil || accel != "tcg" {
		t.Fatalf("ChooseAccel(auto) with a failing KVM = %q, %v; want tcg, nil", accel, err)
	}
	for _, w := range []string{"KVM unusable", "TCG"} {
		if !strings.Contains(note, w) {
			t.Errorf("note = %q, want it to contain %q", note, w)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "accel.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v KVMProbe
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if v.KVM || v.BootID != bootID() || v.Reason == "" {
		t.Errorf("cached verdict = %+v, want KVM false for boot %q with a reason", v, bootID())
	}
	// The second call uses the verdict: no probe, no note.
	accel, note, err = ChooseAccel(context.Background(), "auto", "/nonexistent/qemu", "/nonexistent/vmlinuz", dir)
	if err != nil || accel != "tcg" || note != "" {
		t.Errorf("second ChooseAccel(auto) = %q, %q, %v; want tcg, \"\", nil", accel, note, err)
	}
}

func TestChooseAccelKVMRefused(t *testing.T) {
	qemu := fakeQEMU(t, `echo "kvm: emulation failure" >&2; exit 1`)
	_, _, err := ChooseAccel(context.Background(), "kvm", qemu, "/nonexistent/vmlinuz", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "--accel kvm") || !strings.Contains(err.Error(), "use --accel tcg or auto") {
		t.Errorf("ChooseAccel(kvm) with a failing KVM = %v, want an error saying to use --accel tcg or auto", err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	for _, content := range []string{"first", "second, longer content"} {
		if err := writeFileAtomic(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Errorf("after writeFileAtomic(%q): read %q, %v", content, got, err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("mode %v, want 0600", got)
	}
	des, _ := os.ReadDir(dir)
	if len(des) != 1 {
		var names []string
		for _, de := range des {
			names = append(names, de.Name())
		}
		t.Errorf("dir holds %q, want only f.json (no temp files left)", names)
	}
}

func TestFirstLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"one", "one"},
		{"\n  one\ntwo\n", "one"},
	}
	for _, tt := range tests {
		if got := firstLine(tt.in); got != tt.want {
			t.Errorf("firstLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
