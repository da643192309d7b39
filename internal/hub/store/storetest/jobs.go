package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// jobTests are the suite's tests of execution profiles and jobs.
var jobTests = []struct {
	name string
	fn   func(t *testing.T, open Opener)
}{
	{"Profiles", testProfiles},
	{"JobLifecycle", testJobLifecycle},
	{"JobRefusals", testJobRefusals},
	{"JobLimits", testJobLimits},
	{"JobClaimExactlyOnce", testJobClaim},
	{"JobDeletionRules", testJobDeletion},
	{"JobStopAndLock", testJobStopLock},
}

var jobSkill = Tree{
	"SKILL.md":         "---\nname: jobs\ndescription: test\n---\nbody\n",
	"scripts/copy.py":  "x:import sys\n",
	"scripts/other.sh": "x:echo\n",
}

// jobFixture is a store with a project bound to a version whose profile
// is enabled and prepared.
type jobFixture struct {
	s       *store.DB
	version int64
	profile store.Profile
}

func newJobFixture(t *testing.T, s *store.DB, project string) jobFixture {
	t.Helper()
	ctx := context.Background()
	v := install(t, s, Version("jobs", jobSkill))
	mustProject(t, s, project, "Project "+project)
	if err := s.Bind(ctx, project, v.ID); err != nil {
		t.Fatal(err)
	}
	p, err := s.SetProfile(ctx, v.ID, store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{"scripts/copy.py"}, TimeoutSeconds: 30, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if p, err = s.SetPrepared(ctx, v.ID, p.Revision, "none", "ok"); err != nil {
		t.Fatal(err)
	}
	return jobFixture{s: s, version: v.ID, profile: p}
}

func (f jobFixture) create(t *testing.T, project string) store.Job {
	t.Helper()
	j, err := f.s.CreateJob(context.Background(), project, f.version)
	if err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	return j
}

func (f jobFixture) claim(t *testing.T, replica string) store.Job {
	t.Helper()
	j, ok, err := f.s.ClaimJob(context.Background(), replica)
	if err != nil || !ok {
		t.Fatalf("ClaimJob = %v, %v; want a job", ok, err)
	}
	return j
}

func testProfiles(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	v := install(t, s, Version("jobs", jobSkill))
	if _, err := s.GetProfile(ctx, v.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetProfile(none) = %v; want ErrNotFound", err)
	}
	good := store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{"scripts/copy.py"}, TimeoutSeconds: 30}
	for name, bad := range map[string]store.ProfileSpec{
		"runtime":        {Runtime: "ruby", Scripts: good.Scripts, TimeoutSeconds: 30},
		"timeout 0":      {Runtime: "bash", Scripts: good.Scripts, TimeoutSeconds: 0},
		"timeout 301":    {Runtime: "bash", Scripts: good.Scripts, TimeoutSeconds: 301},
		"no scripts":     {Runtime: "bash", TimeoutSeconds: 30},
		"traversal":      {Runtime: "bash", Scripts: []string{"../x.sh"}, TimeoutSeconds: 30},
		"absolute":       {Runtime: "bash", Scripts: []string{"/bin/sh"}, TimeoutSeconds: 30},
		"not in package": {Runtime: "bash", Scripts: []string{"scripts/missing.sh"}, TimeoutSeconds: 30},
		"a folder":       {Runtime: "bash", Scripts: []string{"scripts"}, TimeoutSeconds: 30},
		"relative root":  {Runtime: "bash", Scripts: good.Scripts, TimeoutSeconds: 30, RootFS: "rel/root"},
		"interpreter":    {Runtime: "bash", Scripts: good.Scripts, TimeoutSeconds: 30, Interpreter: "bash"},
	} {
		if _, err := s.SetProfile(ctx, v.ID, bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("SetProfile(%s) = %v; want ErrInvalid", name, err)
		}
	}
	if _, err := s.SetProfile(ctx, v.ID+100, good); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetProfile(missing version) = %v; want ErrNotFound", err)
	}
	p, err := s.SetProfile(ctx, v.ID, good)
	if err != nil || p.Revision != 1 || p.Prepared() || p.Enabled {
		t.Fatalf("SetProfile = %+v, %v", p, err)
	}
	p, err = s.SetPrepared(ctx, v.ID, 1, "sha256:"+strings.Repeat("a", 64), "built")
	if err != nil || !p.Prepared() || p.PrepareLog != "built" || p.PreparedAt.IsZero() {
		t.Fatalf("SetPrepared = %+v, %v", p, err)
	}
	// Enabling keeps the prepared state and the revision; the same profile
	// again changes nothing.
	en := good
	en.Enabled = true
	if p, err = s.SetProfile(ctx, v.ID, en); err != nil || !p.Prepared() || p.Revision != 1 || !p.Enabled {
		t.Fatalf("SetProfile(enabled) = %+v, %v; want prepared, revision 1", p, err)
	}
	if p, err = s.SetProfile(ctx, v.ID, en); err != nil || !p.Prepared() || p.Revision != 1 {
		t.Fatalf("SetProfile(same) = %+v, %v", p, err)
	}
	// A preparation on Docker pins its image's id; a malformed one, or
	// one without an identity, is refused.
	image := "sha256:" + strings.Repeat("b", 64)
	for _, bad := range []store.PreparationEnd{{Identity: "none", ImageID: "python:3.12-slim"}, {Identity: "none", ImageID: "sha256:B"}, {ImageID: image},
		{Identity: "none", ImageInterpreter: "/usr/local/bin/python3"}, {Identity: "none", ImageID: image, ImageInterpreter: "python3"}} {
		if _, err := s.EndPreparation(ctx, v.ID, 1, bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("EndPreparation(%+v) = %v; want ErrInvalid", bad, err)
		}
	}
	if p, err = s.EndPreparation(ctx, v.ID, 1, store.PreparationEnd{Identity: "none", ImageID: image, ImageInterpreter: "/usr/local/bin/python3"}); err != nil || p.ImageID != image || p.ImageInterpreter != "/usr/local/bin/python3" {
		t.Fatalf("EndPreparation(image) = %+v, %v", p, err)
	}
	if got, err := s.GetProfile(ctx, v.ID); err != nil || got.ImageID != image || got.ImageInterpreter != "/usr/local/bin/python3" {
		t.Fatalf("GetProfile after a pinned preparation = %+v, %v", got, err)
	}
	// A change of the environment clears the prepared state, the pinned
	// image with it.
	ch := en
	ch.TimeoutSeconds = 60
	if p, err = s.SetProfile(ctx, v.ID, ch); err != nil || p.Prepared() || p.Revision != 2 || p.PrepareLog != "" || p.ImageID != "" || p.ImageInterpreter != "" {
		t.Fatalf("SetProfile(changed) = %+v, %v; want unprepared, revision 2, no image", p, err)
	}
	// A preparation begun under revision 1 cannot land on revision 2.
	if _, err := s.SetPrepared(ctx, v.ID, 1, "none", "late"); !errors.Is(err, store.ErrProfileChanged) {
		t.Errorf("SetPrepared(old revision) = %v; want ErrProfileChanged", err)
	}
	// A failed preparation keeps its log and no identity.
	if p, err = s.SetPrepared(ctx, v.ID, 2, "", "pip: no matching distribution"); err != nil || p.Prepared() || !strings.Contains(p.PrepareLog, "pip") {
		t.Fatalf("SetPrepared(failed) = %+v, %v", p, err)
	}
	if got, err := s.GetProfile(ctx, v.ID); err != nil || got.Revision != 2 || got.TimeoutSeconds != 60 || !slices.Equal(got.Scripts, good.Scripts) {
		t.Fatalf("GetProfile = %+v, %v", got, err)
	}
}

