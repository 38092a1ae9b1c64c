// Command netbench is lab's plugin for E5 (SEEDS.md): Stevens' nine
// server designs (UNP vol. 1, ch. 30), from the iterative server to
// pre-threaded ones, and the server CPU time each costs against the
// book's clients. The servers, the client and its daemon for a second
// guest are the C workloads in workload/, run as separate processes;
// this program serves them to lab. What it can run, its claims and the
// published figures are in description.json.
package main

import (
	_ "embed"

	"lab/plugins"
)

//go:embed description.json
var description []byte

func main() { plugins.Serve(description, bench{desc: plugins.MustParseDescription(description)}) }
