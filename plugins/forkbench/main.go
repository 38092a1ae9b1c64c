// Command forkbench is lab's plugin measuring what it costs to create a
// process against a thread: E2's forktime.cc and E1 step 4's forkcreat.c /
// pthreadcreat.c (SEEDS.md). The measuring is done by the C workloads in
// workload/, run as separate processes; this program serves them to lab.
// What it can run, and the published figures it is compared with, are in
// description.json.
package main

import (
	_ "embed"

	"lab/plugins"
)

//go:embed description.json
var description []byte

func main() { plugins.Serve(description, bench{desc: plugins.MustParseDescription(description)}) }
