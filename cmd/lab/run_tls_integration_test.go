package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lab/plugins/host"
)

// TestIntegrationRunTLS: `lab up` makes the VM's plugin certificates on
// the host (0600 in the state dir); a run works over them; the plugin in
// the guest is handed its certificate in the exec request and was not
// given AutoMTLS's PLUGIN_CLIENT_CERT (so go-plugin made no key pair in the
// guest); the key is on no guest file; and a VM without certificates (one
// booted by an older lab) gets them at `lab run`.
func TestIntegrationRunTLS(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itTestPlugins(t)
	root := itBootEnv(t, p)
	itUp(t, p.Name, "tls")
	path := filepath.Join(root, "tls", host.TLSFile)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("lab up made no plugin certificates: %v", err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", path, info.Mode().Perm())
	}
	made, err := host.LoadTLS(path, "tls")
	if err != nil {
		t.Fatal(err)
	}

	// A slow run, and while it runs, the plugin process's environment as
	// the guest's kernel has it (its initial environment: the SDK only
	// removes the TLS variables from its Go copy, which its workloads
	// inherit).
	ch := make(chan labResult, 1)
	go func() {
		ch <- itLab(t, itRunTimeout, nil, "run", "--json", "--out", t.TempDir(), "labtest", "-e", "slow", "-p", "seconds=4")
	}()
	var environ string
	deadline := time.Now().Add(time.Minute)
	for environ == "" && time.Now().Before(deadline) {
		r := itLab(t, itCallTimeout, nil, "exec", "--no-wait", "--", "sh", "-c",
			`for d in /proc/[0-9]*; do case "$(readlink $d/exe)" in */labtest) cat $d/environ; exit 0;; esac; done`)
		environ = r.stdout
		if environ == "" {
			time.Sleep(200 * time.Millisecond)
		}
	}
	r := <-ch
	if environ == "" {
		t.Fatalf("never saw the labtest plugin running in the guest (lab run: exit %d)\n%s", r.code, r.stderr)
	}
	env := map[string]string{}
	var names []string
	for _, kv := range strings.Split(environ, "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
			names = append(names, k)
		}
	}
	t.Logf("the plugin's environment holds: %s", strings.Join(names, " "))
	if _, ok := env["PLUGIN_CLIENT_CERT"]; ok {
		t.Errorf("the plugin was given PLUGIN_CLIENT_CERT: AutoMTLS is on")
	}
	want := made.PluginEnv()
	for _, kv := range want {
		k, v, _ := strings.Cut(kv, "=")
		if env[k] != v {
			t.Errorf("the plugin was not handed %s as stored in %s", k, path)
		}
	}
	if r.code != 0 {
		t.Fatalf("lab run labtest over the VM's certificates: exit %d\n%s", r.code, r.stderr)
	}
	// Not on the guest's disk (its root is RAM-backed; the places lab and
	// the plugin write to). A line of the key's own bytes, sent on stdin
	// so that it is in no log.
	_, key, _ := strings.Cut(want[1], "=")
	keyLine := strings.Split(key, "\n")[2]
	g := itLab(t, itCallTimeout, strings.NewReader(keyLine+"\n"), "exec", "--", "sh", "-c", `read k; grep -rlF "$k" /var /tmp /root /etc 2>/dev/null; true`)
	if strings.TrimSpace(g.stdout) != "" {
		t.Errorf("the plugin's key is in guest files: %s", g.stdout)
	}

	// A VM booted by an older lab has no certificates: `lab run` makes them.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	res, _ := itRunJSON(t, 0, "labtest", "-e", "ok", "--repeat", "2")
	if res.Outcome.Status != "ok" || len(res.Samples) != 2 {
		t.Fatalf("run on a VM without certificates: %+v, %d samples", res.Outcome, len(res.Samples))
	}
	remade, err := host.LoadTLS(path, "tls")
	if err != nil {
		t.Fatalf("lab run did not make the missing certificates: %v", err)
	}
	if bytes.Equal([]byte(remade.PluginEnv()[1]), []byte(want[1])) {
		t.Errorf("the certificates after removal are the old ones")
	}
	t.Logf("plugin start (push to first RPC answered) with new certificates: %.2fs", res.Harness.OpenSeconds)
}
