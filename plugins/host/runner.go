package host

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"

	"lab/plugins"
	"lab/vm/link"
)

// guestRunner is a go-plugin runner.Runner that runs the plugin inside a
// guest: Start pushes the bundle over the link and has the agent exec it;
// stdout/stderr are link streams; PluginToHost tunnels the plugin's unix
// socket to a host listener. On Linux a go-plugin server only listens on a
// unix socket inside the guest, which the host cannot dial directly.
type guestRunner struct {
	lc     *link.Client
	bundle *Bundle
	env    []string
	// tlsEnv hands the plugin its certificate and key and the VM's CA
	// (VMTLS.PluginEnv): in the exec request only, never on the guest's disk.
	tlsEnv []string
	// extraEnv is the caller's (OpenOptions.Env).
	extraEnv []string
	// hostDir is go-plugin's socket directory on the host, where the
	// tunnel listeners go.
	hostDir string
	log     hclog.Logger

	proc           *link.Process
	stdoutR        *io.PipeReader
	stderrR        *io.PipeReader
	stderrTail     *tailBuffer
	stdout, stderr *outputSink
	listeners      []net.Listener
	tunnels        map[net.Conn]bool // both ends of each open tunnel
	mu             sync.Mutex
	pushed, cached int
	pushTime       time.Duration
}

var _ runner.Runner = (*guestRunner)(nil)

// guestRoot is where bundles are placed in the guest, by content hash:
// guestRoot/NAME/SUM/. The agent's cache (guest/agent/cache.go) evicts
// each such directory as one bundle, least recently installed into first,
// never while a program runs from it.
const guestRoot = "/var/lib/lab/plugins"

