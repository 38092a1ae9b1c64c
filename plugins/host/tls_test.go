package host

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"lab/internal/labtest"
	"lab/plugins"
)

// testPluginEnv makes this test binary a plugin: TestMain then serves
// tlsBench through the SDK's real plugins.Serve, as a plugin in a guest
// does, and exits.
const testPluginEnv = "LAB_HOST_TEST_PLUGIN"

var tlsTestDescription = []byte(`{"name": "tlstest", "version": "0.0.1", "summary": "serves the host package's TLS tests",
  "experiments": [{"name": "env", "summary": "reports what the plugin's environment holds",
    "metrics": [{"name": "tick", "unit": "x", "help": "a counter"}]}]}`)

// tlsBench reports, in the response's Log, which TLS variables the
// plugin's environment still holds once it serves: none, since the SDK
// takes them out and AutoMTLS is off.
type tlsBench struct{}

func (tlsBench) Run(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
	var held []string
	for _, k := range []string{plugins.TLSCertEnv, plugins.TLSKeyEnv, plugins.TLSCAEnv, "PLUGIN_CLIENT_CERT"} {
		if _, ok := os.LookupEnv(k); ok {
			held = append(held, k)
		}
	}
	return &plugins.RunResponse{Outcome: plugins.Outcome{Status: plugins.StatusOK}, Log: "env:" + strings.Join(held, ",")}, nil
}

