package endpoint_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/sandbox"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/bwrap"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/gvisor"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/sandboxtest"
)

// BenchmarkJobRoundTrip is issue 20's figure: create a job, upload 1 KiB,
// run a Python script that copies it and read the output, end to end over
// the MCP endpoint (one session, SQLite), with bubblewrap (with and
// without its seccomp filter, for the filter's cost), gVisor and Docker.
// It reports the median round trip as ms-median/job.
func BenchmarkJobRoundTrip(b *testing.B) {
	b.Run("bwrap", func(b *testing.B) { benchJobs(b, newBwrap(b), "") })
	b.Run("bwrap-nofilter", func(b *testing.B) {
		newBwrap(b) // skips without bwrap
		benchJobs(b, bwrap.New(&bwrap.Options{CgroupName: testCgroup, NoSyscallFilter: true}), "")
	})
	b.Run("gvisor", func(b *testing.B) {
		_, err := exec.LookPath("runsc")
		if err == nil && os.Geteuid() != 0 {
			err = errors.New("runsc needs root here")
		}
		sandboxtest.Need(b, "gVisor (runsc)", err)
		state := filepath.Join(os.TempDir(), fmt.Sprintf("skills-mcp-ept-runsc-%d", os.Getpid()))
		cg := testCgroup + "-gvisor"
		b.Cleanup(func() {
			os.RemoveAll(state)
			for _, ctl := range []string{"", "memory", "pids", "cpu"} {
				os.Remove(filepath.Join("/sys/fs/cgroup", ctl, cg, "default"))
				os.Remove(filepath.Join("/sys/fs/cgroup", ctl, cg))
			}
		})
		benchJobs(b, gvisor.New(&gvisor.Options{CgroupName: cg, StateRoot: state}), "")
	})
	b.Run("docker", func(b *testing.B) {
		x, image := newDocker(b)
		benchJobs(b, x, image)
	})
}

func benchJobs(b *testing.B, x sandbox.Executor, image string) {
	db := openStore(b, store.Options{Dir: filepath.Join(b.TempDir(), "data")})
	jh := startJobHub(b, db, x, image, []store.Runtime{store.RuntimePython}, "alpha")
	cs := connectTB(b, jh.hub, "alpha", projectToken(b, db, "alpha"))
	py := copiers[store.RuntimePython]
	skill := skillID(b, cs, py.name)
	in := base64.StdEncoding.EncodeToString(randomBytes(1024))
	var times []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		job := call(b, cs, "create_skill_job", map[string]any{"skill_id": skill})["job_id"].(string)
		call(b, cs, "upload_skill_file", map[string]any{"job_id": job, "path": "in.bin", "content_base64": in})
		if res := call(b, cs, "run_skill_script", map[string]any{"job_id": job, "script": py.script, "args": []string{"in.bin", "out.bin"}}); res["state"] != "succeeded" {
			b.Fatalf("run: %v", res)
		}
		if m := call(b, cs, "read_skill_job_file", map[string]any{"job_id": job, "path": "out.bin"}); m["content_base64"] != in {
			b.Fatal("the output is not the input")
		}
		times = append(times, time.Since(start))
		b.StopTimer()
		if err := jh.svc.Delete(context.Background(), "alpha", job); err != nil { // a project keeps at most 100
			b.Fatal(err)
		}
		b.StartTimer()
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median/job")
}
