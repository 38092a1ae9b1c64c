package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"lab/engine"
	"lab/images"
	"lab/plugins/host"
	"lab/vm"
)

// roots are the directories lab works in and the switches the environment
// sets, read once per command (readRoots) and handed down as values: no
// package below the CLI reads the environment.
type roots struct {
	// vm holds the VMs' state directories: $LAB_STATE_DIR, else
	// $XDG_STATE_HOME/lab/vms, else ~/.local/state/lab/vms.
	vm vm.Root
	// cache is lab's cache: $LAB_CACHE_DIR, else $XDG_CACHE_HOME/lab
	// (absolute only), else ~/.cache/lab.
	cache images.Cache
	// kernelMirror is $LAB_KERNEL_MIRROR: a directory of upstream kernel
	// tarballs, looked in before downloading one.
	kernelMirror string
	// results is the default result store: $LAB_RESULTS_DIR, else
	// $XDG_DATA_HOME/lab/results, else ~/.local/share/lab/results;
	// resultsErr says why there is none.
	results    string
	resultsErr error
	// libDirs are searched for lab's build artefacts: $LAB_LIBDIR, then
	// beside the executable (images.LibDirs).
	libDirs []string
	// profiles is the user's profile directory:
	// $XDG_CONFIG_HOME/lab/profiles (absolute only), else
	// ~/.config/lab/profiles, else "".
	profiles string
	// plugins is where plugins are found: the built-ins in libDirs, the
	// user's ($XDG_DATA_HOME/lab/plugins, else
	// ~/.local/share/lab/plugins), then $LAB_PLUGIN_PATH.
	plugins host.SearchPath
	// noSnapshot ($LAB_NO_SNAPSHOT) boots every VM cold.
	noSnapshot bool
	// supervisorExe ($LAB_SUPERVISOR_EXE) runs supervisors instead of
	// this binary. Tests set it.
	supervisorExe string
	// peerMemory ($LAB_PEER_MEMORY_MB, for tests) is a peer guest's
	// memory in MB, unparsed: startPeer says what is wrong with it.
	peerMemory string
	// owner ($LAB_OWNER_PID, unparsed) is a process every VM this lab
	// boots ends with: a test binary's or a CI job's.
	owner string
	// path is $PATH, where QEMU is looked for; tmp the temp directory
	// ($TMPDIR, else /tmp), where a result goes when its store fails.
	path, tmp string
}

// readRoots resolves the roots from the environment getenv reads
// (os.Getenv in main).
func readRoots(getenv func(string) string) roots {
	home := getenv("HOME") // what os.UserHomeDir reads on Unix
	tmp := getenv("TMPDIR")
	if tmp == "" {
		tmp = "/tmp"
	}
	// under is dir/rel for an environment directory, else home/homeRel,
	// else "".
	under := func(env string, abs bool, rel, homeRel string) string {
		if d := getenv(env); d != "" && (!abs || filepath.IsAbs(d)) {
			return filepath.Join(d, rel)
		}
		if home != "" {
			return filepath.Join(home, homeRel)
		}
		return ""
	}
	var r roots
	if d := getenv("LAB_STATE_DIR"); d != "" {
		r.vm = vm.Root(d)
	} else if d := getenv("XDG_STATE_HOME"); d != "" {
		r.vm = vm.Root(filepath.Join(d, "lab", "vms"))
	} else {
		h := home
		if h == "" {
			h = tmp
		}
		r.vm = vm.Root(filepath.Join(h, ".local", "state", "lab", "vms"))
	}
	r.cache = images.DefaultCache(getenv)
	r.kernelMirror = getenv(images.MirrorEnv)
	r.results = getenv("LAB_RESULTS_DIR")
	if r.results == "" {
		if r.results = under("XDG_DATA_HOME", false, filepath.Join("lab", "results"), filepath.Join(".local", "share", "lab", "results")); r.results == "" {
			r.resultsErr = fmt.Errorf("results dir: no $LAB_RESULTS_DIR, $XDG_DATA_HOME or home directory: %w", errors.New("$HOME is not defined"))
		}
	}
	r.libDirs = images.LibDirs(getenv("LAB_LIBDIR"))
	r.profiles = under("XDG_CONFIG_HOME", true, filepath.Join("lab", "profiles"), filepath.Join(".config", "lab", "profiles"))
	r.plugins = host.SearchPath{
		Builtin: host.BuiltinDir(r.libDirs),
		User:    under("XDG_DATA_HOME", false, filepath.Join("lab", "plugins"), filepath.Join(".local", "share", "lab", "plugins")),
		Extra:   filepath.SplitList(getenv("LAB_PLUGIN_PATH")),
	}
	r.noSnapshot = getenv("LAB_NO_SNAPSHOT") != ""
	r.supervisorExe = getenv("LAB_SUPERVISOR_EXE")
	r.peerMemory = getenv(peerMemoryEnv)
	r.owner = getenv(ownerEnv)
	r.path, r.tmp = getenv("PATH"), tmp
	return r
}

// resultsDir is the default result store, or why there is none.
func (r roots) resultsDir() (string, error) { return r.results, r.resultsErr }

// engine is what the run engine is given of the roots.
func (r roots) engine() engine.Roots {
	pid, _ := r.ownerPID() // refused where a VM boots (supervisor)
	return engine.Roots{VMs: r.vm, Cache: r.cache, LibDirs: r.libDirs, NoSnapshot: r.noSnapshot, Plugins: r.plugins, Profiles: r.profiles, KernelMirror: r.kernelMirror, Path: r.path, TempDir: r.tmp, OwnerPID: pid}
}

// ownerEnv ties every VM lab boots to a process (vm.UpOptions.OwnerPID):
// when it ends, however it ends, they are discarded. The test binaries
// set it to themselves.
const ownerEnv = "LAB_OWNER_PID"

// ownerPID is $LAB_OWNER_PID, 0 if unset.
func (r roots) ownerPID() (int, error) {
	if r.owner == "" {
		return 0, nil
	}
	pid, err := strconv.Atoi(r.owner)
	if err != nil || pid < 1 {
		return 0, fmt.Errorf("$%s=%q: want the id of the process the VMs end with, or leave it unset", ownerEnv, r.owner)
	}
	return pid, nil
}

// supervisor is the binary that runs supervisors: this one, unless
// $LAB_SUPERVISOR_EXE says otherwise.
func (r roots) supervisor() (string, error) {
	if _, err := r.ownerPID(); err != nil {
		return "", err
	}
	if r.supervisorExe != "" {
		return r.supervisorExe, nil
	}
	return os.Executable()
}