// Start pushes the bundle (content-cached in the guest: a second run pushes
// nothing) and starts the plugin.
func (r *guestRunner) Start(ctx context.Context) error {
	t := time.Now()
	// The plugin's certificates need the guest clock close to ours (they
	// are back-dated an hour, no more); the guest drifts under emulation.
	// Set while the bundle goes: another round trip, overlapped.
	clock := make(chan error, 1)
	go func() { clock <- r.lc.SetTime(ctx, time.Now()) }()
	root, _, err := pushBundle(ctx, r.lc, r.bundle, &r.pushed, &r.cached)
	r.pushTime = time.Since(t)
	if cerr := <-clock; err == nil && cerr != nil {
		return fmt.Errorf("setting the guest clock: %w", cerr)
	}
	if err != nil {
		return err
	}
	var env []string
	for _, kv := range r.env {
		// It names a host directory; in the guest it kills the plugin at
		// start. The plugin picks a guest temp dir instead.
		if strings.HasPrefix(kv, "PLUGIN_UNIX_SOCKET_DIR=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, guestEnv(root)...)
	env = append(env, r.extraEnv...)
	env = append(env, r.tlsEnv...)
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	r.stdoutR, r.stderrR = outR, errR
	// The link never waits for go-plugin to read (outputSink).
	r.stdout, r.stderr = newOutputSink(outW, sinkMax, sinkMaxLine), newOutputSink(errW, sinkMax, sinkMaxLine)
	p, err := r.lc.Start(ctx, &link.ExecRequest{Argv: []string{root + "/" + r.bundle.Name}, Env: env, Dir: "/tmp", KillGroup: true, Contain: true},
		link.StartOptions{
			Stdout: r.stdout,
			Stderr: io.MultiWriter(r.stderrTail, r.stderr),
			// go-plugin waits for EOF on both before Kill returns.
			OnExit: func() { r.stdout.Close(); r.stderr.Close() },
		})
	if err != nil {
		r.stdout.Close()
		r.stderr.Close()
		return fmt.Errorf("starting plugin %s in the guest: %w", r.bundle.Name, err)
	}
	r.mu.Lock()
	r.proc = p
	r.mu.Unlock()
	// The link has no half-close: a tunnel whose guest end the plugin
	// dropped by dying stays open until the host closes it, and a gRPC
	// call on it would wait forever. The plugin's exit ends its tunnels.
	go func() {
		<-p.Done()
		r.closeTunnels()
	}()
	return nil
}

func (r *guestRunner) Diagnose(ctx context.Context) string {
	if r.stderrTail == nil {
		return ""
	}
	return "plugin stderr (tail):\n" + r.stderrTail.String()
}

func (r *guestRunner) Stdout() io.ReadCloser { return r.stdoutR }
func (r *guestRunner) Stderr() io.ReadCloser { return r.stderrR }
func (r *guestRunner) Name() string          { return r.bundle.Name }

func (r *guestRunner) ID() string {
	if r.proc == nil {
		return "guest:" + r.bundle.Name
	}
	return fmt.Sprintf("guest-pid:%d", r.proc.Pid)
}

func (r *guestRunner) Wait(ctx context.Context) error {
	if r.proc == nil {
		return nil
	}
	select {
	case <-r.proc.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	ex, err := r.proc.Wait()
	r.closeListeners()
	if err != nil {
		return err
	}
	if ex.Code != 0 {
		return fmt.Errorf("plugin %s exited with status %d", r.bundle.Name, ex.Code)
	}
	return nil
}

// Kill kills the plugin's process group in the guest.
func (r *guestRunner) Kill(ctx context.Context) error {
	if r.proc == nil {
		return nil
	}
	_ = r.proc.Signal(int(syscall.SIGKILL))
	select {
	case <-r.proc.Done():
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(10 * time.Second):
		return fmt.Errorf("plugin %s did not die", r.bundle.Name)
	}
	r.closeListeners()
	return nil
}

// PluginToHost makes a host unix listener whose connections are tunnelled
// over the link to the plugin's socket in the guest.
func (r *guestRunner) PluginToHost(pluginNet, pluginAddr string) (string, string, error) {
	if pluginNet != "unix" {
		return "", "", fmt.Errorf("plugin %s listens on %s %s; only unix sockets can be tunnelled out of the guest", r.bundle.Name, pluginNet, pluginAddr)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	hostAddr := filepath.Join(r.hostDir, "tunnel-"+hex.EncodeToString(b[:])+".sock")
	ln, err := net.Listen("unix", hostAddr)
	if err != nil {
		return "", "", err
	}
	r.mu.Lock()
	r.listeners = append(r.listeners, ln)
	r.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go r.tunnel(c, pluginAddr)
		}
	}()
	return "unix", hostAddr, nil
}

func (r *guestRunner) tunnel(c net.Conn, addr string) {
	if !r.track(c) {
		return
	}
	defer r.untrack(c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	g, err := r.lc.Dial(ctx, "unix", addr)
	cancel()
	if err != nil {
		r.log.Error("tunnel to the plugin failed", "addr", addr, "error", err)
		fmt.Fprintf(r.stderrTail, "lab: tunnel to the plugin's socket %s failed: %v\n", addr, err)
		return
	}
	if !r.track(g) {
		return
	}
	defer r.untrack(g)
	done := make(chan struct{}, 2)
	go func() { io.Copy(g, c); done <- struct{}{} }()
	go func() { io.Copy(c, g); done <- struct{}{} }()
	<-done
}

// HostToPlugin is only needed when the plugin dials the host (go-plugin's
// broker); lab brokers nothing, so it is never called.
func (r *guestRunner) HostToPlugin(hostNet, hostAddr string) (string, string, error) {
	return "", "", fmt.Errorf("plugin %s: the guest cannot dial host address %s %s", r.bundle.Name, hostNet, hostAddr)
}

// track records an open tunnel end, or closes it and returns false if the
// plugin has already exited.
func (r *guestRunner) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc != nil && isDone(r.proc.Done()) {
		c.Close()
		return false
	}
	if r.tunnels == nil {
		r.tunnels = map[net.Conn]bool{}
	}
	r.tunnels[c] = true
	return true
}

func (r *guestRunner) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.tunnels, c)
	r.mu.Unlock()
	c.Close()
}

// closeTunnels closes every open tunnel end.
func (r *guestRunner) closeTunnels() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for c := range r.tunnels {
		c.Close()
	}
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (r *guestRunner) closeListeners() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ln := range r.listeners {
		ln.Close()
	}
	r.listeners = nil
}

