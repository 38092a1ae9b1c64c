// Package matrix is the nightly matrix: its spec, cells and shards, its
// state on disk, merging shards and the matrix's JUnit.
package matrix

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/render"
)

// Spec is a matrix file: entries, each profiles x experiments x
// parameter values of one plugin, with optional sweeps.
//
//	name: nightly
//	clock: icount:0
//	repeat: 4
//	cells:
//	  - plugin: forkbench
//	    experiments: [forktime, create]
//	    profiles: [celeron-2.4, p4-2.4]
//	    params: {n: [200, 2000]}
//	  - plugin: threadbench
//	    experiment: hello
//	    profiles: [celeron-2.4]
//	    sweep: {count: [5, 50, 500]}
type Spec struct {
	Name string `yaml:"name"`
	// Clock is every cell's guest clock (host, icount, icount:N); empty:
	// each profile's own.
	Clock string `yaml:"clock"`
	// Repeat is every cell's repeats; absent: what the claims in scope
	// on the cell's profile need within 5 min, else 1 (as lab run
	// without --repeat). Given, it is at least 1.
	Repeat *int `yaml:"repeat"`
	// Parallel is how many cells (VMs) run at once; 0: lab's default.
	Parallel int `yaml:"parallel"`
	// Timeout bounds each cell ("30m"); empty: one hour.
	Timeout string  `yaml:"timeout"`
	Cells   []Entry `yaml:"cells"`
}

// Entry is one line of the matrix: the cross product of its
// profiles, experiments and parameter values.
type Entry struct {
	Plugin      string   `yaml:"plugin"`
	Experiment  string   `yaml:"experiment"`
	Experiments []string `yaml:"experiments"`
	Profiles    []string `yaml:"profiles"`
	// Params: a value or a list of values per key; a list makes one cell
	// per value.
	Params map[string]listOrOne `yaml:"params"`
	// Sweep: keys swept within one cell's run (lab run --sweep).
	Sweep map[string]listOrOne `yaml:"sweep"`
	// Repeat overrides the file's repeat for these cells.
	Repeat *int `yaml:"repeat"`
	// AddTo is a run in the matrix's results whose repeats the entry's
	// one cell adds to (lab run --add-to): lab reproduce's adaptive
	// rounds write it.
	AddTo string `yaml:"add_to"`
}

// listOrOne reads `n: 200` and `n: [200, 2000]` alike.
type listOrOne []string

func (l *listOrOne) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = listOrOne{n.Value}
		return nil
	case yaml.SequenceNode:
		var out listOrOne
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: a parameter value must be a number or a string", c.Line)
			}
			out = append(out, c.Value)
		}
		*l = out
		return nil
	}
	return fmt.Errorf("line %d: want a value or a list of values", n.Line)
}

// Cell is one run of the matrix: lab run PLUGIN -e EXPERIMENT --profile
// PROFILE -p ... [--sweep ...] [--repeat N].
type Cell struct {
	// ID names the cell uniquely and stably:
	// "celeron-2.4/forkbench/forktime/n=200" (+ "/sweep:count=5,50").
	ID         string              `json:"id"`
	Plugin     string              `json:"plugin"`
	Experiment string              `json:"experiment"`
	Profile    string              `json:"profile"`
	Params     map[string]string   `json:"params,omitempty"`
	Sweep      map[string][]string `json:"sweep,omitempty"`
	// Repeat is the cell's repeats; 0: lab chooses (Spec.Repeat).
	Repeat int    `json:"repeat"`
	Clock  string `json:"clock,omitempty"`
	// AddTo is the stored run whose repeats the cell adds to (Entry.AddTo).
	AddTo string `json:"add_to,omitempty"`
}

