package host

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"lab/plugins"
)

// TLSFile is the file in a VM's state directory holding the TLS material
// lab uses to talk to plugins in that VM (mode 0600; the directory is 0700
// and goes with the VM at `lab down`).
const TLSFile = "tls.pem"

// PluginServerName is the DNS name in every plugin certificate. The
// plugin's address is a tunnelled unix socket, which names no host, so the
// host asks for this name explicitly. It is the same in every VM: what
// tells VMs apart is their CA.
const PluginServerName = "plugin.lab.invalid"

// Validity of the certificates. NotBefore is back-dated because the guest
// clock may lag the host's a little (the host sets it at link-up and
// before each plugin start, but it drifts under emulation); a VM lives
// until `lab down`, so they last long.
const (
	tlsBackdate = time.Hour
	tlsLifetime = 10 * 365 * 24 * time.Hour
)

// PEM block types and the header naming each block's role in TLSFile.
const (
	pemCert    = "CERTIFICATE"
	pemKey     = "PRIVATE KEY"
	roleHeader = "Lab-Role"
	roleCA     = "ca"
	roleHost   = "host"
	rolePlugin = "plugin"
)

// VMTLS is a VM's TLS material: a CA made for the VM alone, the host's
// client certificate and the plugin's server certificate, both signed by
// it. The CA's key is not kept: once it has signed the two, nothing else
// can be issued under it.
type VMTLS struct {
	// VM is the VM's name; Path the file the material is stored in.
	VM, Path string

	ca                          *x509.Certificate
	caPEM                       []byte
	host                        tls.Certificate
	pluginCertPEM, pluginKeyPEM []byte
}

// EnsureTLS returns the TLS material of the VM called name whose state
// directory is dir, making it if the VM has none (a VM booted by an older
// lab). Making it takes a few milliseconds: the keys are ECDSA P-256, made
// on the host, never in the guest. Two callers racing (`lab up` and a
// `lab run` on the new VM) get the same material: the first to store it
// wins.
func EnsureTLS(dir, name string) (*VMTLS, error) {
	path := filepath.Join(dir, TLSFile)
	t, err := LoadTLS(path, name)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return t, err
	}
	b, err := makeTLS(name, time.Now())
	if err != nil {
		return nil, fmt.Errorf("vm %s: making the plugin certificates: %w", name, err)
	}
	if err := storeNew(path, b); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("vm %s: storing the plugin certificates: %w (is the VM still up? see `lab status`)", name, err)
	}
	return LoadTLS(path, name)
}

// LoadTLS reads the TLS material of the VM called name from path. The
// error wraps os.ErrNotExist when there is none.
func LoadTLS(path, name string) (*VMTLS, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("vm %s: plugin certificates: %w", name, err)
	}
	t, err := parseTLS(b)
	if err == nil {
		err = t.check(time.Now())
	}
	if err != nil {
		return nil, fmt.Errorf("vm %s: plugin certificates %s: %w; remove the file and `lab run` makes new ones", name, path, err)
	}
	t.VM, t.Path = name, path
	return t, nil
}

// ClientTLS is the host's end of the pinning, for go-plugin's
// ClientConfig.TLSConfig: it presents the host certificate, trusts only
// the VM's CA and wants PluginServerName, over TLS 1.3. A new config each
// call: go-plugin writes into the one it is given.
func (t *VMTLS) ClientTLS() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(t.ca)
	// The pool again, out of go-plugin's reach: when a handshake line
	// carries a server certificate (AutoMTLS), go-plugin replaces RootCAs
	// with a pool of just that certificate, so whatever started in the
	// guest could name the certificate the host then trusts.
	pinned := x509.NewCertPool()
	pinned.AddCert(t.ca)
	return &tls.Config{
		Certificates: []tls.Certificate{t.host},
		RootCAs:      pool,
		ServerName:   PluginServerName,
		MinVersion:   tls.VersionTLS13,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return fmt.Errorf("the plugin presented no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
				Roots: pinned, Intermediates: inter, DNSName: PluginServerName,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			})
			if err != nil {
				return fmt.Errorf("the plugin's certificate is not the one lab made for vm %s: %w", t.VM, err)
			}
			return nil
		},
	}
}

// PluginEnv is what the plugin is started with to serve TLS: its
// certificate and key and the CA that signed the host's certificate
// (plugins.Serve reads them). They travel in the exec request over the
// link and are never written to the guest's disk.
func (t *VMTLS) PluginEnv() []string {
	return []string{
		plugins.TLSCertEnv + "=" + string(t.pluginCertPEM),
		plugins.TLSKeyEnv + "=" + string(t.pluginKeyPEM),
		plugins.TLSCAEnv + "=" + string(t.caPEM),
	}
}

