package link

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
)

// Operations a stream can carry.
const (
	OpInfo     = "info"     // -> Response.Info
	OpExec     = "exec"     // -> frames (see exec.go)
	OpPut      = "put"      // host sends a file; cached by content hash
	OpGet      = "get"      // guest sends a file, read to EOF, as frames
	OpDial     = "dial"     // splice the stream to a guest socket
	OpSetTime  = "settime"  // set the guest wall clock
	OpEntropy  = "entropy"  // credit host randomness to the guest RNG
	OpPowerOff = "poweroff" // sync and power off
)

// Request opens every stream.
type Request struct {
	Op   string       `json:"op"`
	Exec *ExecRequest `json:"exec,omitempty"`
	Put  *PutRequest  `json:"put,omitempty"`
	// Path is the guest path for OpGet.
	Path string `json:"path,omitempty"`
	// Network and Addr name the guest socket for OpDial.
	Network string `json:"network,omitempty"`
	Addr    string `json:"addr,omitempty"`
	// UnixNano is the host wall clock for OpSetTime.
	UnixNano int64 `json:"unix_nano,omitempty"`
	// Entropy is random bytes for OpEntropy.
	Entropy []byte `json:"entropy,omitempty"`
}

// Response answers a Request before any stream data.
type Response struct {
	// Error is set when the operation was refused or failed.
	Error string `json:"error,omitempty"`
	Info  *Info  `json:"info,omitempty"`
	// Have is set by OpPut when the guest already holds the content.
	Have bool `json:"have,omitempty"`
	// Mode is the mode of the file OpGet is about to send. Its size is not
	// known until EOF (procfs says 0, sysfs 4096, a pipe nothing): the
	// content follows as frames (see FrameData).
	Mode uint32 `json:"mode,omitempty"`
}

// ExecRequest starts a program in the guest.
type ExecRequest struct {
	Argv []string `json:"argv"`
	// Env replaces the agent's default environment when non-nil.
	Env []string `json:"env,omitempty"`
	Dir string   `json:"dir,omitempty"`
	// Stdin says the host will send stdin frames; otherwise stdin is /dev/null.
	Stdin bool `json:"stdin,omitempty"`
	// KillGroup kills the program's whole process group when it exits
	// (plugins: nothing they started outlives them); its output is then
	// sent up to EOF, which the group's death brings.
	//
	// Without it, a background child the program leaves running (`sh -c
	// 'daemon &'`) lives on, and may hold the output pipes open for ever:
	// the exit is sent once the pipes hold nothing more, so all of the
	// program's own output comes first and the child's later output is
	// dropped. Whatever KillGroup says, the group is killed if the host end
	// of the stream goes away while the program runs.
	KillGroup bool `json:"kill_group,omitempty"`
	// Contain, with KillGroup, leaves the guest as the program found it:
	// the program gets a TMPDIR of its own, and its environment a mark
	// (LAB_EXEC_ID) that whatever it starts inherits; when it exits, every
	// process with the mark is killed, even in a session of its own, and
	// the directory removed. Exit says what had to be (Leftovers, Removed).
	Contain bool `json:"contain,omitempty"`
}

// PutRequest sends a file to the guest.
type PutRequest struct {
	Path string `json:"path"`
	Mode uint32 `json:"mode"`
	Size int64  `json:"size"`
	// SHA256 of the content; the guest keeps pushed content by hash, so a
	// second push of the same bytes transfers nothing.
	SHA256 string `json:"sha256"`
}

// Info is what the agent reports about the guest, measured inside it.
type Info struct {
	Uname         string `json:"uname"`
	KernelRelease string `json:"kernel_release"`
	Machine       string `json:"machine"`
	CPUModel      string `json:"cpu_model"`
	CPUFamily     int    `json:"cpu_family"`
	CPUModelNum   int    `json:"cpu_model_number"`
	CPUFlags      string `json:"cpu_flags"`
	OnlineCPUs    int    `json:"online_cpus"`
	PresentCPUs   int    `json:"present_cpus"`
	MemTotalKB    int64  `json:"mem_total_kb"`
	StackKB       int64  `json:"stack_kb"` // -1 = unlimited
	// UptimeAtInit is the guest uptime (s) when the agent started.
	UptimeAtInit float64 `json:"uptime_at_init"`
	// UptimeAtReady is the guest uptime (s) when the link first came up.
	UptimeAtReady float64 `json:"uptime_at_ready"`
	Uptime        float64 `json:"uptime"`
	Session       string  `json:"session"`
	AgentVersion  string  `json:"agent_version"`
}

// maxHeader bounds a header so a corrupt stream cannot make us allocate GBs.
const maxHeader = 1 << 20

// WriteMsg writes v as a length-prefixed JSON header.
func WriteMsg(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	buf := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	copy(buf[4:], b)
	_, err = w.Write(buf)
	return err
}

// ReadMsg reads a length-prefixed JSON header into v, without reading past it.
func ReadMsg(r io.Reader, v any) error {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxHeader {
		return fmt.Errorf("link: header of %d bytes is too large", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
