package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"lab/engine"
	"lab/internal/labtest"
	"lab/results/matrix"
)

// actionlintModule is the linter the example workflow is checked with.
const actionlintModule = "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"

func exampleFile(t *testing.T, rel string) (string, []byte) {
	t.Helper()
	root, err := labtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "examples", "ci", rel)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, b
}

// TestExampleMatrix: the nightly matrix shipped in examples/ci parses and
// every cell is one lab run would accept (plugins, experiments,
// parameters, profiles, clocks), and its four shards partition it.
func TestExampleMatrix(t *testing.T) {
	cliEnv(t)
	_, data := exampleFile(t, "nightly.yaml")
	spec, cells, err := matrix.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Clock != "icount:0" || len(cells) < 10 {
		t.Errorf("nightly matrix: clock %q, %d cells", spec.Clock, len(cells))
	}
	// Its host-clock half: the claims icount cannot decide.
	_, hostData := exampleFile(t, "nightly-host.yaml")
	hostSpec, hostCells, err := matrix.Parse(hostData)
	if err != nil {
		t.Fatal(err)
	}
	if hostSpec.Clock != "host" || hostSpec.Parallel != 1 || len(hostCells) == 0 {
		t.Errorf("nightly-host matrix: clock %q, parallel %d, %d cells", hostSpec.Clock, hostSpec.Parallel, len(hostCells))
	}
	for _, c := range append(slices.Clone(cells), hostCells...) {
		req, err := engine.CellRequest(c, t.TempDir(), nil, nil, testRoots(t).engine())
		if err == nil {
			_, err = engine.NewPlan(req)
		}
		if err != nil {
			t.Errorf("cell %s: %v", c.ID, err)
		}
	}
	n := 0
	for i := 1; i <= 4; i++ {
		n += len(matrix.Shard{I: i, N: 4}.Of(cells))
	}
	if n != len(cells) {
		t.Errorf("4 shards hold %d cells of %d", n, len(cells))
	}
}

// TestExampleWorkflowLints checks the example GitHub Actions workflow
// with actionlint (a Go program, installed here from the module proxy).
func TestExampleWorkflowLints(t *testing.T) {
	path, data := exampleFile(t, filepath.Join("github", "nightly.yml"))
	gobin := t.TempDir()
	install := exec.Command("go", "install", actionlintModule)
	install.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		labtest.Unavailable(t, "go install %s: %v\n%s", actionlintModule, err, out)
	}
	lint := exec.Command(filepath.Join(gobin, "actionlint"), "-no-color", path)
	if out, err := lint.CombinedOutput(); err != nil {
		t.Errorf("actionlint %s: %v\n%s", path, err, out)
	}
	// What the workflow must do, beyond being valid.
	for _, s := range []string{"--shard \"${{ matrix.shard }}/4\"", "name: lab-shard-${{ matrix.shard }}", "pattern: lab-shard-*",
		"lab results merge", "lab report", "needs: shard", "examples/ci/nightly.yaml",
		// The history: restored, tonight added, saved, gated on.
		"actions/cache/restore@", "restore-keys: lab-nights-", "cp -r nightly \"nights/", "actions/cache/save@",
		"lab history nights --fail-on-change"} {
		if !strings.Contains(string(data), strings.TrimPrefix(s, "lab ")) {
			t.Errorf("the example workflow lacks %q", s)
		}
	}
}

// TestExampleKubernetesJob: the Indexed Job runs shard
// JOB_COMPLETION_INDEX+1 of as many shards as it has completions, into a
// shared volume, and the merge job joins them.
func TestExampleKubernetesJob(t *testing.T) {
	type container struct {
		Command      []string `yaml:"command"`
		Args         []string `yaml:"args"`
		VolumeMounts []struct {
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	type job struct {
		Kind string `yaml:"kind"`
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Parallelism    int    `yaml:"parallelism"`
			Template       struct {
				Spec struct {
					RestartPolicy string      `yaml:"restartPolicy"`
					Containers    []container `yaml:"containers"`
					Volumes       []struct {
						PVC *struct {
							ClaimName string `yaml:"claimName"`
						} `yaml:"persistentVolumeClaim"`
					} `yaml:"volumes"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	read := func(name string) job {
		_, data := exampleFile(t, filepath.Join("kubernetes", name))
		var j job
		if err := yaml.Unmarshal(data, &j); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if j.Kind != "Job" || len(j.Spec.Template.Spec.Containers) != 1 || len(j.Spec.Template.Spec.Volumes) != 1 ||
			j.Spec.Template.Spec.Volumes[0].PVC == nil || j.Spec.Template.Spec.RestartPolicy != "Never" {
			t.Fatalf("%s: not a one-container Job with a shared volume: %+v", name, j)
		}
		return j
	}
	shards := read("nightly-job.yaml")
	s := shards.Spec
	if s.CompletionMode != "Indexed" || s.Completions != 4 || s.Parallelism != 4 {
		t.Errorf("shard job: completionMode %q completions %d parallelism %d", s.CompletionMode, s.Completions, s.Parallelism)
	}
	args := strings.Join(s.Template.Spec.Containers[0].Args, " ")
	for _, want := range []string{"bin/lab matrix examples/ci/nightly.yaml", `--shard "$((JOB_COMPLETION_INDEX + 1))/4"`, "--out \"/results/"} {
		if !strings.Contains(args, want) {
			t.Errorf("shard job's command %q lacks %q", args, want)
		}
	}
	merge := read("nightly-merge-job.yaml")
	margs := strings.Join(merge.Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.Contains(margs, "bin/lab results merge") || !strings.Contains(margs, "shard-*") || !strings.Contains(margs, "bin/lab report") {
		t.Errorf("merge job's command %q does not merge the shards and report", margs)
	}
	// The history on the shared volume: tonight merged into it, gated on.
	for _, want := range []string{`--out "/results/nights/$date"`, "bin/lab history /results/nights --fail-on-change"} {
		if !strings.Contains(margs, want) {
			t.Errorf("merge job's command %q lacks %q", margs, want)
		}
	}
	if merge.Spec.Template.Spec.Volumes[0].PVC.ClaimName != s.Template.Spec.Volumes[0].PVC.ClaimName {
		t.Error("the merge job does not mount the shards' volume")
	}
}

// TestNightlyIsTheClaims: the nightly matrices are what the claims'
// scopes plan (lab reproduce all --variants --dry-run --matrix CLOCK), so
// a claim added to a plugin is in tonight's matrix, and a hand edit or a
// changed scope fails here until the file is made again.
func TestNightlyIsTheClaims(t *testing.T) {
	cliEnv(t)
	for clock, file := range map[string]string{"icount": "nightly.yaml", "host": "nightly-host.yaml"} {
		_, want := exampleFile(t, file)
		r := cliRun(t, "reproduce", "all", "--variants", "--dry-run", "--matrix", clock, "--out", t.TempDir())
		if r.code != 0 {
			t.Fatalf("lab reproduce all --variants --dry-run --matrix %s: exit %d: %s", clock, r.code, r.stderr)
		}
		if r.stdout != string(want) {
			t.Errorf("examples/ci/%s drifted from the claims; make it again with\n  bin/lab reproduce all --variants --dry-run --matrix %s > examples/ci/%s\ngenerated:\n%s",
				file, clock, file, r.stdout)
		}
	}
}