// makeTLS makes a VM's CA, host and plugin certificates and returns them
// as the contents of TLSFile.
func makeTLS(name string, now time.Time) ([]byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl, err := certTemplate("lab vm "+name+" CA", now)
	if err != nil {
		return nil, err
	}
	caTmpl.IsCA = true
	caTmpl.BasicConstraintsValid = true
	caTmpl.MaxPathLenZero = true
	caTmpl.KeyUsage = x509.KeyUsageCertSign
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := pem.Encode(&out, &pem.Block{Type: pemCert, Headers: map[string]string{roleHeader: roleCA}, Bytes: caDER}); err != nil {
		return nil, err
	}
	leaves := []struct {
		role, cn string
		usage    x509.ExtKeyUsage
	}{
		{roleHost, "lab host (vm " + name + ")", x509.ExtKeyUsageClientAuth},
		{rolePlugin, PluginServerName, x509.ExtKeyUsageServerAuth},
	}
	for _, l := range leaves {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		tmpl, err := certTemplate(l.cn, now)
		if err != nil {
			return nil, err
		}
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		// One purpose each: the host's certificate cannot serve as a
		// plugin's, nor the plugin's as a client's.
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{l.usage}
		if l.role == rolePlugin {
			tmpl.DNSNames = []string{PluginServerName}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
		if err != nil {
			return nil, err
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, err
		}
		h := map[string]string{roleHeader: l.role}
		if err := pem.Encode(&out, &pem.Block{Type: pemCert, Headers: h, Bytes: der}); err != nil {
			return nil, err
		}
		if err := pem.Encode(&out, &pem.Block{Type: pemKey, Headers: h, Bytes: keyDER}); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

func certTemplate(cn string, now time.Time) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"lab"}},
		NotBefore:    now.Add(-tlsBackdate),
		NotAfter:     now.Add(tlsLifetime),
	}, nil
}

// parseTLS reads the contents of TLSFile.
func parseTLS(b []byte) (*VMTLS, error) {
	blocks := map[string][]byte{} // role/type -> DER
	for {
		var p *pem.Block
		p, b = pem.Decode(b)
		if p == nil {
			break
		}
		k := p.Headers[roleHeader] + "/" + p.Type
		if _, dup := blocks[k]; dup {
			return nil, fmt.Errorf("two %s blocks for %q", p.Type, p.Headers[roleHeader])
		}
		blocks[k] = p.Bytes
	}
	need := func(role, typ string) ([]byte, error) {
		der, ok := blocks[role+"/"+typ]
		if !ok {
			return nil, fmt.Errorf("no %s block for %q", typ, role)
		}
		return der, nil
	}
	caDER, err := need(roleCA, pemCert)
	if err != nil {
		return nil, err
	}
	t := &VMTLS{caPEM: pem.EncodeToMemory(&pem.Block{Type: pemCert, Bytes: caDER})}
	if t.ca, err = x509.ParseCertificate(caDER); err != nil {
		return nil, fmt.Errorf("the CA certificate: %w", err)
	}
	var pems [2][2][]byte
	for i, role := range []string{roleHost, rolePlugin} {
		for j, typ := range []string{pemCert, pemKey} {
			der, err := need(role, typ)
			if err != nil {
				return nil, err
			}
			pems[i][j] = pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
		}
	}
	if t.host, err = tls.X509KeyPair(pems[0][0], pems[0][1]); err != nil {
		return nil, fmt.Errorf("the host certificate: %w", err)
	}
	if _, err := tls.X509KeyPair(pems[1][0], pems[1][1]); err != nil {
		return nil, fmt.Errorf("the plugin certificate: %w", err)
	}
	t.pluginCertPEM, t.pluginKeyPEM = pems[1][0], pems[1][1]
	return t, nil
}

// check verifies that both certificates chain to the CA for their purpose
// and are valid at now.
func (t *VMTLS) check(now time.Time) error {
	roots := x509.NewCertPool()
	roots.AddCert(t.ca)
	host, err := x509.ParseCertificate(t.host.Certificate[0])
	if err != nil {
		return err
	}
	if _, err := host.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return fmt.Errorf("the host certificate: %w", err)
	}
	p, _ := pem.Decode(t.pluginCertPEM)
	plugin, err := x509.ParseCertificate(p.Bytes)
	if err != nil {
		return err
	}
	if _, err := plugin.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, DNSName: PluginServerName, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return fmt.Errorf("the plugin certificate: %w", err)
	}
	return nil
}

// storeNew writes b to path (mode 0600) unless path exists, in which case
// the error wraps os.ErrExist: it writes a temp file and hard-links it
// into place, so a reader never sees a partial file and a racing writer
// never replaces one.
func storeNew(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Link(tmp, path)
}
