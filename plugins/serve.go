package plugins

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// WorkloadDirEnv names the environment variable that tells a plugin where
// its workload binaries are. The host sets it when it pushes the plugin.
const WorkloadDirEnv = "LAB_WORKLOAD_DIR"

// The TLS material lab hands a plugin when it starts it, as PEM in the
// environment of the exec request (never written to the guest's disk): the
// plugin's certificate and key, made on the host for this VM, and the VM's
// CA, which signed the host's client certificate. lab makes the keys on
// the host because go-plugin's AutoMTLS makes a P-521 key pair inside the
// guest on every start, most of a plugin's start under TCG.
const (
	TLSCertEnv = "LAB_PLUGIN_TLS_CERT"
	TLSKeyEnv  = "LAB_PLUGIN_TLS_KEY"
	TLSCAEnv   = "LAB_PLUGIN_TLS_CA"
)

// DescriptionFile is the file in a plugin's source directory that
// declares what it can run: lab.plugin.v1.Description in the proto's
// canonical JSON form, embedded in the binary and handed to Serve.
const DescriptionFile = "description.json"

// GuestBuildTags are the build tags `lab plugin build` builds a plugin
// with: grpcnotrace leaves gRPC's x/net/trace (and with it html/template)
// out of the binary.
const GuestBuildTags = "grpcnotrace"

// PluginName is the name the Benchmark is served and dispensed under.
const PluginName = "benchmark"

// HandshakeConfig is what lab and a plugin check before they talk; it has
// the fields of go-plugin's HandshakeConfig, which the host converts it to
// (the SDK does not link go-plugin: see Serve).
type HandshakeConfig struct {
	ProtocolVersion  uint
	MagicCookieKey   string
	MagicCookieValue string
}

// Handshake is shared by lab and every plugin. go-plugin refuses to talk
// when the protocol versions differ, so bump ProtocolVersion whenever
// wire/benchmark.proto changes in a way an older peer would misread.
// Version 1 was the hand-written JSON service; 2 is lab.plugin.v1. The
// magic cookie is not a secret: it only makes a plugin binary run by hand
// say it must be started by lab instead of serving to nobody.
var Handshake = HandshakeConfig{
	ProtocolVersion:  2,
	MagicCookieKey:   "LAB_PLUGIN",
	MagicCookieValue: "68e4a3e4b175520ff9811658e7015d75a22cabfdfbe1fa09",
}

// Serve serves b, described by description (the plugin's description.json,
// embedded), and returns when the host is done with the plugin. It is all a
// plugin's main does:
//
//	//go:embed description.json
//	var description []byte
//
//	func main() { plugins.Serve(description, bench{}) }
//
// A description that does not parse or validate ends the program with
// status 2 (`lab plugin build` refuses such a plugin before it is built).
// It serves only over mutual TLS with the certificate lab hands it at
// start (TLSCertEnv, TLSKeyEnv, TLSCAEnv); started without one (by hand)
// it says it must be started by lab and exits with status 1.
//
// Serve speaks the plugin side of go-plugin's gRPC protocol itself
// (goplugin.go) rather than calling go-plugin's Serve, whose package links
// net/rpc and html/template into every plugin binary: see docs/DESIGN.md.
func Serve(description []byte, b Benchmark) {
	d, err := ParseDescription(description)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(2)
	}
	tc, err := serverTLSFromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "plugin %s: %v\n", d.Name, err)
		os.Exit(1)
	}
	if os.Getenv(Handshake.MagicCookieKey) != Handshake.MagicCookieValue {
		fmt.Fprintf(os.Stderr, "plugin %s: this binary is a lab plugin; it must be started by lab (`lab run %s`), which runs it in a guest\n", d.Name, d.Name)
		os.Exit(1)
	}
	protectFromOOM()
	if err := serveGoPlugin(d, b, tc, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "plugin %s: %v\n", d.Name, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// errNoTLS is a plugin started without the TLS material lab hands over.
var errNoTLS = errors.New("no TLS certificate in the environment (" + TLSCertEnv + ", " + TLSKeyEnv + ", " + TLSCAEnv +
	"): a plugin must be started by lab (`lab run`), which hands it the certificate it made for the VM; it does not serve without TLS")

// serverTLSFromEnv is the plugin's TLS config from the material lab put in
// its environment, which it then removes: the workloads a plugin starts
// inherit its environment and have no use for its key.
func serverTLSFromEnv() (*tls.Config, error) {
	cert, key, ca := os.Getenv(TLSCertEnv), os.Getenv(TLSKeyEnv), os.Getenv(TLSCAEnv)
	for _, k := range []string{TLSCertEnv, TLSKeyEnv, TLSCAEnv} {
		os.Unsetenv(k)
	}
	if cert == "" || key == "" || ca == "" {
		return nil, errNoTLS
	}
	return serverTLS([]byte(cert), []byte(key), []byte(ca))
}

// serverTLS pins the plugin's end: it presents its certificate and accepts
// only a client certificate the VM's CA signed (the host's), over TLS 1.3.
func serverTLS(certPEM, keyPEM, caPEM []byte) (*tls.Config, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("the TLS certificate lab handed over (%s, %s) does not load: %w; start the plugin with `lab run`", TLSCertEnv, TLSKeyEnv, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("the CA lab handed over (%s) holds no PEM certificate; start the plugin with `lab run`", TLSCAEnv)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS13,
	}, nil
}

// MustParseDescription is ParseDescription for a plugin's own embedded
// description.json, which its tests and `lab plugin build` have already
// checked: it panics on an error.
func MustParseDescription(description []byte) *Description {
	d, err := ParseDescription(description)
	if err != nil {
		panic(err)
	}
	return d
}