// bundleFile is one regular file of a bundle.
type bundleFile struct {
	rel    string // path relative to the bundle dir
	sha256 string
	size   int64
	mode   os.FileMode
}

// bundleFiles lists a bundle's regular files (sorted), each hashed once,
// and a hash over their names and contents.
func bundleFiles(dir string) ([]bundleFile, string, error) {
	var files []bundleFile
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == RecordFile {
			return nil // the host's record of the build; the guest has no use for it
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum, err := fileSHA256(p)
		if err != nil {
			return err
		}
		files = append(files, bundleFile{rel: rel, sha256: sum, size: info.Size(), mode: info.Mode().Perm()})
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("plugin bundle %s: %w", dir, err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s %s\n", f.rel, f.sha256)
	}
	return files, hex.EncodeToString(h.Sum(nil)), nil
}

// pushBundle installs bundle in the guest behind lc under guestRoot,
// counting the files sent and those the guest already held, and returns
// where it lies there and its files.
func pushBundle(ctx context.Context, lc *link.Client, bundle *Bundle, sent, cached *int) (string, []bundleFile, error) {
	files, sum, err := bundleFiles(bundle.Dir)
	if err != nil {
		return "", nil, err
	}
	root := fmt.Sprintf("%s/%s/%s", guestRoot, bundle.Name, sum[:16])
	// The files go at once, each on its own stream: a file the guest
	// already holds costs a round trip to the agent, tens of ms under TCG,
	// and those overlap. The agent checks each file's room alone, so
	// files that failed together go again one at a time, as they fit or
	// are refused when sent alone.
	was := make([]bool, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			was[i], errs[i] = push(ctx, lc, bundle, f, root+"/"+filepath.ToSlash(f.rel))
		}()
	}
	wg.Wait()
	for i, f := range files {
		if errs[i] != nil && ctx.Err() == nil {
			was[i], errs[i] = push(ctx, lc, bundle, f, root+"/"+filepath.ToSlash(f.rel))
		}
		if errs[i] != nil {
			return "", nil, fmt.Errorf("pushing plugin %s: %w", bundle.Name, errs[i])
		}
		if was[i] {
			*sent++
		} else {
			*cached++
		}
	}
	return root, files, nil
}

// guestEnv is the environment of what lab starts from a bundle installed
// at root in the guest: the plugin, or its workload in a peer guest.
func guestEnv(root string) []string {
	return []string{plugins.WorkloadDirEnv + "=" + root + "/workload", "PATH=/bin:/sbin:/usr/bin:/usr/sbin", "HOME=/root", "TMPDIR=/tmp"}
}

