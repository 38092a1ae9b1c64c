package main

// Tests of the documentation: README.md and docs/*.md. The README is what
// a newcomer reads in five minutes, so it stays short; every lab command
// the documents show must be one lab accepts as written.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"lab/engine"
	"lab/images"
	"lab/internal/labtest"
	"lab/plugins"
	"lab/plugins/contract"
	"lab/plugins/host"
	"lab/vm"
)

// maxReadmeLines is the README's budget: the rest lives in docs/.
const maxReadmeLines = 300

// docFile is one document, its path relative to the repository root.
type docFile struct {
	rel  string
	text string
}

// docFiles reads README.md and every docs/*.md.
func docFiles(t *testing.T) []docFile {
	t.Helper()
	root, err := labtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []docFile
	for _, p := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, docFile{rel: rel, text: string(b)})
	}
	return out
}

// TestReadmeLength: the README is at most maxReadmeLines lines, and its
// test command is still `make test` (.ci/run runs the README's test
// command).
func TestReadmeLength(t *testing.T) {
	readme := docFiles(t)[0]
	if n := strings.Count(readme.text, "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, want at most %d: move the detail to docs/", n, maxReadmeLines)
	}
	if !slices.Contains(strings.Split(readme.text, "\n"), "    make test") {
		t.Error("README.md does not give `make test` as its test command")
	}
}

// topCommands are lab's top-level commands as `lab --help` lists them.
func topCommands(t *testing.T) []string {
	t.Helper()
	r := cliRun(t, "--help")
	_, list, ok := strings.Cut(r.stdout, "COMMANDS:\n")
	if !ok {
		t.Fatalf("lab --help lists no commands:\n%s", r.stdout)
	}
	var names []string
	for _, line := range strings.Split(list, "\n") {
		if !strings.HasPrefix(line, "   ") {
			break
		}
		f := strings.Fields(line)
		names = append(names, strings.TrimSuffix(f[0], ","))
	}
	return names
}

// TestReadmeCommandTable: the README's command table has a row for every
// top-level command.
func TestReadmeCommandTable(t *testing.T) {
	readme := docFiles(t)[0]
	rows := map[string]bool{}
	for _, line := range strings.Split(readme.text, "\n") {
		if m := regexp.MustCompile("^\\| `lab ([a-z]+)").FindStringSubmatch(line); m != nil {
			rows[m[1]] = true
		}
	}
	names := topCommands(t)
	if len(names) < 16 {
		t.Fatalf("lab --help lists %d commands: %v", len(names), names)
	}
	for _, n := range names {
		if !rows[n] {
			t.Errorf("README.md's command table has no row for `lab %s`", n)
		}
	}
}

// docCommands builds lab's commands as run does (the test checks the list
// against `lab --help`), each action replaced by check.
func docCommands(e *env, check func(*cli.Context) error) []*cli.Command {
	cmds := []*cli.Command{
		upCommand(e), statusCommand(e), withNoWait(execCommand(e)), withNoWait(cpCommand(e)), consoleCommand(e),
		downCommand(e), profilesCommand(e), imageCommand(e), pluginsCommand(e), runCommand(e), claimsCommand(e),
		reproduceCommand(e), resultsCommand(e), compareCommand(e), historyCommand(e), reportCommand(e), matrixCommand(e), pluginBuildCommand(e),
	}
	var stub func([]*cli.Command)
	stub = func(cs []*cli.Command) {
		for _, c := range cs {
			if c.Action != nil {
				c.Action = check
			}
			stub(c.Subcommands)
		}
	}
	stub(cmds)
	return cmds
}

