package host

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"lab/internal/labtest"
)

// labhWorkload is a user's workload built on lab.h: every helper the
// built-in workloads share, with the messages they promise.
const labhWorkload = `#define _GNU_SOURCE
#include <lab.h>

int main(int argc, char **argv)
{
	struct timeval tv = {.tv_sec = 1, .tv_usec = 500000};
	prog = "labh";
	if (argc != 2) {
		fprintf(stderr, "usage: labh N\n");
		return 2;
	}
	long n = parse_long("N", argv[1], 1, 10);
	double t0 = now();
	if (n == 7)
		die("open seven", ENOENT);
	printf("n %ld\n", n);
	printf("tv_s %.1f s\n", tv_s(tv));
	printf("real_s %.6f s\n", now() - t0);
	return finish(stdout);
}
`

// tempPlugin writes a plugin directory NAME whose Go program does
// nothing (Build only builds it) and whose workloads are srcs
// (file name: C source).
func tempPlugin(t *testing.T, name string, srcs map[string]string) string {
	t.Helper()
	for _, b := range ArchBuilds {
		if _, err := exec.LookPath(b.CC); err != nil {
			labtest.Unavailable(t, "%s (the %s workload compiler) not installed: %v", b.CC, b.Arch, err)
		}
	}
	dir := filepath.Join(t.TempDir(), name)
	files := map[string]string{
		"go.mod":  "module example.com/" + name + "\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() {}\n",
		"description.json": `{"name": "` + name + `", "version": "0.1.0", "experiments": [{"name": "e",
			"metrics": [{"name": "n", "unit": "1"}]}]}`,
	}
	for f, src := range srcs {
		files[filepath.Join("workload", f)] = src
	}
	for f, body := range files {
		path := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func buildTempPlugin(t *testing.T, dir string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	return Build(ctx, dir, t.TempDir(), &stderr)
}

// TestPluginBuildLabH: a plugin outside lab's tree includes <lab.h>, which
// `lab plugin build` supplies, and its helpers behave as documented.
func TestPluginBuildLabH(t *testing.T) {
	out, err := buildTempPlugin(t, tempPlugin(t, "labhtest", map[string]string{"labh.c": labhWorkload}))
	if err != nil {
		t.Fatalf("lab plugin build of a workload including <lab.h>: %v", err)
	}
	for _, b := range ArchBuilds {
		if _, err := os.Stat(filepath.Join(out, b.Arch, "workload", "labh")); err != nil {
			t.Errorf("no %s build of the workload: %v", b.Arch, err)
		}
	}
	if runtime.GOARCH != "amd64" || runtime.GOOS != "linux" {
		t.Skipf("the x86_64 build does not run on %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	exe := filepath.Join(out, "x86_64", "workload", "labh")
	tests := []struct {
		arg        string
		wantCode   int
		wantStdout []string
		wantStderr string
	}{
		{"3", 0, []string{"n 3\n", "tv_s 1.5 s\n", "real_s ", "libc glibc-"}, ""},
		{"0", 2, nil, "labh: bad N 0; want an integer in 1..10\n"},
		{"11", 2, nil, "labh: bad N 11; want an integer in 1..10\n"},
		{"2x", 2, nil, "labh: bad N 2x; want an integer in 1..10\n"},
		{"", 2, nil, "labh: bad N ; want an integer in 1..10\n"},
		{"7", 1, nil, "labh: open seven: No such file or directory\n"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(exe, tt.arg)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("labh %q: %v", tt.arg, err)
		}
		if code != tt.wantCode || stderr.String() != tt.wantStderr {
			t.Errorf("labh %q: exit %d, stderr %q; want %d, %q", tt.arg, code, stderr.String(), tt.wantCode, tt.wantStderr)
		}
		for _, s := range tt.wantStdout {
			if !strings.Contains(stdout.String(), s) {
				t.Errorf("labh %q: stdout %q, want it to contain %q", tt.arg, stdout.String(), s)
			}
		}
	}
	// finish checks what it wrote: results lost on a full disk are an error.
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(exe, "3")
	cmd.Stdout, cmd.Stderr = full, &stderr
	if err := cmd.Run(); err == nil || !strings.HasPrefix(stderr.String(), "labh: write results: ") {
		t.Errorf("labh 3 >/dev/full: %v, stderr %q; want exit 1 and labh: write results: ...", err, stderr.String())
	}
}

// TestPluginBuildWorkloadError: a workload that does not compile fails the
// build with the file, the arch and the compiler's message.
func TestPluginBuildWorkloadError(t *testing.T) {
	_, err := buildTempPlugin(t, tempPlugin(t, "badtest", map[string]string{
		"bad.c": "#include <lab.h>\n\nint main(void)\n{\n\treturn no_such_name;\n}\n",
	}))
	if err == nil {
		t.Fatal("lab plugin build of a workload that does not compile succeeded")
	}
	for _, want := range []string{"compiling workload bad.c for i386", "bad.c:5:", "no_such_name"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q, want it to contain %q", err, want)
		}
	}
}
