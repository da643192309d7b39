// Package buildinfo is the identity of the running binary: its module
// version, the VCS revision and time it was built from, and the Go version,
// read from the build information the Go linker embeds, or stamped with
// -ldflags by the release build (scripts/release.sh).
package buildinfo

import (
	"fmt"
	"runtime/debug"
	"sync"
)

// Stamped by the release build with -ldflags "-X …/internal/buildinfo.version=v1.2.3"
// (and revision, time); each beats what the build information says.
var (
	version  string
	revision string
	time     string
)

// Info is what a binary knows of its own build.
type Info struct {
	// Version is the module version ("v0.4.0"), or "dev" for a build from
	// a checkout that was not stamped.
	Version string
	// Revision is the VCS commit the binary was built from, "" if unknown;
	// Modified says the work tree had changes then.
	Revision string
	Modified bool
	// Time is the commit's time (RFC 3339), "" if unknown.
	Time string
	// GoVersion is the toolchain that built the binary ("go1.26.8").
	GoVersion string
}

// Read returns the running binary's build information; it is read once.
var Read = sync.OnceValue(read)

func read() Info {
	info := Info{Version: "dev"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info.GoVersion = bi.GoVersion
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			info.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.time":
				info.Time = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if version != "" {
		info.Version = version
	}
	if revision != "" {
		info.Revision, info.Modified = revision, false
	}
	if time != "" {
		info.Time = time
	}
	return info
}

// String is the version line of --version: "v0.4.0 (3147e6f0c1d2, 2026-12-04T10:00:00Z, go1.26.8)".
func (i Info) String() string {
	rev := i.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		rev = "unknown revision"
	}
	if i.Modified {
		rev += "+modified"
	}
	when := i.Time
	if when == "" {
		when = "unknown time"
	}
	return fmt.Sprintf("%s (%s, %s, %s)", i.Version, rev, when, i.GoVersion)
}
