package results

// Peer is the second guest of a run whose experiment asked for one (its
// plugins.Peer): which VM it was, how it came up, how the two guests were
// joined and what ran there. A run without a peer has none.
type Peer struct {
	// VM is the peer's name (the run's VM's name and "-peer"); it was a
	// throwaway VM of the same profile, discarded after the run.
	VM string `json:"vm"`
	// Boot says how it came up ("restored from snapshot"...), in
	// BootSeconds (QEMU start to agent ready).
	Boot        string  `json:"boot"`
	BootSeconds float64 `json:"boot_seconds"`
	// Addr is the peer's address on the network, SelfAddr the run's guest's.
	Addr     string `json:"addr"`
	SelfAddr string `json:"self_addr"`
	// Network says how the two were joined.
	Network string `json:"network"`
	// JoinSeconds is from attaching the two NICs to the peer answering a
	// ping from the run's guest.
	JoinSeconds float64 `json:"join_seconds"`
	// Workload and Args are what ran in the peer; ReadySeconds from
	// pushing the plugin's bundle there to the workload printing "ready";
	// FilesSent and FilesCached count the bundle's files.
	Workload     string   `json:"workload"`
	Args         []string `json:"args,omitempty"`
	ReadySeconds float64  `json:"ready_seconds"`
	FilesSent    int      `json:"files_sent"`
	FilesCached  int      `json:"files_cached"`
	// Guest is what the peer's agent reported at boot.
	Guest GuestEnv `json:"guest"`
	// Error is what went wrong with the peer during the run or when it
	// was taken down (its workload died, a NIC that did not come out).
	Error string `json:"error,omitempty"`
}