// Args are the cell's lab run arguments (without --out and --json).
func (c Cell) Args() []string {
	args := []string{"run", c.Plugin, "--profile", c.Profile}
	if c.Repeat > 0 {
		args = append(args, "--repeat", strconv.Itoa(c.Repeat))
	}
	if c.Experiment != "" {
		args = append(args, "-e", c.Experiment)
	}
	if c.Clock != "" {
		args = append(args, "--clock", c.Clock)
	}
	for _, k := range results.SortedKeys(c.Params) {
		args = append(args, "-p", k+"="+c.Params[k])
	}
	for _, k := range slices.Sorted(maps.Keys(c.Sweep)) {
		args = append(args, "--sweep", k+"="+strings.Join(c.Sweep[k], ","))
	}
	if c.AddTo != "" {
		args = append(args, "--add-to", c.AddTo)
	}
	return args
}

// example is the smallest useful matrix file, for messages (`lab plugins`
// and `lab profiles` list the names to put in it).
const example = "  cells:\n    - plugin: PLUGIN\n      experiment: EXPERIMENT\n      profiles: [PROFILE]\n"

// unknownField is yaml.v3's message for a key KnownFields refuses.
var unknownField = regexp.MustCompile(`^(line \d+: field \S+ not found) in type (\S+)$`)

// decodeError rewrites yaml's refusal of an unknown key, which names a Go
// type ("field parms not found in type matrix.Entry"), to name the keys
// valid where it stands.
func decodeError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	where := map[string]struct {
		place string
		v     any
	}{
		reflect.TypeOf(Spec{}).String():  {"at the top of the file", Spec{}},
		reflect.TypeOf(Entry{}).String(): {"in an entry of cells", Entry{}},
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		msgs[i] = m
		sub := unknownField.FindStringSubmatch(m)
		if sub == nil {
			continue
		}
		if w, ok := where[sub[2]]; ok {
			msgs[i] = fmt.Sprintf("%s %s; the keys there are %s", sub[1], w.place, strings.Join(yamlKeys(w.v), ", "))
		}
	}
	return errors.New(strings.Join(msgs, "; "))
}

// yamlKeys are the yaml keys of struct v's fields, in order.
func yamlKeys(v any) []string {
	t := reflect.TypeOf(v)
	var keys []string
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
			keys = append(keys, k)
		}
	}
	return keys
}