// parseDoc parses `lab ARGS...` as lab would, without running it: flags
// and their values must parse, and what check (run in place of the
// command's action) says about the arguments is returned.
func parseDoc(args []string, check func(*env, *cli.Context) error) error {
	var out bytes.Buffer
	e := &env{args: args, stdin: strings.NewReader(""), stdout: &out, stderr: &out, roots: readRoots(os.Getenv)}
	args, e.noWait = splitNoWait(args)
	ran := false
	cmds := docCommands(e, func(c *cli.Context) error { ran = true; return check(e, c) })
	app := &cli.App{Name: "lab", Writer: &out, ErrWriter: &out, HideHelpCommand: true, Commands: cmds,
		ExitErrHandler: func(*cli.Context, error) {}, DisableSliceFlagSeparator: true}
	if err := app.RunContext(context.Background(), permute(app.Commands, args)); err != nil {
		return err
	}
	if !ran && !slices.Contains(args, "--help") {
		return fmt.Errorf("no command ran (help shown instead?):\n%s", out.String())
	}
	return nil
}

// checkDocArgs checks what a documented command names: a `lab run` is
// planned as lab run plans it (plugin, experiment, parameters, sweeps,
// profiles and clocks, nothing booted); a profile or plugin named
// elsewhere must exist. built maps the plugins the documents build with
// `lab plugin build DIR` to their description.json: a run of one of those
// is checked against it.
func checkDocArgs(e *env, c *cli.Context, root, out string, built map[string]string) error {
	switch commandPath(c) {
	case "run":
		if c.NArg() != 1 {
			return fmt.Errorf("lab run needs one PLUGIN")
		}
		f := runFlags{plugin: c.Args().First(), vm: c.String("vm"), profiles: c.StringSlice("profile"), files: c.StringSlice("profile-file"),
			experiment: c.String("experiment"), params: c.StringSlice("param"), sweeps: c.Generic("sweep").(*sweepValues).flags,
			repeat: c.Int("repeat"), timeout: c.Duration("timeout"), clock: c.String("clock"), out: out}
		if file, ok := built[f.plugin]; ok {
			b, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			desc, err := plugins.ParseDescription(b)
			if err != nil {
				return err
			}
			params, err := engine.ParseParams(f.params)
			if err != nil {
				return err
			}
			_, _, err = desc.Resolve(f.experiment, params)
			return err
		}
		req, err := e.request(f)
		if err == nil {
			_, err = engine.NewPlan(req)
		}
		return err
	case "plugin build":
		if c.NArg() != 1 {
			return fmt.Errorf("lab plugin build needs one DIR")
		}
		_, err := os.Stat(filepath.Join(root, c.Args().First(), plugins.DescriptionFile))
		return err
	case "up", "profiles show":
		if c.NArg() < 1 {
			return fmt.Errorf("no profile named")
		}
		_, err := images.Lookup(e.roots.profiles, c.Args().First(), c.StringSlice("profile-file")...)
		return err
	case "plugins show":
		if c.NArg() < 1 {
			return fmt.Errorf("no plugin named")
		}
		_, err := e.roots.plugins.Describe(c.Args().First())
		return err
	case "claims show":
		for _, id := range c.Args().Slice() {
			if !claimIDs()[id] {
				return fmt.Errorf("no installed plugin declares claim %s", id)
			}
		}
	}
	return nil
}

// commandPath is the command c runs, with its parents: "claims show".
func commandPath(c *cli.Context) string {
	var names []string
	for _, x := range c.Lineage() {
		if x.Command != nil && x.Command.Name != "" {
			names = append([]string{x.Command.Name}, names...)
		}
	}
	return strings.TrimPrefix(strings.Join(names, " "), "lab ")
}

// claimIDs are the claims lab's plugins declare, and the compound claims
// their parts make (`lab claims show E2.1` shows E2.1a, E2.1b...).
func claimIDs() map[string]bool {
	ids := map[string]bool{}
	for _, name := range []string{"forkbench", "threadbench", "printfbench", "netbench"} {
		desc, err := readRoots(os.Getenv).plugins.Describe(name)
		if err != nil {
			continue
		}
		for _, c := range host.AllClaims(desc) {
			ids[c.ID] = true
			if c.PartOf != "" {
				ids[c.PartOf] = true
			}
		}
	}
	return ids
}

