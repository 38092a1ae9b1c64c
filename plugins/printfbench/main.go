// Command printfbench is lab's plugin for E3 (SEEDS.md): what printf
// costs depends on where stdout goes, the virtual terminal on screen, one
// not shown, the serial console, a pty, a pipe, /dev/null or a file, and
// what recording an event costs when it is printed to the VT on screen or
// the serial console, written to a file, counted, or handed to another
// process. The measuring is done by the C
// workloads in workload/, run as separate processes; this program serves
// them to lab. What it can run, its claims and the published figures are
// in description.json.
package main

import (
	_ "embed"

	"lab/plugins"
)

//go:embed description.json
var description []byte

func main() {
	plugins.Serve(description, bench{desc: plugins.MustParseDescription(description), sys: guestSystem{}})
}