// Parse reads a matrix file and expands it into cells, sorted by
// ID. It checks the file's shape; whether the plugins, experiments,
// parameters and profiles exist is for the caller (lab matrix checks
// each cell as lab run would).
func Parse(data []byte) (*Spec, []Cell, error) {
	var spec Spec
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&spec); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, errors.New("matrix file is empty: a matrix file is YAML listing cells, e.g.\n" + example + "(see lab matrix --help)")
		}
		return nil, nil, fmt.Errorf("matrix file: %w", decodeError(err))
	}
	// A repeat given is at least 1: `repeat: 0` is a mistake, not 1.
	fileRepeat := 0 // lab chooses
	if spec.Repeat != nil {
		if *spec.Repeat < 1 {
			return nil, nil, fmt.Errorf("matrix file: repeat %d: want at least 1 (leave it out for what the claims in scope need, else 1)", *spec.Repeat)
		}
		fileRepeat = *spec.Repeat
	}
	if spec.Parallel < 0 {
		return nil, nil, fmt.Errorf("matrix file: parallel %d: want 0 (lab's default) or more", spec.Parallel)
	}
	if spec.Timeout != "" {
		if _, err := time.ParseDuration(spec.Timeout); err != nil {
			return nil, nil, fmt.Errorf("matrix file: timeout %q: %w", spec.Timeout, err)
		}
	}
	if len(spec.Cells) == 0 {
		return nil, nil, errors.New("matrix file has no cells: list them under `cells:` (see lab matrix --help)")
	}
	var cells []Cell
	seen := map[string]int{}
	for i, e := range spec.Cells {
		where := fmt.Sprintf("matrix file: cells[%d]", i)
		if e.Plugin == "" {
			return nil, nil, fmt.Errorf("%s has no plugin", where)
		}
		if len(e.Profiles) == 0 {
			return nil, nil, fmt.Errorf("%s (%s) has no profiles: list them, e.g. profiles: [celeron-2.4]", where, e.Plugin)
		}
		if e.Experiment != "" && len(e.Experiments) > 0 {
			return nil, nil, fmt.Errorf("%s (%s): give experiment or experiments, not both", where, e.Plugin)
		}
		exps := e.Experiments
		if e.Experiment != "" {
			exps = []string{e.Experiment}
		}
		if len(exps) == 0 {
			exps = []string{""} // the plugin's default
		}
		if err := noValue(where, e.Plugin, "parameter", e.Params, `%s: "null"`); err != nil {
			return nil, nil, err
		}
		if err := noValue(where, e.Plugin, "sweep", e.Sweep, `%s: ["null"]`); err != nil {
			return nil, nil, err
		}
		for k := range e.Sweep {
			if _, ok := e.Params[k]; ok {
				return nil, nil, fmt.Errorf("%s (%s): %s is both a parameter and swept; give it in one place", where, e.Plugin, k)
			}
		}
		repeat := fileRepeat
		if e.Repeat != nil {
			if *e.Repeat < 1 {
				file := "what the claims in scope need, else 1"
				if fileRepeat > 0 {
					file = fmt.Sprintf("the file's %d", fileRepeat)
				}
				return nil, nil, fmt.Errorf("%s (%s): repeat %d: want at least 1 (leave it out for %s)", where, e.Plugin, *e.Repeat, file)
			}
			repeat = *e.Repeat
		}
		if e.AddTo != "" {
			if err := oneCell(e, repeat); err != nil {
				return nil, nil, fmt.Errorf("%s (%s): add_to %s adds repeats to one run: %v", where, e.Plugin, e.AddTo, err)
			}
		}
		for _, combo := range paramProduct(e.Params) {
			for _, exp := range exps {
				for _, prof := range e.Profiles {
					c := Cell{Plugin: e.Plugin, Experiment: exp, Profile: prof, Params: combo, Repeat: repeat, Clock: spec.Clock, AddTo: e.AddTo}
					if len(e.Sweep) > 0 {
						c.Sweep = map[string][]string{}
						for k, v := range e.Sweep {
							c.Sweep[k] = slices.Clone(v)
						}
					}
					c.ID = CellID(c)
					if j, dup := seen[c.ID]; dup {
						return nil, nil, fmt.Errorf("%s repeats cell %s of cells[%d]", where, c.ID, j)
					}
					seen[c.ID] = i
					cells = append(cells, c)
				}
			}
		}
	}
	slices.SortFunc(cells, func(a, b Cell) int { return strings.Compare(a.ID, b.ID) })
	return &spec, cells, nil
}

// oneCell says why entry e (at repeat) is not the one cell an add_to
// names: one experiment, one profile, a value per parameter and the
// repeats to add given.
func oneCell(e Entry, repeat int) error {
	switch {
	case len(e.Experiments) > 1:
		return errors.New("give one experiment, not a list")
	case len(e.Profiles) > 1:
		return errors.New("give one profile, not a list")
	case repeat == 0:
		return errors.New("give repeat, the number of repeats to add")
	}
	for _, k := range slices.Sorted(maps.Keys(e.Params)) {
		if len(e.Params[k]) > 1 {
			return fmt.Errorf("give %s one value, not a list", k)
		}
	}
	return nil
}

// CellID is c's ID (Cell.ID) from its other fields.
func CellID(c Cell) string {
	exp := c.Experiment
	if exp == "" {
		exp = "default"
	}
	id := c.Profile + "/" + c.Plugin + "/" + exp
	if len(c.Params) > 0 {
		id += "/" + results.FormatLabels(c.Params)
	}
	if len(c.Sweep) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(c.Sweep)) {
			parts = append(parts, k+"="+strings.Join(c.Sweep[k], ","))
		}
		id += "/sweep:" + strings.Join(parts, ";")
	}
	return strings.ReplaceAll(id, " ", ",")
}

// paramProduct is every combination of the parameters' values.
func paramProduct(params map[string]listOrOne) []map[string]string {
	out := []map[string]string{nil}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		var next []map[string]string
		for _, m := range out {
			for _, v := range params[k] {
				n := maps.Clone(m)
				if n == nil {
					n = map[string]string{}
				}
				n[k] = v
				next = append(next, n)
			}
		}
		out = next
	}
	return out
}