// push sends one bundle file to guest path dst; the guest keeps content
// by hash, so a file it already holds is not sent again.
func push(ctx context.Context, lc *link.Client, bundle *Bundle, f bundleFile, dst string) (bool, error) {
	fh, err := os.Open(filepath.Join(bundle.Dir, f.rel))
	if err != nil {
		return false, err
	}
	defer fh.Close()
	return lc.Put(ctx, fh, &link.PutRequest{Path: dst, Mode: uint32(f.mode), Size: f.size, SHA256: f.sha256})
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// Session is a plugin running in a guest, connected over go-plugin gRPC.
type Session struct {
	Bench  *plugins.Client
	client *plugin.Client
	runner *guestRunner
	// Started is when Open began; Ready when the first RPC was answered.
	Started, Ready time.Time
	// Retried is why the first start failed, if Open had to start the
	// plugin twice (a plugin that ended before writing anything).
	Retried string
}

// OpenOptions tune Open.
type OpenOptions struct {
	// StartTimeout bounds push + start + handshake.
	StartTimeout time.Duration
	// Logger receives go-plugin's logs; nil discards all but errors.
	Logger hclog.Logger
	// TLS is the VM's TLS material (EnsureTLS); required: a plugin is
	// never spoken to in plaintext.
	TLS *VMTLS
	// Env is added to the plugin's environment (KEY=VALUE): a run with a
	// peer guest passes LAB_PEER_ADDR and LAB_SELF_ADDR.
	Env []string
}

// Open pushes bundle into the guest behind lc, starts it and returns a
// session whose Client speaks to it, over mutual TLS with the VM's
// certificates (opt.TLS); no ReattachConfig is
// used (its pid is a guest pid and Kill would signal a host process).
func Open(ctx context.Context, lc *link.Client, bundle *Bundle, opt OpenOptions) (*Session, error) {
	started := time.Now()
	s, err := open(ctx, lc, bundle, opt)
	var silent *silentStart
	if !errors.As(err, &silent) || ctx.Err() != nil {
		return s, err
	}
	// Seen rarely on the first start after a restored boot, cause not yet
	// found: the plugin's exec ends before it writes a byte. Once more,
	// saying so; a plugin that really dies at start fails again.
	s, err2 := open(ctx, lc, bundle, opt)
	if err2 != nil {
		return nil, fmt.Errorf("%w; started again: %v", err, err2)
	}
	s.Started = started
	s.Retried = err.Error()
	return s, nil
}

// silentStart is a plugin whose process ended before it wrote anything,
// on stdout or stderr.
type silentStart struct {
	name, how string
	err       error
}

func (e *silentStart) Error() string {
	return fmt.Sprintf("plugin %s did not start: it ended before writing anything (%s): %v", e.name, e.how, e.err)
}

func (e *silentStart) Unwrap() error { return e.err }

func open(ctx context.Context, lc *link.Client, bundle *Bundle, opt OpenOptions) (*Session, error) {
	if opt.TLS == nil {
		return nil, fmt.Errorf("plugin %s: no TLS material for the VM (host.EnsureTLS); a plugin is never spoken to in plaintext", bundle.Name)
	}
	s := &Session{Started: time.Now()}
	tail := &tailBuffer{max: 8 << 10}
	logger := opt.Logger
	if logger == nil {
		logger = hclog.New(&hclog.LoggerOptions{Name: "plugin", Level: hclog.Error, Output: io.Discard})
	}
	if opt.StartTimeout == 0 {
		opt.StartTimeout = 2 * time.Minute
	}
	cfg := clientConfig(opt.TLS, opt.StartTimeout, logger)
	if cfg.UnixSocketConfig != nil {
		removeStaleSocketDirs(cfg.UnixSocketConfig.TempDir)
	}
	// What the plugin writes to os.Stdout/os.Stderr comes over
	// go-plugin's stdio stream, not the process's own stderr.
	cfg.SyncStdout, cfg.SyncStderr = tail, tail
	cfg.RunnerFunc = func(l hclog.Logger, cmd *exec.Cmd, tmpDir string) (runner.Runner, error) {
		s.runner = &guestRunner{lc: lc, bundle: bundle, env: cmd.Env, tlsEnv: opt.TLS.PluginEnv(), extraEnv: opt.Env, hostDir: tmpDir, log: l, stderrTail: tail}
		return s.runner, nil
	}
	s.client = plugin.NewClient(cfg)
	type result struct {
		b   *plugins.Client
		err error
	}
	done := make(chan result, 1)
	go func() {
		rpc, err := s.client.Client()
		if err != nil {
			done <- result{err: err}
			return
		}
		raw, err := rpc.Dispense(plugins.PluginName)
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{b: raw.(*plugins.Client)}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		s.client.Kill()
		return nil, ctx.Err()
	}
	if r.err != nil {
		diag := ""
		if s.runner != nil {
			diag = strings.TrimSpace(s.runner.stderrTail.String())
		}
		if s.runner != nil && s.runner.proc != nil && diag == "" {
			select {
			case <-s.runner.proc.Done():
				how := "the exec stream broke"
				ex, werr := s.runner.proc.Wait()
				if werr == nil {
					how = fmt.Sprintf("exit status %d", ex.Code)
				} else {
					how += ": " + werr.Error()
				}
				s.client.Kill()
				return nil, &silentStart{name: bundle.Name, how: how, err: r.err}
			case <-time.After(time.Second):
			}
		}
		s.client.Kill()
		if s.runner != nil {
			diag = strings.TrimSpace(s.StderrTail())
		}
		if diag != "" {
			return nil, fmt.Errorf("plugin %s did not start: %w\nplugin stderr:\n%s", bundle.Name, r.err, diag)
		}
		return nil, fmt.Errorf("plugin %s did not start: %w (is it a lab plugin built with plugins.Serve and the current handshake?)", bundle.Name, r.err)
	}
	s.Bench = r.b
	// gRPC connects lazily and TLS errors only surface at the first call:
	// make a real one before declaring the plugin up.
	served, err := s.Bench.Describe(ctx)
	if err != nil {
		s.Close()
		if tail := strings.TrimSpace(s.StderrTail()); tail != "" {
			err = fmt.Errorf("%w\nplugin stderr:\n%s", err, tail)
		}
		return nil, fmt.Errorf("plugin %s started but does not answer: %w", bundle.Name, err)
	}
	// The record was checked against the binary's hash; a binary that
	// serves another description than the description.json it was built
	// with (a plugin passing Serve something else) is refused, since the
	// host checked the run's parameters against the record.
	if bundle.Description != nil && !reflect.DeepEqual(served, bundle.Description) {
		s.Close()
		return nil, fmt.Errorf("plugin %s serves a description that differs from its recorded %s; it must hand Serve its embedded description.json (rebuild with `make plugins` or `lab plugin build DIR`)",
			bundle.Name, filepath.Join(bundle.Dir, RecordFile))
	}
	s.Ready = time.Now()
	return s, nil
}

// clientConfig is the go-plugin client side of every plugin session, less
// how the plugin is started. AutoMTLS is off: it would make a P-521 key
// pair in the guest on every start. The host pins the VM's CA, its own
// client certificate and PluginServerName instead (t.ClientTLS), and the
// plugin is handed its certificate at start (t.PluginEnv); with its
// TLSProvider go-plugin makes no key in the guest.
func clientConfig(t *VMTLS, startTimeout time.Duration, logger hclog.Logger) *plugin.ClientConfig {
	cfg := &plugin.ClientConfig{
		HandshakeConfig:  Handshake,
		Plugins:          PluginMap,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		TLSConfig:        t.ClientTLS(),
		SkipHostEnv:      true,
		StartTimeout:     startTimeout,
		Logger:           logger,
	}
	if dir := socketTempDir(t); dir != "" {
		cfg.UnixSocketConfig = &plugin.UnixSocketConfig{TempDir: dir}
	}
	return cfg
}

// go-plugin makes a directory (plugin-dir*) for each client, where the
// runner's tunnel sockets live, and removes it when the client is killed.
// A run killed outright (SIGKILL, a lost terminal) never kills it: in
// /tmp, where go-plugin puts it by default, such directories piled up.
// So it is made in the VM's state dir, which goes when the VM goes (a
// throwaway VM's with its run), and each open removes those of runs that
// are gone (removeStaleSocketDirs): a VM that stays up keeps none for long.

// maxSocketPath is the longest unix socket path (sun_path less its NUL).
const maxSocketPath = 107

// socketTempDir is where go-plugin's socket dirs go for the VM whose TLS
// material is t: the VM's state dir, or "" (the default, /tmp) when a
// tunnel socket's path there would be too long for a unix socket.
func socketTempDir(t *VMTLS) string {
	if t == nil || t.Path == "" {
		return ""
	}
	dir := filepath.Dir(t.Path)
	// plugin-dir + MkdirTemp's random digits, then PluginToHost's name.
	if len(dir)+len("/plugin-dir0123456789/tunnel-0123456789ab.sock") > maxSocketPath {
		return ""
	}
	return dir
}

// removeStaleSocketDirs removes the socket dirs in dir of plugin clients
// that are gone: no socket in them is listened on (a killed run leaves its
// socket files). A dir without sockets is a client starting, or one that
// never got as far: kept. Who listens is read from /proc/net/unix, not
// found by connecting: a connection would reach a live run's plugin.
func removeStaleSocketDirs(dir string) {
	listening, err := listeningUnixSockets()
	if err != nil {
		return // cannot tell: keep everything
	}
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if !de.IsDir() || !strings.HasPrefix(de.Name(), "plugin-dir") {
			continue
		}
		p := filepath.Join(dir, de.Name())
		socks, _ := filepath.Glob(filepath.Join(p, "*.sock"))
		if len(socks) == 0 {
			continue
		}
		live := false
		for _, s := range socks {
			live = live || listening[s]
		}
		if !live {
			_ = os.RemoveAll(p)
		}
	}
}