func TestMain(m *testing.M) {
	if os.Getenv(testPluginEnv) == "1" {
		plugins.Serve(tlsTestDescription, tlsBench{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testTLS makes the TLS material of a VM called name in a temp state dir.
func testTLS(t *testing.T, name string) *VMTLS {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	v, err := EnsureTLS(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// startPlugin runs this test binary as a plugin on the host, handed
// pluginEnv, and connects to it with go-plugin's real client configured by
// clientConfig (as Open does, but with Cmd for the guest runner), with
// clientTLS as its TLS config. It returns the plugin's answer to Describe
// and a Run, or the first error, and what the plugin wrote to stderr.
func startPlugin(t *testing.T, host *VMTLS, clientTLS *tls.Config, pluginEnv []string) (*plugins.RunResponse, error, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stderr labtest.SyncBuffer
	cfg := clientConfig(host, 30*time.Second, hclog.New(&hclog.LoggerOptions{Level: hclog.Off, Output: io.Discard}))
	cfg.TLSConfig = clientTLS
	cmd := exec.Command(exe)
	cmd.Env = append([]string{testPluginEnv + "=1", "TMPDIR=" + t.TempDir()}, pluginEnv...)
	cfg.Cmd = cmd
	cfg.Stderr = &stderr
	c := plugin.NewClient(cfg)
	defer c.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rpc, err := c.Client()
	if err != nil {
		return nil, err, stderr.String()
	}
	raw, err := rpc.Dispense(plugins.PluginName)
	if err != nil {
		return nil, err, stderr.String()
	}
	b := raw.(*plugins.Client)
	d, err := b.Describe(ctx)
	if err != nil {
		return nil, err, stderr.String()
	}
	if d.Name != "tlstest" {
		t.Errorf("Describe answered %q, want tlstest", d.Name)
	}
	resp, err := b.Run(ctx, &plugins.RunRequest{Experiment: "env", Repeat: 1}, func(plugins.Progress) {})
	return resp, err, stderr.String()
}

// A matching pair works: the host pins the VM's CA and the plugin holds
// the VM's certificate; the plugin no longer holds the TLS material in its
// environment (its workloads inherit it) and was not given AutoMTLS's
// PLUGIN_CLIENT_CERT.
func TestTLSMatchingPair(t *testing.T) {
	a := testTLS(t, "a")
	resp, err, stderr := startPlugin(t, a, a.ClientTLS(), a.PluginEnv())
	if err != nil {
		t.Fatalf("plugin with vm a's certificate, host pinning vm a: %v\nplugin stderr:\n%s", err, stderr)
	}
	if resp.Log != "env:" {
		t.Errorf("the serving plugin's environment still holds %q, want none of the TLS variables", strings.TrimPrefix(resp.Log, "env:"))
	}
}

// The host refuses a plugin presenting another VM's certificate. The
// plugin is given vm a's CA, so it would accept the host: only the host's
// pin decides.
func TestTLSRefusesAnotherVMsPlugin(t *testing.T) {
	a, b := testTLS(t, "a"), testTLS(t, "b")
	env := append(b.PluginEnv()[:2:2], a.PluginEnv()[2])
	if !strings.HasPrefix(env[2], plugins.TLSCAEnv+"=") {
		t.Fatalf("PluginEnv order changed: %q", env[2][:20])
	}
	_, err, stderr := startPlugin(t, a, a.ClientTLS(), env)
	if err == nil {
		t.Fatalf("the host pinning vm a talked to a plugin holding vm b's certificate\nplugin stderr:\n%s", stderr)
	}
	if !strings.Contains(err.Error(), "certificate") {
		t.Errorf("error %q does not say it is about the certificate", err)
	}
	t.Logf("refused: %v", err)
}

// The plugin refuses a host without the VM's client certificate: another
// VM's, none, TLS below 1.3, or plaintext.
func TestTLSPluginRefusesClient(t *testing.T) {
	a, b := testTLS(t, "a"), testTLS(t, "b")
	otherCert := a.ClientTLS()
	// Sent whatever CAs the plugin asks for: with Certificates alone the
	// client withholds a certificate the plugin's CA did not sign, and the
	// plugin's check of it would go untested.
	bHost := b.host
	otherCert.Certificates = nil
	otherCert.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &bHost, nil }
	noCert := a.ClientTLS()
	noCert.Certificates = nil
	tls12 := a.ClientTLS()
	tls12.MinVersion, tls12.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	for _, tt := range []struct {
		name string
		cfg  *tls.Config
		want string // in the host's error: the plugin's TLS alert
	}{
		{"another VM's client certificate", otherCert, "tls: unknown certificate authority"},
		{"no client certificate", noCert, "tls: certificate required"},
		{"TLS 1.2", tls12, "tls: protocol version not supported"},
		{"plaintext", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err, stderr := startPlugin(t, a, tt.cfg, a.PluginEnv())
			if err == nil {
				t.Fatalf("the plugin of vm a served a host with %s\nplugin stderr:\n%s", tt.name, stderr)
			}
			t.Logf("refused: %v", err)
			if tt.cfg == nil {
				// gRPC may see the connection close before or after it
				// reads the plugin's answer; a client that reads gets it:
				// a TLS alert record, never an HTTP/2 frame.
				if answer := readPlaintextAnswer(t, a.PluginEnv()); len(answer) > 0 && answer[0] != 0x15 {
					t.Errorf("the plugin answered an HTTP/2 preface in plaintext with % x", answer)
				}
				return
			}
			// Under TLS 1.3 the client's handshake is over before the
			// plugin checks its certificate, so gRPC may be writing its
			// preface when the alert arrives, and report the closed
			// connection instead. A client that reads gets the alert.
			alert := readAlert(t, a.PluginEnv(), tt.cfg)
			if !strings.Contains(alert, tt.want) {
				t.Errorf("the plugin's answer to a TLS client with %s is %q; want %q", tt.name, alert, tt.want)
			}
		})
	}
}

// withPluginConn starts the plugin handed env and calls use with a
// connection to its socket (closed after, with a 10 s deadline set).
func withPluginConn(t *testing.T, env []string, use func(c net.Conn)) {
	t.Helper()
	line, stderr := runPluginDirectly(t, env, func(line string) {
		parts := strings.Split(line, "|")
		if len(parts) < 4 {
			t.Errorf("handshake line %q", line)
			return
		}
		c, err := net.Dial(parts[2], parts[3])
		if err != nil {
			t.Errorf("dial: %v", err)
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		use(c)
	})
	if line == "" {
		t.Fatalf("the plugin did not serve\nstderr:\n%s", stderr)
	}
}

// readPlaintextAnswer sends the plugin an HTTP/2 client preface in
// plaintext and returns what it answers before it closes the connection.
func readPlaintextAnswer(t *testing.T, env []string) []byte {
	t.Helper()
	var answer []byte
	withPluginConn(t, env, func(c net.Conn) {
		_, _ = c.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
		answer, _ = io.ReadAll(c)
	})
	return answer
}

// readAlert connects to the plugin over TLS with cfg and returns the error
// of the first read (the plugin's alert).
func readAlert(t *testing.T, env []string, cfg *tls.Config) string {
	t.Helper()
	var alert string
	withPluginConn(t, env, func(c net.Conn) {
		cfg := cfg.Clone()
		cfg.NextProtos = []string{"h2"}
		tc := tls.Client(c, cfg)
		if err := tc.Handshake(); err != nil {
			alert = err.Error()
			return
		}
		_, err := tc.Read(make([]byte, 1))
		alert = fmt.Sprint(err)
	})
	return alert
}

// runPluginDirectly runs this test binary as a plugin with go-plugin's
// environment (the magic cookie, protocol versions) plus
// env, and returns its handshake line (empty if it exited without one) and
// its stderr. It calls serving (if not nil) with the line while the plugin
// serves, then kills it.
func runPluginDirectly(t *testing.T, env []string, serving func(line string)) (string, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append([]string{testPluginEnv + "=1", "TMPDIR=" + t.TempDir(),
		plugins.Handshake.MagicCookieKey + "=" + plugins.Handshake.MagicCookieValue,
		fmt.Sprintf("PLUGIN_PROTOCOL_VERSIONS=%d", plugins.Handshake.ProtocolVersion)}, env...)
	var stderr labtest.SyncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		done <- strings.TrimSpace(line)
	}()
	var line string
	select {
	case line = <-done:
	case <-time.After(30 * time.Second):
		t.Error("the plugin neither served nor exited in 30 s")
	}
	if line != "" && serving != nil {
		serving(line)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return line, stderr.String()
}

// go-plugin replaces the host's RootCAs with a pool of the certificate a
// handshake line carries (AutoMTLS). Whatever runs in the guest could so
// name a certificate of its own; the host's VerifyConnection still checks
// against the VM's CA and refuses it.
func TestTLSClientPinSurvivesRootCAsReplaced(t *testing.T) {
	a := testTLS(t, "a")
	rogue := selfSigned(t, PluginServerName)
	leaf, err := x509.ParseCertificate(rogue.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	replaced := x509.NewCertPool()
	replaced.AddCert(leaf)

	// A socket pair, not net.Pipe: both ends write at once in a TLS 1.3
	// handshake, which an unbuffered pipe deadlocks on.
	handshake := func(cfg *tls.Config) error {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			s, err := ln.Accept()
			if err != nil {
				return
			}
			defer s.Close()
			_ = s.SetDeadline(time.Now().Add(10 * time.Second))
			_ = tls.Server(s, &tls.Config{Certificates: []tls.Certificate{rogue}, MinVersion: tls.VersionTLS13}).Handshake()
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		return tls.Client(c, cfg).Handshake()
	}

	cfg := a.ClientTLS()
	cfg.RootCAs = replaced // what go-plugin's loadServerCert does
	err = handshake(cfg)
	if err == nil {
		t.Fatal("the host accepted a plugin certificate not issued by the VM's CA once RootCAs was replaced")
	}
	if !strings.Contains(err.Error(), "not the one lab made for vm a") {
		t.Errorf("error %q does not say the certificate is not vm a's", err)
	}
	// The check above can fail: without VerifyConnection the same
	// handshake succeeds.
	cfg = a.ClientTLS()
	cfg.RootCAs, cfg.VerifyConnection = replaced, nil
	if err := handshake(cfg); err != nil {
		t.Fatalf("control: the handshake without VerifyConnection failed too (%v), so the test proves nothing", err)
	}
}

func selfSigned(t *testing.T, dnsName string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// EnsureTLS makes the material once, mode 0600, P-256 keys, back-dated
// NotBefore; later calls (and racing ones) load the same.
func TestEnsureTLS(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vm")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	const n = 8
	got := make([]*VMTLS, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = EnsureTLS(dir, "vm")
		}()
	}
	wg.Wait()
	t.Logf("%d racing EnsureTLS calls took %v", n, time.Since(start))
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("EnsureTLS: %v", errs[i])
		}
		if !got[i].ca.Equal(got[0].ca) {
			t.Fatalf("racing EnsureTLS calls returned different CAs")
		}
	}
	v := got[0]
	info, err := os.Stat(filepath.Join(dir, TLSFile))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", TLSFile, info.Mode().Perm())
	}
	if des, _ := os.ReadDir(dir); len(des) != 1 {
		t.Errorf("the state dir holds %d entries, want only %s (temp files left?)", len(des), TLSFile)
	}
	if v.Path != filepath.Join(dir, TLSFile) || v.VM != "vm" {
		t.Errorf("VM %q Path %q", v.VM, v.Path)
	}
	for _, c := range [][]byte{v.ca.Raw, v.host.Certificate[0], pemDER(t, v.pluginCertPEM)} {
		cert, err := x509.ParseCertificate(c)
		if err != nil {
			t.Fatal(err)
		}
		pub, ok := cert.PublicKey.(*ecdsa.PublicKey)
		if !ok || pub.Curve != elliptic.P256() {
			t.Errorf("%s: key %T, want ECDSA P-256", cert.Subject.CommonName, cert.PublicKey)
		}
		if back := start.Sub(cert.NotBefore); back < 59*time.Minute {
			t.Errorf("%s: NotBefore only %v before now; a guest clock a little behind would refuse it", cert.Subject.CommonName, back)
		}
	}
	again, err := EnsureTLS(dir, "vm")
	if err != nil || !again.ca.Equal(v.ca) || !bytes.Equal(again.pluginKeyPEM, v.pluginKeyPEM) {
		t.Errorf("a second EnsureTLS did not load the stored material (err %v)", err)
	}
	// The CA's key is not kept: nothing more can be issued.
	b, _ := os.ReadFile(filepath.Join(dir, TLSFile))
	if n := bytes.Count(b, []byte("BEGIN PRIVATE KEY")); n != 2 {
		t.Errorf("%s holds %d private keys, want 2 (host and plugin; the CA's is thrown away)", TLSFile, n)
	}
}

func TestMakeTLSIsFast(t *testing.T) {
	start := time.Now()
	if _, err := makeTLS("vm", time.Now()); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("makeTLS took %v", took)
	if took > 500*time.Millisecond {
		t.Errorf("making a VM's certificates took %v; P-256 should take milliseconds", took)
	}
}

// A corrupt or mismatched file is an error naming it and the fix, not
// silently replaced.
func TestLoadTLSRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, TLSFile)
	a, err := makeTLS("a", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b, err := makeTLS("b", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	old, err := makeTLS("old", time.Now().Add(-11*365*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// a's CA with b's certificates: they do not chain.
	mixed := append(bytes.Clone(a[:bytes.Index(a, []byte("-----END CERTIFICATE-----"))+len("-----END CERTIFICATE-----\n")]),
		b[bytes.Index(b, []byte("-----END CERTIFICATE-----"))+len("-----END CERTIFICATE-----\n"):]...)
	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "no CERTIFICATE block"},
		{"truncated", a[:len(a)/2], "block"},
		{"mixed VMs", mixed, "unknown authority"},
		{"expired", old, "expired"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(path, tt.data, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := EnsureTLS(dir, "vm")
			if err == nil {
				t.Fatal("EnsureTLS accepted it")
			}
			for _, w := range []string{"vm vm", path, tt.want, "remove the file"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if _, err := LoadTLS(filepath.Join(dir, "nosuch"), "vm"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadTLS of a missing file: %v, want os.ErrNotExist", err)
	}
}

func pemDER(t *testing.T, b []byte) []byte {
	t.Helper()
	p, _ := pem.Decode(b)
	if p == nil {
		t.Fatal("no PEM block")
	}
	return p.Bytes
}

// plugins.Serve speaks go-plugin's protocol without go-plugin: its
// client's health check passes, and its Kill asks the plugin to shut down
// through the controller service, so the plugin exits by itself with
// status 0 rather than being killed after go-plugin's 2 s grace.
func TestGoPluginProtocol(t *testing.T) {
	a := testTLS(t, "a")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stderr labtest.SyncBuffer
	cfg := clientConfig(a, 30*time.Second, hclog.New(&hclog.LoggerOptions{Level: hclog.Off, Output: io.Discard}))
	cmd := exec.Command(exe)
	cmd.Env = append([]string{testPluginEnv + "=1", "TMPDIR=" + t.TempDir()}, a.PluginEnv()...)
	cfg.Cmd = cmd
	cfg.Stderr = &stderr
	c := plugin.NewClient(cfg)
	defer c.Kill()
	rpc, err := c.Client()
	if err != nil {
		t.Fatalf("go-plugin client: %v\nplugin stderr:\n%s", err, stderr.String())
	}
	if err := rpc.Ping(); err != nil {
		t.Errorf("health check (go-plugin's Ping): %v", err)
	}
	if v := c.NegotiatedVersion(); v != int(plugins.Handshake.ProtocolVersion) {
		t.Errorf("negotiated protocol %d, want %d", v, plugins.Handshake.ProtocolVersion)
	}
	start := time.Now()
	c.Kill()
	took := time.Since(start)
	if cmd.ProcessState == nil {
		t.Fatal("Kill returned before the plugin exited")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 || took > 1500*time.Millisecond {
		t.Errorf("after Kill the plugin ended with status %d in %v; want status 0 well before go-plugin's 2 s force-kill (%s)\nplugin stderr:\n%s",
			code, took, cmd.ProcessState, stderr.String())
	}
}

// The hand-described health service answers as grpc's own does:
// SERVING for go-plugin's service name and for the server as a whole,
// NotFound for any other service.
func TestGoPluginHealth(t *testing.T) {
	a := testTLS(t, "a")
	checked := false
	line, stderr := runPluginDirectly(t, a.PluginEnv(), func(line string) {
		parts := strings.Split(line, "|")
		conn, err := grpc.NewClient("unix:"+parts[3], grpc.WithTransportCredentials(credentials.NewTLS(a.ClientTLS())))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		h := grpc_health_v1.NewHealthClient(conn)
		for _, svc := range []string{"plugin", ""} {
			resp, err := h.Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: svc})
			if err != nil || resp.GetStatus() != grpc_health_v1.HealthCheckResponse_SERVING {
				t.Errorf("health check of %q: %v, %v; want SERVING", svc, resp.GetStatus(), err)
			}
		}
		if _, err := h.Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: "nope"}); status.Code(err) != codes.NotFound {
			t.Errorf("health check of an unknown service: %v; want NotFound", err)
		}
		checked = true
	})
	if !checked {
		t.Fatalf("the plugin did not serve (handshake line %q)\nstderr:\n%s", line, stderr)
	}
}