func testJobLifecycle(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	f := newJobFixture(t, s, "p")
	j := f.create(t, "p")
	if j.State != store.JobCreated || j.ProjectID != "p" || j.ProfileRevision != f.profile.Revision {
		t.Fatalf("CreateJob = %+v", j)
	}
	// An input written whole, then appended to: its digest is the whole
	// file's.
	if _, err := s.PutJobInput(ctx, j.ID, "in/data.txt", []byte("hello "), store.InputWrite{}); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), store.ChunkSize+10)
	fi, err := s.PutJobInput(ctx, j.ID, "in/data.txt", big, store.InputWrite{Append: true})
	want := append([]byte("hello "), big...)
	if sum := sha256.Sum256(want); err != nil || fi.Size != int64(len(want)) || fi.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("PutJobInput(append) = %+v, %v", fi, err)
	}
	if j, _ = s.GetJob(ctx, j.ID); j.State != store.JobUploading {
		t.Fatalf("state after upload = %s; want uploading", j.State)
	}
	// A whole write replaces.
	if fi, err = s.PutJobInput(ctx, j.ID, "small.txt", []byte("abc"), store.InputWrite{}); err != nil || fi.Size != 3 {
		t.Fatal(fi, err)
	}
	if fi, err = s.PutJobInput(ctx, j.ID, "small.txt", []byte("z"), store.InputWrite{}); err != nil || fi.Size != 1 {
		t.Fatal(fi, err)
	}
	// Inputs read back whole and by range, across chunks.
	data, _, err := s.ReadJobFile(ctx, j.ID, store.JobInput, "in/data.txt", 0, int64(len(want)))
	if err != nil || !bytes.Equal(data, want) {
		t.Fatalf("ReadJobFile(whole) = %d bytes, %v", len(data), err)
	}
	data, _, err = s.ReadJobFile(ctx, j.ID, store.JobInput, "in/data.txt", 3, store.ChunkSize)
	if err != nil || !bytes.Equal(data, want[3:3+store.ChunkSize]) {
		t.Fatalf("ReadJobFile(range) = %d bytes, %v", len(data), err)
	}
	if data, _, err = s.ReadJobFile(ctx, j.ID, store.JobInput, "in/data.txt", int64(len(want))+5, 10); err != nil || len(data) != 0 {
		t.Fatalf("ReadJobFile(past end) = %q, %v", data, err)
	}

	q, err := s.QueueJob(ctx, j.ID, "scripts/copy.py", []string{"in/data.txt", "out.txt", "ünï"}, "tester")
	if err != nil || q.State != store.JobQueued || !slices.Equal(q.Args, []string{"in/data.txt", "out.txt", "ünï"}) || q.QueuedAt.IsZero() {
		t.Fatalf("QueueJob = %+v, %v", q, err)
	}
	r := f.claim(t, "replica-a")
	if r.ID != j.ID || r.State != store.JobRunning || r.ClaimedBy != "replica-a" || r.StartedAt.IsZero() {
		t.Fatalf("ClaimJob = %+v", r)
	}
	if _, ok, err := s.ClaimJob(ctx, "replica-b"); ok || err != nil {
		t.Fatalf("ClaimJob(nothing queued) = %v, %v", ok, err)
	}
	if jobs, err := s.ReplicaJobs(ctx, "replica-a"); err != nil || len(jobs) != 1 || jobs[0].ID != j.ID {
		t.Fatalf("ReplicaJobs = %+v, %v", jobs, err)
	}
	if _, _, err := s.ReadJobFile(ctx, j.ID, store.JobInput, "small.txt", 0, 10); !errors.Is(err, store.ErrJobState) {
		t.Errorf("ReadJobFile(running) = %v; want ErrJobState", err)
	}
	if _, err := s.FinishJob(ctx, j.ID, "replica-b", store.JobResult{State: store.JobSucceeded}, nil); !errors.Is(err, store.ErrJobState) {
		t.Errorf("FinishJob(other replica) = %v; want ErrJobState", err)
	}
	zero := 0
	out := []store.NewJobFile{{Path: "out.txt", Data: want}, {Path: "small.txt", Data: []byte("changed")}}
	done, err := s.FinishJob(ctx, j.ID, "replica-a", store.JobResult{State: store.JobSucceeded, ExitCode: &zero,
		Stdout: []byte("copied\n"), Stderr: []byte{}, StdoutCut: true}, out)
	if err != nil || done.State != store.JobSucceeded || done.ExitCode == nil || *done.ExitCode != 0 ||
		string(done.Stdout) != "copied\n" || !done.StdoutCut || done.StderrCut || done.FinishedAt.IsZero() {
		t.Fatalf("FinishJob = %+v, %v", done, err)
	}
	if _, err := s.FinishJob(ctx, j.ID, "replica-a", store.JobResult{State: store.JobFailed}, nil); !errors.Is(err, store.ErrJobState) {
		t.Errorf("FinishJob(twice) = %v; want ErrJobState", err)
	}
	files, err := s.JobFiles(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, fmt.Sprintf("%s:%s:%d", f.Kind, f.Path, f.Size))
	}
	wantFiles := []string{
		fmt.Sprintf("input:in/data.txt:%d", len(want)), "input:small.txt:1",
		fmt.Sprintf("output:out.txt:%d", len(want)), "output:small.txt:7",
	}
	if !slices.Equal(got, wantFiles) {
		t.Fatalf("JobFiles = %v; want %v", got, wantFiles)
	}
	data, fo, err := s.ReadJobFile(ctx, j.ID, store.JobOutput, "out.txt", store.ChunkSize-2, 100)
	if err != nil || !bytes.Equal(data, want[store.ChunkSize-2:store.ChunkSize+10+6]) || fo.Size != int64(len(want)) {
		t.Fatalf("ReadJobFile(output range) = %d bytes, %v", len(data), err)
	}
	if jobs, err := s.ListJobs(ctx, "p"); err != nil || len(jobs) != 1 || jobs[0].Stdout != nil || jobs[0].State != store.JobSucceeded {
		t.Fatalf("ListJobs = %+v, %v", jobs, err)
	}
	if err := s.DeleteJob(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetJob(ctx, j.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetJob(deleted) = %v", err)
	}
	if files, err := s.JobFiles(ctx, j.ID); err != nil || len(files) != 0 {
		t.Errorf("files of a deleted job: %v, %v", files, err)
	}
	// A job with no input runs too.
	j2 := f.create(t, "p")
	if _, err := s.QueueJob(ctx, j2.ID, "scripts/copy.py", nil, "tester"); err != nil {
		t.Fatal(err)
	}
	if r := f.claim(t, "replica-a"); r.ID != j2.ID || len(r.Args) != 0 {
		t.Fatalf("claimed %+v", r)
	}
}

