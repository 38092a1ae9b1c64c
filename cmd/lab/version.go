package main

import (
	"runtime/debug"
	"strings"
)

// version and commit are set at build time by the Makefile:
//
//	go build -ldflags "-X main.version=... -X main.commit=..." ./cmd/lab
//
// A plain `go build` leaves them empty; commit then comes from the VCS
// stamp Go writes into the binary (debug.ReadBuildInfo).
var (
	version string
	commit  string
)

// buildInfo is what a binary knows about where it came from.
type buildInfo struct {
	version, commit string
	modified        bool
}

// buildVersion returns the -ldflags values, filling what is missing from
// the Go build info.
func buildVersion() buildInfo {
	bi := buildInfo{version: version, commit: commit}
	if info, ok := debug.ReadBuildInfo(); ok {
		bi = fromBuildInfo(bi, info)
	}
	return bi
}

// fromBuildInfo fills bi's empty fields from Go's build info: the module
// version (set by `go install lab@v...`) and the vcs.revision and
// vcs.modified stamps of a build inside a git checkout.
func fromBuildInfo(bi buildInfo, info *debug.BuildInfo) buildInfo {
	if bi.version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		bi.version = info.Main.Version
	}
	if bi.commit == "" {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				bi.commit = s.Value
			case "vcs.modified":
				bi.modified = s.Value == "true"
			}
		}
	}
	return bi
}

// versionString is what `lab --version` prints after "lab version ".
func versionString(bi buildInfo) string {
	v := bi.version
	if v == "" {
		v = "dev"
	}
	c := bi.commit
	switch {
	case c == "":
		c = "unknown"
	case bi.modified && !strings.HasSuffix(c, "-dirty"):
		c += "-dirty"
	}
	return v + " (commit " + c + ")"
}