// shellWords splits a shell command line into words and the commands
// joined by &&, ||, | or ;, dropping redirections and a trailing comment.
func shellWords(line string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord, quote := false, byte(0)
	flush := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	endCmd := func() {
		flush()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	redirect := false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			} else {
				w.WriteByte(ch)
			}
		case ch == '\'' || ch == '"':
			quote, inWord = ch, true
		case ch == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			inWord = true
		case ch == ' ' || ch == '\t':
			flush()
			if redirect && len(words) > 0 {
				words, redirect = words[:len(words)-1], false
			}
		case ch == '#' && !inWord:
			endCmd()
			return cmds
		case ch == '&' || ch == '|' || ch == ';':
			endCmd()
			for i+1 < len(line) && line[i+1] == ch {
				i++
			}
		case ch == '>' || ch == '<':
			flush()
			redirect = true
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	flush()
	if redirect && len(words) > 0 {
		words = words[:len(words)-1]
	}
	endCmd()
	return cmds
}

// docCommand is a lab command line shown in a code block, and the error
// lab prints for it when the document shows one (a `lab: ...` line right
// after a `$ lab ...` line).
type docCommand struct {
	where   string
	line    string
	args    []string
	wantErr string
}

// codeCommands are the lab commands in a document's indented code blocks.
// In a block with `$ ` prompts only the prompted lines are commands (the
// rest is their output); otherwise every line starting with `lab `.
func codeCommands(d docFile) []docCommand {
	var cmds []docCommand
	lines := strings.Split(d.text, "\n")
	for i := 0; i < len(lines); {
		if !strings.HasPrefix(lines[i], "    ") || (i > 0 && strings.TrimSpace(lines[i-1]) != "") {
			i++
			continue
		}
		var block []int
		for ; i < len(lines) && (strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == ""); i++ {
			block = append(block, i)
		}
		prompted := slices.ContainsFunc(block, func(j int) bool { return strings.HasPrefix(lines[j], "    $ ") })
		for k := 0; k < len(block); k++ {
			j := block[k]
			text := strings.TrimPrefix(lines[j], "    ")
			if prompted {
				if !strings.HasPrefix(text, "$ ") {
					continue
				}
				text = strings.TrimPrefix(text, "$ ")
			}
			for strings.HasSuffix(text, "\\") && k+1 < len(block) {
				k++
				text = strings.TrimSuffix(text, "\\") + " " + strings.TrimSpace(lines[block[k]])
			}
			wantErr := ""
			if prompted && k+1 < len(block) {
				if next := strings.TrimPrefix(lines[block[k+1]], "    "); strings.HasPrefix(next, "lab: ") {
					wantErr = next
				}
			}
			for _, words := range shellWords(text) {
				if words[0] == "lab" {
					cmds = append(cmds, docCommand{where: fmt.Sprintf("%s:%d", d.rel, j+1), line: strings.Join(words, " "), args: words, wantErr: wantErr})
				}
			}
		}
	}
	return cmds
}

// TestDocCommands: every lab command in a code block of README.md or
// docs/*.md parses as lab parses it (command, flags, flag values), names
// profiles, plugins and claims that exist, and, for lab run, is a run lab
// would start (checked as lab run checks it before anything boots); a
// command shown with its error fails with exactly that error.
func TestDocCommands(t *testing.T) {
	cliEnv(t)
	root, err := labtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var all []docCommand
	built := map[string]string{}
	for _, d := range docFiles(t) {
		for _, c := range codeCommands(d) {
			all = append(all, c)
			if len(c.args) == 4 && c.args[1] == "plugin" && c.args[2] == "build" {
				built[filepath.Base(c.args[3])] = filepath.Join(root, c.args[3], plugins.DescriptionFile)
			}
		}
	}
	n := 0
	for _, c := range all {
		n++
		err := parseDoc(c.args, func(e *env, ctx *cli.Context) error { return checkDocArgs(e, ctx, root, t.TempDir(), built) })
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %s: %v", c.where, c.line, err)
		case c.wantErr != "" && (err == nil || "lab: "+err.Error() != c.wantErr):
			t.Errorf("%s: %s: error %v, the document shows\n%s", c.where, c.line, err, c.wantErr)
		}
	}
	if n < 40 {
		t.Errorf("found %d lab commands in the documents' code blocks; the extraction is broken", n)
	}
}