// noValue is the error for the first key of values (an entry's params
// or sweep, what names which) that has no value: YAML reads a bare null,
// ~ or [] as none, and the entry would make no cell. quoted shows the
// key's value quoted (a format taking the key).
func noValue(where, plugin, what string, values map[string]listOrOne, quoted string) error {
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if len(values[k]) == 0 {
			return fmt.Errorf("%s (%s): %s %s has no value (YAML reads a bare null, ~ or [] as none, and the entry would make no cell); quote a value that is the word: "+quoted,
				where, plugin, what, k, k)
		}
	}
	return nil
}

// Shard is a slice i of n (1-based) of a matrix.
type Shard struct{ I, N int }

// ParseShard reads "i/n".
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard %q: want i/n with 1 <= i <= n (e.g. 2/4: the second of four)", s)
	}
	return Shard{i, n}, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// Of is the shard's cells: every n-th of the cells sorted by ID, from
// the i-th. The shards 1/n..n/n partition the cells exactly.
func (s Shard) Of(cells []Cell) []Cell {
	if s.N <= 1 {
		return cells
	}
	var out []Cell
	for j, c := range cells {
		if j%s.N == s.I-1 {
			out = append(out, c)
		}
	}
	return out
}

// State is what lab matrix keeps in its output directory
// (matrix.json): the matrix, the shard, and each cell's runs, so that an
// interrupted matrix resumes where it stopped and shards can be merged.
type State struct {
	Name string `json:"name"`
	// SpecSHA256 is the hash of the matrix file: shards of one matrix
	// have the same.
	SpecSHA256 string `json:"spec_sha256"`
	// Shard is "i/n", "" for the whole matrix.
	Shard string `json:"shard,omitempty"`
	// Cells are the cells this run (shard) owns, sorted by ID; All is
	// the number in the whole matrix.
	Cells []CellState `json:"cells"`
	All   int         `json:"all"`
	// AllIDs are every cell of the whole matrix, for merge to check that
	// the shards cover it.
	AllIDs []string `json:"all_ids"`
}

// CellState is one cell and what became of it.
type CellState struct {
	Cell
	// Status: pending, ok, failed, expected-crash, interrupted.
	Status string `json:"status"`
	// Result is the ID of the cell's result in the store ("" if none).
	Result string `json:"result,omitempty"`
	// Attempts counts runs of the cell (a VM that died is retried once).
	Attempts int     `json:"attempts"`
	Seconds  float64 `json:"seconds,omitempty"`
	Error    string  `json:"error,omitempty"`
	Retried  string  `json:"retried,omitempty"`
}

// Done says whether the cell need not run again: it has a result that
// was not interrupted.
func (c CellState) Done() bool {
	return c.Result != "" && c.Status != results.StatusInterrupted && c.Status != "pending"
}

// StateFile is the matrix state in a matrix output directory.
const StateFile = "matrix.json"