func testJobRefusals(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	f := newJobFixture(t, s, "p")
	mustProject(t, s, "unbound", "Unbound")
	if _, err := s.CreateJob(ctx, "unbound", f.version); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CreateJob(unbound version) = %v; want ErrNotFound", err)
	}
	if _, err := s.CreateJob(ctx, "nope", f.version); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CreateJob(missing project) = %v; want ErrNotFound", err)
	}
	j := f.create(t, "p")
	for _, bad := range []string{"../x", "/etc/passwd", "a/../../b", "a//b", "a\\b", "e\u0301.txt", ".git/config", "a/./b", "", ".", "nul\x00", "tab\t"} {
		if _, err := s.PutJobInput(ctx, j.ID, bad, []byte("x"), store.InputWrite{}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("PutJobInput(%q) = %v; want ErrInvalid", bad, err)
		}
		if _, _, err := s.ReadJobFile(ctx, j.ID, store.JobInput, bad, 0, 1); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("ReadJobFile(%q) = %v; want ErrInvalid", bad, err)
		}
	}
	if _, err := s.QueueJob(ctx, j.ID, "scripts/other.sh", nil, "tester"); !errors.Is(err, store.ErrScriptNotAllowed) {
		t.Errorf("QueueJob(script not allowed) = %v; want ErrScriptNotAllowed", err)
	}
	if _, err := s.QueueJob(ctx, j.ID, "../scripts/copy.py", nil, "tester"); !errors.Is(err, store.ErrScriptNotAllowed) {
		t.Errorf("QueueJob(traversal) = %v; want ErrScriptNotAllowed", err)
	}
	if _, err := s.QueueJob(ctx, j.ID, "scripts/copy.py", []string{"ok", "bad\x00"}, "tester"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("QueueJob(NUL argument) = %v; want ErrInvalid", err)
	}
	if _, err := s.QueueJob(ctx, j.ID, "scripts/copy.py", make([]string, store.MaxJobArgs+1), "tester"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("QueueJob(too many arguments) = %v; want ErrInvalid", err)
	}
	// The profile changes under a created job: it cannot run.
	spec := f.profile.ProfileSpec
	spec.Network = true
	p, err := s.SetProfile(ctx, f.version, spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.QueueJob(ctx, j.ID, "scripts/copy.py", nil, "tester"); !errors.Is(err, store.ErrProfileChanged) {
		t.Errorf("QueueJob(changed profile) = %v; want ErrProfileChanged", err)
	}
	if _, err := s.CreateJob(ctx, "p", f.version); !errors.Is(err, store.ErrNotPrepared) {
		t.Errorf("CreateJob(unprepared) = %v; want ErrNotPrepared", err)
	}
	if _, err := s.SetPrepared(ctx, f.version, p.Revision, "none", ""); err != nil {
		t.Fatal(err)
	}
	spec.Enabled = false
	if _, err := s.SetProfile(ctx, f.version, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateJob(ctx, "p", f.version); !errors.Is(err, store.ErrProfileDisabled) {
		t.Errorf("CreateJob(disabled) = %v; want ErrProfileDisabled", err)
	}
	spec.Enabled = true
	if _, err := s.SetProfile(ctx, f.version, spec); err != nil {
		t.Fatal(err)
	}
	j2 := f.create(t, "p")
	if _, err := s.QueueJob(ctx, j2.ID, "scripts/copy.py", nil, "tester"); err != nil {
		t.Fatal(err)
	}
	// Queued: no more uploads, no second run.
	if _, err := s.PutJobInput(ctx, j2.ID, "late.txt", []byte("x"), store.InputWrite{}); !errors.Is(err, store.ErrJobState) {
		t.Errorf("PutJobInput(queued) = %v; want ErrJobState", err)
	}
	if _, err := s.QueueJob(ctx, j2.ID, "scripts/copy.py", nil, "tester"); !errors.Is(err, store.ErrJobState) {
		t.Errorf("QueueJob(twice) = %v; want ErrJobState", err)
	}
	r := f.claim(t, "r1")
	if _, err := s.FinishJob(ctx, r.ID, "r1", store.JobResult{State: store.JobFailed, Reason: "exit 1"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJobInput(ctx, j2.ID, "late.txt", []byte("x"), store.InputWrite{}); !errors.Is(err, store.ErrJobState) {
		t.Errorf("PutJobInput(after the run) = %v; want ErrJobState", err)
	}
	if _, err := s.QueueJob(ctx, j2.ID, "scripts/copy.py", nil, "tester"); !errors.Is(err, store.ErrJobState) {
		t.Errorf("QueueJob(after the run) = %v; want ErrJobState", err)
	}
	if _, err := s.GetJob(ctx, "j-00000000000000000000"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetJob(missing) = %v", err)
	}
	if _, err := s.GetJob(ctx, "../../etc"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetJob(garbage) = %v", err)
	}
}

func testJobLimits(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	f := newJobFixture(t, s, "p")
	j := f.create(t, "p")
	full := make([]byte, store.MaxJobFileSize)
	if _, err := s.PutJobInput(ctx, j.ID, "big", full[:store.MaxJobFileSize-1], store.InputWrite{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJobInput(ctx, j.ID, "big", []byte("ab"), store.InputWrite{Append: true}); !errors.Is(err, store.ErrJobLimit) {
		t.Errorf("PutJobInput(append past 32 MiB) = %v; want ErrJobLimit", err)
	}
	if _, err := s.PutJobInput(ctx, j.ID, "big2", append(full, 'x'), store.InputWrite{}); !errors.Is(err, store.ErrJobLimit) {
		t.Errorf("PutJobInput(32 MiB + 1) = %v; want ErrJobLimit", err)
	}
	if fi, err := s.PutJobInput(ctx, j.ID, "big", []byte("a"), store.InputWrite{Append: true}); err != nil || fi.Size != store.MaxJobFileSize {
		t.Errorf("PutJobInput(append to exactly 32 MiB) = %+v, %v", fi, err)
	}
	if _, err := s.QueueJob(ctx, j.ID, "scripts/copy.py", nil, "tester"); err != nil {
		t.Fatal(err)
	}
	r := f.claim(t, "r")
	// The job's files as they stand: 32 MiB of input and four 32 MiB
	// outputs is more than 128 MiB; 2,001 files is more than 2,000.
	four := []store.NewJobFile{{Path: "o1", Data: full}, {Path: "o2", Data: full}, {Path: "o3", Data: full}, {Path: "o4", Data: full}}
	if _, err := s.FinishJob(ctx, r.ID, "r", store.JobResult{State: store.JobSucceeded}, four); !errors.Is(err, store.ErrJobLimit) {
		t.Errorf("FinishJob(160 MiB) = %v; want ErrJobLimit", err)
	}
	many := make([]store.NewJobFile, store.MaxJobFiles)
	for i := range many {
		many[i] = store.NewJobFile{Path: fmt.Sprintf("out/%04d", i)}
	}
	if _, err := s.FinishJob(ctx, r.ID, "r", store.JobResult{State: store.JobSucceeded}, many); !errors.Is(err, store.ErrJobLimit) {
		t.Errorf("FinishJob(2,001 files) = %v; want ErrJobLimit", err)
	}
	if _, err := s.FinishJob(ctx, r.ID, "r", store.JobResult{State: store.JobSucceeded, Stdout: make([]byte, store.MaxJobOutput+1)}, nil); !errors.Is(err, store.ErrJobLimit) {
		t.Errorf("FinishJob(stdout over 1 MiB) = %v; want ErrJobLimit", err)
	}
	// Replacing the input counts once: 4 × 32 MiB = 128 MiB fits.
	four[0].Path = "big"
	if _, err := s.FinishJob(ctx, r.ID, "r", store.JobResult{State: store.JobSucceeded}, four); err != nil {
		t.Errorf("FinishJob(128 MiB as they stand) = %v", err)
	}
	// 100 jobs per project.
	for i := 1; i < store.MaxProjectJobs; i++ {
		f.create(t, "p")
	}
	if _, err := s.CreateJob(ctx, "p", f.version); !errors.Is(err, store.ErrJobLimit) {
		t.Errorf("CreateJob(101st) = %v; want ErrJobLimit", err)
	}
}

func testJobClaim(t *testing.T, open Opener) {
	ctx := context.Background()
	a := mustOpen(t, open, store.Options{})
	b := mustOpen(t, open, store.Options{})
	f := newJobFixture(t, a, "p")
	const n = 30
	want := map[string]bool{}
	for range n {
		j := f.create(t, "p")
		if _, err := a.QueueJob(ctx, j.ID, "scripts/copy.py", nil, "tester"); err != nil {
			t.Fatal(err)
		}
		want[j.ID] = true
	}
	var (
		mu  sync.Mutex
		got = map[string][]string{}
		wg  sync.WaitGroup
	)
	for i, s := range []*store.DB{a, b, a, b} {
		replica := fmt.Sprintf("replica-%d", i)
		wg.Go(func() {
			for {
				j, ok, err := s.ClaimJob(ctx, replica)
				if err != nil {
					t.Errorf("ClaimJob(%s): %v", replica, err)
					return
				}
				if !ok {
					return
				}
				mu.Lock()
				got[j.ID] = append(got[j.ID], replica)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(got) != n {
		t.Errorf("%d jobs claimed; want %d", len(got), n)
	}
	for id, by := range got {
		if !want[id] || len(by) != 1 {
			t.Errorf("job %s claimed by %v; want exactly one replica", id, by)
		}
		j, err := b.GetJob(ctx, id)
		if err != nil || j.State != store.JobRunning || j.ClaimedBy != by[0] {
			t.Errorf("job %s after its claim: %+v, %v", id, j, err)
		}
	}
}

func testJobDeletion(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	f := newJobFixture(t, s, "p")
	j := f.create(t, "p")
	if _, err := s.PutJobInput(ctx, j.ID, "in.txt", []byte("keep me"), store.InputWrite{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.QueueJob(ctx, j.ID, "scripts/copy.py", nil, "tester"); err != nil {
		t.Fatal(err)
	}
	f.claim(t, "r")
	if err := s.DeleteJob(ctx, j.ID); !errors.Is(err, store.ErrJobState) {
		t.Errorf("DeleteJob(running) = %v; want ErrJobState", err)
	}
	if _, err := s.UnbindVersion(ctx, "p", f.version); !errors.Is(err, store.ErrJobsKept) {
		t.Errorf("UnbindVersion(with jobs) = %v; want ErrJobsKept", err)
	}
	if err := s.DeleteProject(ctx, "p"); !errors.Is(err, store.ErrJobsRunning) {
		t.Errorf("DeleteProject(running job) = %v; want ErrJobsRunning", err)
	}
	if _, err := s.FinishJob(ctx, j.ID, "r", store.JobResult{State: store.JobSucceeded}, []store.NewJobFile{{Path: "out.txt", Data: []byte("result")}}); err != nil {
		t.Fatal(err)
	}
	empty := f.create(t, "p") // no files: leaves no remnant
	if err := s.DeleteProject(ctx, "p"); err != nil {
		t.Fatalf("DeleteProject(ended jobs) = %v", err)
	}
	if _, err := s.GetJob(ctx, j.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("job record kept after its project's deletion: %v", err)
	}
	rem, err := s.JobRemnants(ctx)
	if err != nil || len(rem) != 1 || rem[0].JobID != j.ID || rem[0].ProjectID != "p" || rem[0].Package != "jobs" || rem[0].State != store.JobSucceeded {
		t.Fatalf("JobRemnants = %+v, %v; want job %s only (not %s)", rem, err, j.ID, empty.ID)
	}
	data, _, err := s.ReadJobFile(ctx, j.ID, store.JobOutput, "out.txt", 0, 100)
	if err != nil || string(data) != "result" {
		t.Fatalf("ReadJobFile(remnant) = %q, %v", data, err)
	}
	if err := s.PurgeJobRemnant(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if files, err := s.JobFiles(ctx, j.ID); err != nil || len(files) != 0 {
		t.Errorf("files after purge: %v, %v", files, err)
	}
	if err := s.PurgeJobRemnant(ctx, j.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PurgeJobRemnant(again) = %v", err)
	}
}

func testJobStopLock(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	f := newJobFixture(t, s, "p")
	queued := f.create(t, "p")
	if _, err := s.QueueJob(ctx, queued.ID, "scripts/copy.py", nil, "tester"); err != nil {
		t.Fatal(err)
	}
	st, err := s.StopJob(ctx, queued.ID, "stopped by the user")
	if err != nil || st.State != store.JobStopped || st.Reason != "stopped by the user" {
		t.Fatalf("StopJob(queued) = %+v, %v", st, err)
	}
	if _, ok, err := s.ClaimJob(ctx, "r"); ok || err != nil {
		t.Fatalf("a stopped job was claimed: %v, %v", ok, err)
	}
	run := f.create(t, "p")
	if _, err := s.PutJobInput(ctx, run.ID, "in.txt", []byte("x"), store.InputWrite{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.QueueJob(ctx, run.ID, "scripts/copy.py", nil, "tester"); err != nil {
		t.Fatal(err)
	}
	f.claim(t, "r")
	if st, err = s.StopJob(ctx, run.ID, "user"); err != nil || st.State != store.JobRunning || !st.StopRequested {
		t.Fatalf("StopJob(running) = %+v, %v; want running with a stop requested", st, err)
	}
	l, err := s.LockJob(ctx, run.ID, "r", "the kill was not confirmed")
	if err != nil || l.State != store.JobLocked {
		t.Fatalf("LockJob = %+v, %v", l, err)
	}
	if _, _, err := s.ReadJobFile(ctx, run.ID, store.JobInput, "in.txt", 0, 1); !errors.Is(err, store.ErrJobState) {
		t.Errorf("ReadJobFile(locked) = %v; want ErrJobState", err)
	}
	if err := s.DeleteJob(ctx, run.ID); !errors.Is(err, store.ErrJobState) {
		t.Errorf("DeleteJob(locked) = %v; want ErrJobState", err)
	}
	if err := s.DeleteProject(ctx, "p"); !errors.Is(err, store.ErrJobsRunning) {
		t.Errorf("DeleteProject(locked job) = %v; want ErrJobsRunning", err)
	}
	if jobs, err := s.ReplicaJobs(ctx, "r"); err != nil || len(jobs) != 1 || jobs[0].State != store.JobLocked {
		t.Fatalf("ReplicaJobs = %+v, %v", jobs, err)
	}
	// Recovery confirms the sandbox is gone.
	if st, err = s.FinishJob(ctx, run.ID, "r", store.JobResult{State: store.JobStopped, Reason: "confirmed gone"}, nil); err != nil || st.State != store.JobStopped {
		t.Fatalf("FinishJob(locked) = %+v, %v", st, err)
	}
	if _, _, err := s.ReadJobFile(ctx, run.ID, store.JobInput, "in.txt", 0, 1); err != nil {
		t.Errorf("ReadJobFile(stopped) = %v", err)
	}
}