// TestDocInlineCommands: every `lab ...` the documents' prose and tables
// quote names a command that exists, and every flag it shows is one that
// command takes (placeholders such as PROFILE and [--name N] are allowed:
// only the command and the flag names are checked).
func TestDocInlineCommands(t *testing.T) {
	cmds := docCommands(&env{}, nil)
	span := regexp.MustCompile("(?s)(`+)(.+?)`+")
	flagRE := regexp.MustCompile(`^[\[(]*(--?[a-zA-Z][a-zA-Z0-9-]*)`)
	n := 0
	for _, d := range docFiles(t) {
		var prose []string
		for _, line := range strings.Split(d.text, "\n") {
			if !strings.HasPrefix(line, "    ") {
				prose = append(prose, line)
			}
		}
		for _, m := range span.FindAllStringSubmatch(strings.Join(prose, " "), -1) {
			text := strings.TrimSpace(strings.ReplaceAll(m[2], `\|`, "|"))
			if !strings.HasPrefix(text, "lab ") || strings.HasPrefix(text, "lab "+vm.SuperviseArg) {
				continue // the supervisor's re-execution is no command
			}
			n++
			words := strings.Fields(text)[1:]
			var cmd *cli.Command
			cs := cmds
			for len(words) > 0 {
				c := findCommand(cs, words[0])
				if c == nil {
					break
				}
				cmd, cs, words = c, c.Subcommands, words[1:]
			}
			if cmd == nil {
				t.Errorf("%s: `%s`: no such command", d.rel, text)
				continue
			}
			for _, w := range words {
				if w == "--" {
					break
				}
				fm := flagRE.FindStringSubmatch(w)
				if fm == nil || fm[1] == "--help" || fm[1] == "-h" {
					continue
				}
				name := strings.TrimLeft(fm[1], "-")
				if !slices.ContainsFunc(cmd.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), name) }) &&
					!(cmd.Name == "exec" && name == noWaitFlag) {
					t.Errorf("%s: `%s`: lab %s has no flag %s", d.rel, text, cmd.FullName(), fm[1])
				}
			}
		}
	}
	if n < 40 {
		t.Errorf("found %d inline lab commands; the extraction is broken", n)
	}
}

// TestDocCommandList: docCommands is lab's command list.
func TestDocCommandList(t *testing.T) {
	var got []string
	for _, c := range docCommands(&env{}, nil) {
		got = append(got, c.Name)
	}
	if want := topCommands(t); !slices.Equal(got, want) {
		t.Errorf("docCommands = %v, lab --help lists %v: keep docs_test.go's list in step with app.go", got, want)
	}
}

