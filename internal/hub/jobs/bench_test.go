package jobs

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
)

// BenchmarkRunFake is a job's round trip through the service alone, on a
// sandbox that runs nothing (the fake's copy): create, upload 1 KiB, run,
// read the output, delete; SQLite. It isolates the service's own cost
// (queueing, waking a worker, claiming, storing the end, waking the
// waiter) from the sandbox's, and reports the median as ms-median/job.
func BenchmarkRunFake(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{Dir: filepath.Join(b.TempDir(), "data")})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	v, _, err := st.Install(ctx, storetest.Version("copier", skillTree))
	if err != nil {
		b.Fatal(err)
	}
	if err := st.CreateProject(ctx, "p", "P"); err != nil {
		b.Fatal(err)
	}
	if err := st.Bind(ctx, "p", v.ID); err != nil {
		b.Fatal(err)
	}
	svc, err := New(Options{Store: st, Executor: newFake(copyBehaviour), Replica: "bench", Dir: filepath.Join(b.TempDir(), "jobs"), RunWait: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	if _, _, err := svc.Start(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.SetProfile(ctx, v.ID, store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{"scripts/copy.py"}, TimeoutSeconds: 30, Enabled: true}); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Prepare(ctx, v.ID); err != nil {
		b.Fatal(err)
	}
	in := make([]byte, 1024)
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		j, err := svc.Create(ctx, "p", v.ID)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := svc.Upload(ctx, "p", j.ID, "in.bin", in, false); err != nil {
			b.Fatal(err)
		}
		res, err := svc.Run(ctx, "p", j.ID, "scripts/copy.py", []string{"in.bin", "out.bin"})
		if err != nil || res.Job.State != store.JobSucceeded {
			b.Fatalf("run: %+v, %v", res.Job, err)
		}
		if _, err := svc.ReadFile(ctx, "p", j.ID, "out.bin", 0, 2048); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
		if err := svc.Delete(ctx, "p", j.ID); err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median/job")
}
