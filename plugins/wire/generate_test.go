package wire

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"lab/internal/labtest"
)

// TestGeneratedCodeIsCurrent regenerates the Go code from benchmark.proto
// into a temporary directory, with the generators pinned in the Makefile's
// proto target, and fails if the committed code differs: run `make proto`.
// protoc comes from Debian's protobuf-compiler (scripts/setup-deps.sh).
func TestGeneratedCodeIsCurrent(t *testing.T) {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		labtest.Unavailable(t, "protoc not installed (apt-get install protobuf-compiler, or make deps): %v", err)
	}
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	gobin := t.TempDir()
	for _, v := range []string{"PROTOC_GEN_GO", "PROTOC_GEN_GO_GRPC"} {
		m := regexp.MustCompile(`(?m)^` + v + `\s*=\s*(\S+@\S+)$`).FindSubmatch(mk)
		if m == nil {
			t.Fatalf("Makefile sets no %s = MODULE@VERSION", v)
		}
		install := exec.Command("go", "install", string(m[1]))
		install.Env = append(os.Environ(), "GOBIN="+gobin)
		if out, err := install.CombinedOutput(); err != nil {
			labtest.Unavailable(t, "go install %s: %v\n%s", m[1], err, out)
		}
	}
	out := t.TempDir()
	gen := exec.Command(protoc, "-I", ".",
		"--go_out="+out, "--go_opt=paths=source_relative",
		"--go-grpc_out="+out, "--go-grpc_opt=paths=source_relative",
		"benchmark.proto")
	gen.Env = append(os.Environ(), "PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if msg, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, msg)
	}
	for _, f := range []string{"benchmark.pb.go", "benchmark_grpc.pb.go"} {
		want, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what benchmark.proto generates; run `make proto` and commit the result", f)
		}
	}
}