// listeningUnixSockets is the set of paths of the unix sockets listening
// in this network namespace (/proc/net/unix, flag __SO_ACCEPTCON).
func listeningUnixSockets() (map[string]bool, error) {
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		// Num RefCount Protocol Flags Type St Inode Path
		if len(f) < 8 {
			continue
		}
		flags, err := strconv.ParseUint(f[3], 16, 32)
		if err == nil && flags&0x10000 != 0 {
			out[strings.Join(f[7:], " ")] = true
		}
	}
	return out, nil
}

// StderrTail is the last 20 lines the plugin wrote to stderr, less
// go-plugin's own chatter (its JSON log lines below warning level).
func (s *Session) StderrTail() string {
	if s.runner == nil || s.runner.stderrTail == nil {
		return ""
	}
	var keep []string
	for _, line := range strings.Split(s.runner.stderrTail.String(), "\n") {
		if strings.HasPrefix(line, `{"@level":"`) {
			lvl, _, _ := strings.Cut(strings.TrimPrefix(line, `{"@level":"`), `"`)
			if lvl == "trace" || lvl == "debug" || lvl == "info" {
				continue
			}
		}
		keep = append(keep, line)
	}
	for len(keep) > 0 && strings.TrimSpace(keep[len(keep)-1]) == "" {
		keep = keep[:len(keep)-1]
	}
	if len(keep) > 20 {
		keep = keep[len(keep)-20:]
	}
	return strings.Join(keep, "\n")
}

