package jobs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// imageFake is the test backend that runs images: its engine holds the
// images of tags (a tag moved is a new entry).
type imageFake struct {
	*fakeExec
	mu   sync.Mutex
	tags map[string]string
}

func (f *imageFake) ImageID(_ context.Context, ref string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id, ok := f.tags[ref]; ok {
		return id, nil
	}
	return "", fmt.Errorf("%w: the engine has no image %s", sandbox.ErrNoImage, ref)
}

func (f *imageFake) tag(ref, id string) {
	f.mu.Lock()
	f.tags[ref] = id
	f.mu.Unlock()
}

func imageID(c byte) string { return "sha256:" + strings.Repeat(string(c), 64) }

// TestDockerImagePinned: on a backend that runs images, a preparation
// resolves the profile's image (or the runtime's default, or the hub's)
// to its id and records it; every run uses that id, also after the tag
// moved; preparing again takes the tag's new image. An image the engine
// lacks fails the preparation with its name; a profile prepared without an
// image fails its runs with what to do.
func TestDockerImagePinned(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, filepath.Join(t.TempDir(), "data"))
	v, _, err := st.Install(ctx, storetest.Version("copier", skillTree))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateProject(ctx, "p", "P"); err != nil {
		t.Fatal(err)
	}
	if err := st.Bind(ctx, "p", v.ID); err != nil {
		t.Fatal(err)
	}
	fake := &imageFake{fakeExec: newFake(copyBehaviour), tags: map[string]string{}}
	opts := Options{Store: st, Replica: "replica-1", Dir: filepath.Join(t.TempDir(), "jobs"), Executor: fake}
	svc, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	if _, _, err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	profile := store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{"scripts/copy.py"}, TimeoutSeconds: 30, Enabled: true}
	if _, err := svc.SetProfile(ctx, v.ID, profile); err != nil {
		t.Fatal(err)
	}
	run := func(what string) sandbox.Spec {
		t.Helper()
		j, err := svc.Create(ctx, "p", v.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Upload(ctx, "p", j.ID, "in.txt", []byte(what), false); err != nil {
			t.Fatal(err)
		}
		st, err := svc.Run(ctx, "p", j.ID, "scripts/copy.py", []string{"in.txt", "out.txt"})
		if err != nil || st.Job.State != store.JobSucceeded {
			t.Fatalf("%s: run = %+v, %v", what, st.Job, err)
		}
		return fake.lastSpec()
	}

	// The runtime's default image is not on the engine: named.
	_, err = svc.Prepare(ctx, v.ID)
	if !errors.Is(err, ErrPrepareFailed) || !errors.Is(err, sandbox.ErrNoImage) || !strings.Contains(err.Error(), "python:3.12-slim") {
		t.Fatalf("Prepare without the default image = %v; want a failure naming python:3.12-slim", err)
	}
	if prep, _ := svc.Preparation(ctx, v.ID); prep.State != PrepFailed || !strings.Contains(prep.Error, "python:3.12-slim") {
		t.Errorf("the failed preparation reads %+v", prep)
	}

	// Present: pinned, and run with the default image's interpreter.
	fake.tag("python:3.12-slim", imageID('a'))
	p, err := svc.Prepare(ctx, v.ID)
	if err != nil || p.ImageID != imageID('a') {
		t.Fatalf("Prepare = %+v, %v; want image %s pinned", p, err, imageID('a'))
	}
	if prep, _ := svc.Preparation(ctx, v.ID); prep.ImageID != imageID('a') {
		t.Errorf("Preparation = %+v; want its image id", prep)
	}
	if spec := fake.lastSpec(); spec.Image != imageID('a') || spec.Argv[0] != "/usr/local/bin/python3" {
		t.Errorf("the preparation ran %v on %q; want python3 of the default image, by id", spec.Argv, spec.Image)
	}
	if spec := run("first"); spec.Image != imageID('a') || spec.Argv[0] != "/usr/local/bin/python3" {
		t.Errorf("a run: %v on %q; want the pinned id", spec.Argv, spec.Image)
	}

	// The tag moves: the prepared profile does not.
	fake.tag("python:3.12-slim", imageID('b'))
	if spec := run("after the tag moved"); spec.Image != imageID('a') {
		t.Errorf("a run after the tag moved used %q; want the pinned %s", spec.Image, imageID('a'))
	}
	if p, err := svc.Prepare(ctx, v.ID); err != nil || p.ImageID != imageID('b') {
		t.Fatalf("Prepare again = %+v, %v; want the tag's new image", p, err)
	}
	if spec := run("prepared again"); spec.Image != imageID('b') {
		t.Errorf("a run after preparing again used %q; want %s", spec.Image, imageID('b'))
	}
	// The hub is given an image of its own after the preparation: the
	// prepared profile still runs on its pinned image with the
	// interpreter it was prepared with.
	svc.opts.DockerImage = "hub/other:1"
	if spec := run("the hub's image changed"); spec.Image != imageID('b') || spec.Argv[0] != "/usr/local/bin/python3" {
		t.Errorf("a run after the hub's image changed: %v on %q; want the default image's python3 on %s", spec.Argv, spec.Image, imageID('b'))
	}
	svc.opts.DockerImage = ""

	// A profile's own image: resolved the same way, the Debian path of
	// the interpreter.
	profile.Image = "team/py:2"
	if _, err := svc.SetProfile(ctx, v.ID, profile); err != nil {
		t.Fatal(err)
	}
	fake.tag("team/py:2", imageID('c'))
	if p, err := svc.Prepare(ctx, v.ID); err != nil || p.ImageID != imageID('c') {
		t.Fatalf("Prepare of team/py:2 = %+v, %v", p, err)
	}
	if spec := run("own image"); spec.Image != imageID('c') || spec.Argv[0] != "/usr/bin/python3" {
		t.Errorf("a run of team/py:2: %v on %q", spec.Argv, spec.Image)
	}

	// Prepared on a backend that runs no images: the run says what to do.
	p, err = svc.GetProfile(ctx, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.EndPreparation(ctx, v.ID, p.Revision, store.PreparationEnd{Identity: identityNone}); err != nil {
		t.Fatal(err)
	}
	j, err := svc.Create(ctx, "p", v.ID)
	if err != nil {
		t.Fatal(err)
	}
	stat, err := svc.Run(ctx, "p", j.ID, "scripts/copy.py", []string{"a", "b"})
	if err != nil || stat.Job.State != store.JobFailed || !strings.Contains(stat.Job.Reason, "prepares it again") || !strings.Contains(stat.Job.Reason, "team/py:2") {
		t.Errorf("a run of a profile prepared without an image = %+v, %v", stat.Job, err)
	}

	// The hub's image for profiles that name none.
	profile.Image = ""
	if _, err := svc.SetProfile(ctx, v.ID, profile); err != nil {
		t.Fatal(err)
	}
	svc.opts.DockerImage = "hub/img:1"
	fake.tag("hub/img:1", imageID('d'))
	if p, err := svc.Prepare(ctx, v.ID); err != nil || p.ImageID != imageID('d') {
		t.Fatalf("Prepare with the hub's image = %+v, %v", p, err)
	}
	if spec := run("hub image"); spec.Image != imageID('d') || spec.Argv[0] != "/usr/bin/python3" {
		t.Errorf("a run on the hub's image: %v on %q", spec.Argv, spec.Image)
	}
}
