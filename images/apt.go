package images

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Debian packages are fetched with the ordinary clients (apt-get, apt-cache,
// dpkg-deb), never installed: installing a foreign-arch (:i386) package can
// make apt remove packages the host needs.

// aptLockWait bounds how long lab waits for another apt or dpkg (for
// example an `apt-get install qemu-system-x86` in another terminal).
const aptLockWait = 5 * time.Minute

// aptLockPoll is how often a busy apt lock is retried. apt's locks are
// fcntl locks held by another program for as long as it likes; there is no
// event to wait on, so lab retries.
const aptLockPoll = 3 * time.Second

// apt runs Debian's package tools on behalf of a fetch.
type apt struct {
	log io.Writer
}

// run executes name args in dir and returns its standard output. A busy
// apt/dpkg lock is retried for up to aptLockWait. The error carries the
// tail of the command's output.
func (a apt) run(ctx context.Context, dir, name string, args ...string) (string, error) {
	deadline := time.Now().Add(aptLockWait)
	warned := false
	for {
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		cmd.Stdout = &stdout
		cmd.Stderr = &stderr
		// A stable, English message for lockBusy and for users.
		cmd.Env = append(os.Environ(), "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive")
		err := cmd.Run()
		if err == nil {
			return stdout.String(), nil
		}
		out := stdout.String() + stderr.String()
		if lockBusy(out) && time.Now().Before(deadline) {
			if !warned {
				fmt.Fprintf(a.log, "waiting for the apt/dpkg lock (another apt-get or dpkg is running) ...\n")
				warned = true
			}
			t := time.NewTimer(aptLockPoll)
			select {
			case <-ctx.Done():
				t.Stop()
				return "", fmt.Errorf("%s %s: waiting for the apt lock: %w", name, strings.Join(args, " "), ctx.Err())
			case <-t.C:
			}
			continue
		}
		return stdout.String(), &cmdError{cmd: name + " " + strings.Join(args, " "), err: err, output: tail(out, 12)}
	}
}

// cmdError is a failed command with the end of what it printed.
type cmdError struct {
	cmd    string
	err    error
	output string
}

func (e *cmdError) Error() string {
	if e.output == "" {
		return fmt.Sprintf("%s: %v", e.cmd, e.err)
	}
	return fmt.Sprintf("%s: %v:\n%s", e.cmd, e.err, e.output)
}

func (e *cmdError) Unwrap() error { return e.err }

// exitCode is the command's exit status, or -1 if it did not run or exit.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

func lockBusy(out string) bool {
	for _, s := range []string{"Could not get lock", "Unable to acquire the dpkg frontend lock", "Unable to lock directory", "is another process using it"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

func tail(s string, lines int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// ensureForeignArch makes dpkg accept packages of arch (i386 on an amd64
// host). It changes nothing when the architecture is already known.
func (a apt) ensureForeignArch(ctx context.Context, arch string) error {
	out, err := a.run(ctx, "", "dpkg", "--print-architecture")
	if err != nil {
		return err
	}
	if strings.TrimSpace(out) == arch {
		return nil
	}
	out, err = a.run(ctx, "", "dpkg", "--print-foreign-architectures")
	if err != nil {
		return err
	}
	for _, f := range strings.Fields(out) {
		if f == arch {
			return nil
		}
	}
	fmt.Fprintf(a.log, "adding the %s architecture to dpkg (dpkg --add-architecture %s) ...\n", arch, arch)
	if _, err := a.run(ctx, "", "dpkg", "--add-architecture", arch); err != nil {
		return fmt.Errorf("%w\n(lab needs %s packages; run 'sudo dpkg --add-architecture %s && sudo apt-get update' once, or 'make setup' as root)", err, arch, arch)
	}
	return a.update(ctx)
}

// update runs apt-get update. On our machines it exits 100 because one
// i386 index fails to download while the main archive's lists arrive, so
// exit code 100 is tolerated: callers check what they needed afterwards.
func (a apt) update(ctx context.Context) error {
	fmt.Fprintf(a.log, "updating the package lists (apt-get update) ...\n")
	_, err := a.run(ctx, "", "apt-get", "update")
	if err != nil && exitCode(err) == 100 {
		fmt.Fprintf(a.log, "apt-get update exited 100 (some index failed); carrying on and checking the result\n")
		return nil
	}
	return err
}

// dependsOn returns the first dependency of meta whose name starts with
// prefix, as `apt-cache depends` prints it (e.g.
// "linux-image-6.1.0-50-686:i386"), or "" if apt-cache knows none.
func (a apt) dependsOn(ctx context.Context, meta, prefix string) (string, error) {
	out, err := a.run(ctx, "", "apt-cache", "depends", meta)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		dep, ok := strings.CutPrefix(line, "Depends: ")
		if !ok {
			dep, ok = strings.CutPrefix(line, "|Depends: ")
		}
		if ok && strings.HasPrefix(dep, prefix) && !strings.HasPrefix(dep, "<") {
			return dep, nil
		}
	}
	return "", nil
}

// resolve finds the versioned package a metapackage stands for, updating
// the package lists once if apt-cache does not know it yet.
func (a apt) resolve(ctx context.Context, meta, prefix string) (string, error) {
	dep, err := a.dependsOn(ctx, meta, prefix)
	if err == nil && dep != "" {
		return dep, nil
	}
	if uerr := a.update(ctx); uerr != nil {
		return "", fmt.Errorf("resolving %s: %w", meta, uerr)
	}
	dep, err = a.dependsOn(ctx, meta, prefix)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", meta, err)
	}
	if dep == "" {
		return "", fmt.Errorf("resolving %s: apt-cache knows no %s* dependency even after apt-get update; check the apt sources (and that apt-get update can run, as root)", meta, prefix)
	}
	return dep, nil
}

// download fetches pkg's .deb into dir with apt-get download (which
// installs nothing) and returns its path. If apt does not know the package
// yet, the lists are updated once.
func (a apt) download(ctx context.Context, pkg, dir string) (string, error) {
	fmt.Fprintf(a.log, "fetching %s ...\n", pkg)
	_, err := a.run(ctx, dir, "apt-get", "download", pkg)
	var ce *cmdError
	if err != nil && errors.As(err, &ce) && (strings.Contains(ce.output, "Unable to locate package") || strings.Contains(ce.output, "Can't select")) {
		if uerr := a.update(ctx); uerr != nil {
			return "", uerr
		}
		_, err = a.run(ctx, dir, "apt-get", "download", pkg)
	}
	if err != nil {
		return "", err
	}
	debs, _ := filepath.Glob(filepath.Join(dir, "*.deb"))
	if len(debs) != 1 {
		return "", fmt.Errorf("apt-get download %s: expected one .deb in %s, found %d", pkg, dir, len(debs))
	}
	return debs[0], nil
}

// debField reads a control field (Package, Version...) from a .deb.
func (a apt) debField(ctx context.Context, deb, field string) (string, error) {
	out, err := a.run(ctx, "", "dpkg-deb", "-f", deb, field)
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(out)
	if v == "" {
		return "", fmt.Errorf("%s has no %s field", filepath.Base(deb), field)
	}
	return v, nil
}

// extract unpacks a .deb's files (not its scripts) under dir.
func (a apt) extract(ctx context.Context, deb, dir string) error {
	_, err := a.run(ctx, "", "dpkg-deb", "-x", deb, dir)
	return err
}

// unpackDeb downloads Debian package pkg for debArch into dir (the
// foreign arch enabled first, nothing installed) and extracts it there:
// the tree's root, and the package's name and version.
func (a apt) unpackDeb(ctx context.Context, pkg, debArch, dir string) (root, name, version string, err error) {
	if err := a.ensureForeignArch(ctx, debArch); err != nil {
		return "", "", "", err
	}
	deb, err := a.download(ctx, pkg+":"+debArch, dir)
	if err != nil {
		return "", "", "", err
	}
	if name, err = a.debField(ctx, deb, "Package"); err != nil {
		return "", "", "", err
	}
	if version, err = a.debField(ctx, deb, "Version"); err != nil {
		return "", "", "", err
	}
	root = filepath.Join(dir, "root")
	if err := a.extract(ctx, deb, root); err != nil {
		return "", "", "", err
	}
	return root, name, version, nil
}