// Pushed reports how many bundle files were transferred and how many the
// guest already held, and how long the push took.
func (s *Session) Pushed() (sent, cached int, took time.Duration) {
	return s.runner.pushed, s.runner.cached, s.runner.pushTime
}

// Exit waits up to d for the plugin process to end and reports how: exited
// is false if it still runs; linkErr is set if the link to the guest was
// lost instead (the guest died or the VM went down).
func (s *Session) Exit(d time.Duration) (code int, exited bool, linkErr error) {
	select {
	case <-s.runner.proc.Done():
	case <-time.After(d):
		return 0, false, nil
	}
	ex, err := s.runner.proc.Wait()
	if err != nil {
		return 0, true, err
	}
	return ex.Code, true, nil
}

// Close stops the plugin (gracefully, then by kill), waiting at most
// killWait: go-plugin's Kill waits for the plugin's output to end, and
// a guest that stopped answering must not hold lab for ever.
func (s *Session) Close() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.client.Kill()
	}()
	select {
	case <-done:
	case <-time.After(killWait):
		// go-plugin's Kill is left waiting; the link's own close (the
		// caller's next step) ends the guest process.
	}
}

// killWait bounds Session.Close.
const killWait = 15 * time.Second

// LeftBehind says what the agent had to clean up once the plugin
// exited: the processes it left running outside its process group (a
// session of its own), killed, and its temporary directory if it left
// anything there; nil if the plugin has not exited or left nothing.
func (s *Session) LeftBehind() []string {
	if s.runner == nil || s.runner.proc == nil {
		return nil
	}
	select {
	case <-s.runner.proc.Done():
	default:
		return nil
	}
	ex, err := s.runner.proc.Wait()
	if err != nil {
		return nil
	}
	var out []string
	if len(ex.Leftovers) > 0 {
		out = append(out, fmt.Sprintf("killed %d process(es) the plugin left running outside its process group: %s", len(ex.Leftovers), strings.Join(ex.Leftovers, ", ")))
	}
	if ex.Removed != "" {
		out = append(out, "removed what the plugin left in its temporary directory "+ex.Removed)
	}
	return out
}

// Dropped says what of the plugin's stdout and stderr lab dropped, one
// line each ("" for none): the output it queued past its cap.
func (s *Session) Dropped() []string {
	var out []string
	if s.runner == nil || s.runner.stdout == nil {
		return nil
	}
	for _, d := range []string{s.runner.stdout.describe("stdout"), s.runner.stderr.describe("stderr")} {
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}