// SpecHash is the hash a matrix file's shards share.
func SpecHash(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// LoadState reads dir's matrix state; ok is false when there is none.
func LoadState(dir string) (*State, bool, error) {
	data, err := results.ReadRegular(filepath.Join(dir, StateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, false, fmt.Errorf("matrix state %s: %w (delete it to start the matrix afresh)", filepath.Join(dir, StateFile), err)
	}
	return &s, true, nil
}

// SaveState writes the state atomically.
func SaveState(dir string, s *State) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return results.WriteAtomic(filepath.Join(dir, StateFile), append(data, '\n'))
}

// Merge joins the output directories of the shards of one matrix into
// out: their result files into one store, one state covering every cell.
// Shards of different matrices, a cell run by two shards, or a cell no
// shard ran are errors naming them; nothing is written then.
func Merge(out string, dirs []string) (*State, error) {
	if len(dirs) == 0 {
		return nil, errors.New("lab results merge needs the shards' output directories")
	}
	var merged *State
	owner := map[string]string{}
	var overlaps []string
	type file struct{ src, dst string }
	var files []file
	for _, d := range dirs {
		s, ok, err := LoadState(d)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s has no %s: is it a lab matrix output directory (--out)?", d, StateFile)
		}
		if merged == nil {
			merged = &State{Name: s.Name, SpecSHA256: s.SpecSHA256, All: s.All, AllIDs: s.AllIDs}
		} else if s.SpecSHA256 != merged.SpecSHA256 {
			return nil, fmt.Errorf("%s ran another matrix file (%s, sha256 %.12s) than %s (%s, sha256 %.12s); merge the shards of one matrix", d, s.Name, s.SpecSHA256, dirs[0], merged.Name, merged.SpecSHA256)
		}
		for _, c := range s.Cells {
			if prev, dup := owner[c.ID]; dup {
				overlaps = append(overlaps, fmt.Sprintf("%s (in %s and %s)", c.ID, prev, d))
				continue
			}
			owner[c.ID] = d
			merged.Cells = append(merged.Cells, c)
			if c.Result != "" {
				files = append(files, file{filepath.Join(results.StoreDir(d), c.Result+ext), filepath.Join(results.StoreDir(out), c.Result+ext)})
			}
		}
	}
	if len(overlaps) > 0 {
		return nil, fmt.Errorf("%d cell(s) run by more than one shard: %s", len(overlaps), strings.Join(overlaps, "; "))
	}
	var missing []string
	for _, id := range merged.AllIDs {
		if _, ok := owner[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%d cell(s) of matrix %s in no shard: %s (run the missing shards)", len(missing), merged.Name, strings.Join(missing, ", "))
	}
	for _, f := range files {
		if _, err := os.Stat(f.src); err != nil {
			return nil, fmt.Errorf("cell result %s is missing: %w", f.src, err)
		}
	}
	if err := os.MkdirAll(results.StoreDir(out), 0o700); err != nil {
		return nil, err
	}
	for _, f := range files {
		data, err := results.ReadRegular(f.src)
		if err != nil {
			return nil, fmt.Errorf("cell result %w", err)
		}
		if err := results.WriteAtomic(f.dst, data); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(merged.Cells, func(a, b CellState) int { return strings.Compare(a.ID, b.ID) })
	if err := SaveState(out, merged); err != nil {
		return nil, err
	}
	return merged, nil
}

// sameCell says whether b is a run of the same cell as r: plugin,
// experiment, profile, clock and parameters.
func sameCell(r, b *results.Result) bool {
	return r.Plugin == b.Plugin && r.Experiment == b.Experiment && results.ProfileName(r.Machine) == results.ProfileName(b.Machine) &&
		r.Machine.Clock == b.Machine.Clock && maps.Equal(r.Parameters, b.Parameters)
}

// Regressed lists the claims r's run did not reproduce that the newest
// run of the same cell in baseline (newest first) reproduced.
func Regressed(r *results.Result, baseline []*results.Result) []string {
	var before *results.Result
	for _, b := range baseline {
		if b.ID != r.ID && sameCell(r, b) && b.Started.Before(r.Started) {
			before = b
			break
		}
	}
	if before == nil {
		return nil
	}
	was := map[string]bool{}
	for _, v := range before.Verdicts {
		was[v.Claim] = v.Verdict == results.Reproduced
	}
	var out []string
	for _, v := range r.Verdicts {
		if was[v.Claim] && v.Verdict == results.NotReproduced {
			out = append(out, fmt.Sprintf("claim %s was reproduced by run %s and is not by this run: %s", v.Claim, before.ID, v.Reason))
		}
	}
	return out
}

// WriteJUnit writes doc to each of paths; an empty path is skipped.
func WriteJUnit(doc *render.JUnitSuites, paths ...string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		var b bytes.Buffer
		if err := doc.Write(&b); err != nil {
			return err
		}
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// LoadRuns loads, by ID, the results of the cells of s that saved one,
// from the store of the output directory out.
func LoadRuns(out string, s *State) (map[string]*results.Result, error) {
	runs := map[string]*results.Result{}
	for _, cs := range s.Cells {
		if cs.Result == "" {
			continue
		}
		r, err := results.Load(filepath.Join(results.StoreDir(out), cs.Result+".json"))
		if err != nil {
			return nil, err
		}
		runs[cs.Result] = r
	}
	return runs, nil
}

// ClaimsSuite is the claims judged from a matrix's results (every run
// in each claim's scope, with the current rules) as a JUnit suite: a test
// case per claim, named by its id. Reproduced passes; not reproduced and
// clock-, console- or kernel-dependent fail, with the reason; inconclusive, not
// run, not comparable and untestable here are skipped, with the reason
// (what would decide it, or why nothing here can).
func ClaimsSuite(name string, sts []rclaims.ClaimStatus) render.JUnitSuite {
	suite := render.JUnitSuite{Name: name}
	for _, s := range sts {
		tc := render.JUnitCase{Name: s.Claim.ID, Classname: "claims." + s.Claim.Plugin + "." + s.Claim.Bench}
		v := s.Judged
		tc.Judge(s.Verdict, &render.JUnitProblem{Message: s.Verdict + ": " + v.Reason, Type: s.Verdict})
		var out strings.Builder
		fmt.Fprintf(&out, "%s: %s\n%s %s\n", s.Claim.ID, s.Claim.Statement, s.Verdict, v.Reason)
		for _, st := range v.Strata {
			fmt.Fprintf(&out, "  %s on %s, clock %s, %s: %s\n", st.Verdict, st.Profile, st.Clock, st.Accelerator, st.Reason)
		}
		tc.SystemOut = out.String()
		suite.Cases = append(suite.Cases, tc)
	}
	return suite
}

// JUnit is the matrix as JUnit XML: one suite, a test case per
// cell, then (when claims is not nil) the claims judged from the
// matrix's results (ClaimsSuite). A cell fails when its run failed or never saved a result, or when
// a claim the baseline's run of the same cell reproduced is not
// reproduced now; an interrupted cell is an error, a pending one skipped.
// runs are the cells' results by ID; baseline the earlier runs (newest
// first) the claims are held to, may be nil.
func JUnit(s *State, runs map[string]*results.Result, baseline []*results.Result, claims []rclaims.ClaimStatus) *render.JUnitSuites {
	doc := &render.JUnitSuites{Name: "lab matrix " + s.Name}
	suite := render.JUnitSuite{Name: "lab matrix " + s.Name}
	if s.Shard != "" {
		suite.Name += " shard " + s.Shard
	}
	for _, c := range s.Cells {
		tc := render.JUnitCase{Name: c.ID, Classname: c.Plugin + "." + results.OrUnknown(c.Experiment), Time: c.Seconds}
		suite.Time += c.Seconds
		r := runs[c.Result]
		var out strings.Builder
		fmt.Fprintf(&out, "lab %s\n", strings.Join(c.Args(), " "))
		if c.Retried != "" {
			fmt.Fprintf(&out, "retried once: %s\n", c.Retried)
		}
		switch {
		case c.Status == "pending":
			tc.Skipped = &render.JUnitProblem{Message: "not run"}
		case c.Status == results.StatusInterrupted:
			tc.Error = &render.JUnitProblem{Message: "interrupted: " + c.Error, Type: results.StatusInterrupted}
		case r == nil:
			tc.Failure = &render.JUnitProblem{Message: "no result: " + c.Error, Type: "failed"}
		case r.Outcome.Status == results.StatusFailed:
			tc.Failure = &render.JUnitProblem{Message: r.Outcome.Reason, Type: "failed", Text: r.Outcome.StderrTail}
		}
		if r != nil {
			out.WriteString(render.SummaryText(r))
			for _, v := range r.Verdicts {
				fmt.Fprintf(&out, "%s %s: %s\n", v.Claim, v.Verdict, v.Reason)
			}
			if regs := Regressed(r, baseline); len(regs) > 0 && tc.Failure == nil {
				tc.Failure = &render.JUnitProblem{Message: strings.Join(regs, "; "), Type: "claim regressed"}
			}
		}
		tc.SystemOut = out.String()
		suite.Cases = append(suite.Cases, tc)
	}
	doc.Add(suite)
	if claims != nil {
		doc.Add(ClaimsSuite("lab matrix "+s.Name+" claims", claims))
	}
	return doc
}

// ext is the store's file name extension (results.Save).
const ext = ".json"
