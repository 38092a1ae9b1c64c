// Command forkbench is lab's plugin measuring what it costs to create a
// process against a thread: E2's forktime.cc and E1 step 4's forkcreat.c /
// pthreadcreat.c (SEEDS.md). The measuring is done by the C workloads in
// workload/, run as separate processes; this program serves them to lab.
package main

import "lab/plugins"

func main() { plugins.Serve(&bench{}) }
