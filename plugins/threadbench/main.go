// Command threadbench is lab's plugin for processes against threads at
// scale: E1's fork.c / thread.c printing "hello linux" from many workers
// (steps 1, 3 and 5), the 3G/1G thread limit and crash (step 2), and E4's
// thread-per-request against one thread (SEEDS.md). The measuring is done
// by the C workloads in workload/, run as separate processes; this program
// serves them to lab. What it can run, its claims and the published
// figures are in description.json.
package main

import (
	_ "embed"

	"lab/plugins"
)

//go:embed description.json
var description []byte

func main() { plugins.Serve(description, bench{desc: plugins.MustParseDescription(description)}) }