// headingAnchor is GitHub's anchor for a heading.
func headingAnchor(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocLinks: every relative link in README.md and docs/*.md names a
// file that exists and, with a #fragment, a heading of that document.
func TestDocLinks(t *testing.T) {
	root, err := labtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	docs := docFiles(t)
	anchors := map[string]map[string]bool{}
	for _, d := range docs {
		anchors[d.rel] = map[string]bool{}
		for _, line := range strings.Split(d.text, "\n") {
			if h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
				anchors[d.rel][headingAnchor(strings.ReplaceAll(h, "`", ""))] = true
			}
		}
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	n := 0
	for _, d := range docs {
		for _, m := range link.FindAllStringSubmatch(d.text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			n++
			file, frag, _ := strings.Cut(target, "#")
			rel := d.rel
			if file != "" {
				rel = filepath.Clean(filepath.Join(filepath.Dir(d.rel), file))
				if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
					t.Errorf("%s: link %s: %v", d.rel, target, err)
					continue
				}
			}
			if frag != "" {
				if a, ok := anchors[rel]; !ok || !a[frag] {
					t.Errorf("%s: link %s: %s has no heading #%s", d.rel, target, rel, frag)
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("found %d relative links; the extraction is broken", n)
	}
}

// TestDocConventions: docs/claims.md's table of word conventions is
// plugins/contract/conventions.json, row for row and in its order.
func TestDocConventions(t *testing.T) {
	root, err := labtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "docs", "claims.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Word conventions\n")
	if !ok {
		t.Fatal(`docs/claims.md has no "## Word conventions" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var got, want []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| `") {
			got = append(got, line)
		}
	}
	for _, c := range contract.Conventions {
		want = append(want, fmt.Sprintf("| `%s` | %s | %s | %s |", c.Name, c.Words, c.Rule, c.Why))
	}
	if !slices.Equal(got, want) {
		t.Errorf("docs/claims.md's conventions table differs from plugins/contract/conventions.json; its rows should be:\n%s", strings.Join(want, "\n"))
	}
}

// TestDocPluginParameters: docs/plugins.md documents every experiment and
// parameter of lab's four plugins, with its type and default as the
// plugin's description.json declares them.
func TestDocPluginParameters(t *testing.T) {
	root, err := labtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "plugins.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"forkbench", "threadbench", "printfbench", "netbench"} {
		b, err := os.ReadFile(filepath.Join(root, "plugins", name, "description.json"))
		if err != nil {
			t.Fatal(err)
		}
		var desc struct {
			Experiments []struct {
				Name   string
				Params []struct{ Name, Type, Default string }
			}
		}
		if err := json.Unmarshal(b, &desc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, section, ok := strings.Cut(string(doc), "\n## "+name+":")
		if !ok {
			t.Errorf("docs/plugins.md has no section for %s", name)
			continue
		}
		section, _, _ = strings.Cut(section, "\n## ")
		for _, exp := range desc.Experiments {
			if !strings.Contains(section, "**`"+exp.Name+"`**") {
				t.Errorf("docs/plugins.md, %s: experiment %s is not described", name, exp.Name)
			}
			for _, p := range exp.Params {
				row := fmt.Sprintf("| `%s` | %s | `%s` |", p.Name, p.Type, p.Default)
				if !strings.Contains(section, row) {
					t.Errorf("docs/plugins.md, %s: no row %q for parameter %s of %s", name, row, p.Name, exp.Name)
				}
			}
		}
	}
}

// TestDesignLayout: docs/DESIGN.md's layout table names every Go package
// of the module, and every path it names is a folder: the architecture
// is read from the folders.
func TestDesignLayout(t *testing.T) {
	root, err := labtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "docs", "DESIGN.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "## Layout: who owns what")
	if !ok {
		t.Fatal(`docs/DESIGN.md has no "## Layout: who owns what" section`)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	rows := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		path, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
		rows[path] = true
		if path == "plugins/<name>/" {
			continue
		}
		if fi, err := os.Stat(filepath.Join(root, path)); err != nil || !fi.IsDir() {
			t.Errorf("docs/DESIGN.md's layout names %s, which is not a folder", path)
		}
	}
	// Every folder holding a Go package (test-only packages aside).
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		dir := filepath.ToSlash(rel) + "/"
		switch {
		case rows[dir]:
		case path.Dir(strings.TrimSuffix(dir, "/")) == "plugins" && rows["plugins/<name>/"] && fileExists(filepath.Join(root, rel, plugins.DescriptionFile)):
		case rows[path.Dir(strings.TrimSuffix(dir, "/"))+"/"] && strings.HasPrefix(dir, "internal/testplugins/"):
		default:
			t.Errorf("package folder %s is not in docs/DESIGN.md's layout table", dir)
			rows[dir] = true // once
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
