package catalog_test

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// TestIncrementalRescansEqualFullScans edits a watched library at random,
// step by step: file edits, atomic saves, new and removed files, skills
// appearing, vanishing, nested in others and moved between folders with
// their subfolders, broken frontmatter, dotfiles and symlinks. After each
// step the served catalog must become exactly what a full scan of the
// tree finds, and the rescans must mostly be incremental: listing only
// the folders the events named.
func TestIncrementalRescansEqualFullScans(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { incrementalRun(t, seed, 12) })
	}
}

func incrementalRun(t *testing.T, seed uint64, steps int) {
	files := map[string]string{}
	for _, cat := range []string{"ops", "dev"} {
		for i := range 3 {
			name := fmt.Sprintf("%s-%d", cat, i)
			files[cat+"/"+name+"/SKILL.md"] = strings.Replace(skillMD, "%s", name, 1)
			files[cat+"/"+name+"/refs/notes.md"] = "notes " + name + "\n"
		}
	}
	files["dev/dev-0/inner/SKILL.md"] = strings.Replace(skillMD, "%s", "inner", 1)
	files["README.md"] = "a library\n"
	lib, dir := tree(t, files)
	w, err := catalog.NewWatcher(0, nil)
	must(t, err)
	defer w.Close()
	opts := &catalog.Options{OnFolder: w.Folder}
	source := func() ([]*catalog.Library, *catalog.Options) { return []*catalog.Library{lib}, opts }
	first, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, opts)
	must(t, err)
	store := catalog.NewStore(first)
	r := catalog.NewReloader(store, source, nil)
	synced := make(chan struct{}, 64)
	w.NotifySynced(synced)
	w.Start(r)

	rng := rand.New(rand.NewPCG(seed, 7))
	partial := 0
	for step := range steps {
		var did []string
		for range 1 + rng.IntN(3) {
			did = append(did, randomEdit(t, rng, dir, step))
		}
		want := ""
		deadline := time.After(30 * time.Second)
		for {
			full, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
			must(t, err)
			want = catalog.Describe(full)
			if catalog.Describe(store.Snapshot()) == want {
				break
			}
			select {
			case <-synced:
			case <-deadline:
				t.Fatalf("step %d (%s): the served catalog never became the full scan's\nserved:\n%s\nfull scan:\n%s",
					step, strings.Join(did, "; "), catalog.Describe(store.Snapshot()), want)
			}
		}
		if listed, walked := r.LastRescan(); walked > 0 && listed < walked {
			partial++
		}
	}
	if partial == 0 {
		t.Errorf("no rescan was incremental over %d steps", steps)
	}
}

// randomEdit makes one random change below dir and says what it did.
func randomEdit(t *testing.T, rng *rand.Rand, dir string, step int) string {
	t.Helper()
	var skills, plain, folders []string
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir() && rel != ".":
			folders = append(folders, rel)
		case d.Name() == "SKILL.md":
			skills = append(skills, filepath.Dir(rel))
		case d.Type().IsRegular():
			plain = append(plain, rel)
		}
		return nil
	}))
	pick := func(list []string) string { return list[rng.IntN(len(list))] }
	write := func(rel, data string) {
		p := filepath.Join(dir, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(data), 0o644))
	}
	n := fmt.Sprintf("s%d-%d", step, rng.IntN(1000))
	if len(skills) == 0 {
		write(n+"/SKILL.md", strings.Replace(skillMD, "%s", n, 1))
		return "new skill " + n
	}
	switch op := rng.IntN(11); op {
	case 0: // edit a file in place
		if len(plain) > 0 {
			p := pick(plain)
			write(p, "edited "+n+"\n")
			return "edit " + p
		}
		fallthrough
	case 1: // edit a SKILL.md's description
		s := pick(skills)
		name := filepath.Base(s)
		if s == "." {
			name = "x"
		}
		write(filepath.Join(s, "SKILL.md"), "---\nname: "+name+"\ndescription: Edited "+n+".\n---\nNew body.\n")
		return "edit " + s + "/SKILL.md"
	case 2: // an atomic save: write a temporary, rename it over the file
		s := pick(skills)
		tmp := filepath.Join(dir, s, ".SKILL.md.swp")
		must(t, os.WriteFile(tmp, []byte(strings.Replace(skillMD, "%s", filepath.Base(s), 1)+"saved "+n+"\n"), 0o644))
		must(t, os.Rename(tmp, filepath.Join(dir, s, "SKILL.md")))
		return "atomic save " + s
	case 3: // a new file, perhaps in a new folder
		p := filepath.Join(pick(skills), pick([]string{"", "refs", "deep/er"}), n+".md")
		write(p, "new "+n+"\n")
		return "add " + p
	case 4: // remove a file
		if len(plain) > 0 {
			p := pick(plain)
			must(t, os.Remove(filepath.Join(dir, p)))
			return "remove " + p
		}
		return "nothing"
	case 5: // a new skill, with a subfolder
		p := filepath.Join(pick([]string{"ops", "dev", "new"}), n)
		write(filepath.Join(p, "SKILL.md"), strings.Replace(skillMD, "%s", n, 1))
		write(filepath.Join(p, "refs/a.md"), "a\n")
		return "new skill " + p
	case 6: // a skill folder vanishes
		s := pick(skills)
		if s == "." {
			return "nothing"
		}
		must(t, os.RemoveAll(filepath.Join(dir, s)))
		return "remove skill " + s
	case 7: // a folder moves elsewhere, with what is below it
		f := pick(folders)
		to := filepath.Join(pick([]string{"ops", "moved"}), n)
		if strings.HasPrefix(to+"/", f+"/") {
			return "nothing"
		}
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, to)), 0o755))
		must(t, os.Rename(filepath.Join(dir, f), filepath.Join(dir, to)))
		return "move " + f + " to " + to
	case 8: // a skill nested in another
		p := filepath.Join(pick(skills), "sub-"+n)
		write(filepath.Join(p, "SKILL.md"), strings.Replace(skillMD, "%s", "sub-"+n, 1))
		return "nested skill " + p
	case 9: // broken frontmatter
		s := pick(skills)
		write(filepath.Join(s, "SKILL.md"), "---\nname: [broken\n---\n")
		return "break " + s
	default: // a dotfile and a symlink
		s := pick(skills)
		write(filepath.Join(s, ".hidden-"+n), "h\n")
		target := filepath.Join(dir, s, "link-"+n)
		if err := os.Symlink("SKILL.md", target); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
		return "dotfile and symlink in " + s
	}
}

// TestIncrementalRescanFollowsAMovedFolder moves a skill with a subfolder
// and then edits a file in that subfolder at its new place: the watches a
// move carries along under their old names must not leave the new place
// unwatched, or trusted as first listed.
func TestIncrementalRescanFollowsAMovedFolder(t *testing.T) {
	lib, dir := tree(t, map[string]string{
		"ops/a/SKILL.md":      strings.Replace(skillMD, "%s", "a", 1),
		"ops/a/refs/notes.md": "notes\n",
		"ops/b/SKILL.md":      strings.Replace(skillMD, "%s", "b", 1),
	})
	w, err := catalog.NewWatcher(0, nil)
	must(t, err)
	defer w.Close()
	opts := &catalog.Options{OnFolder: w.Folder}
	first, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, opts)
	must(t, err)
	store := catalog.NewStore(first)
	swapped := make(chan *catalog.Snapshot, 64)
	r := catalog.NewReloader(store, func() ([]*catalog.Library, *catalog.Options) { return []*catalog.Library{lib}, opts },
		func(_, cur *catalog.Snapshot, _ bool) { swapped <- cur })
	w.Start(r)
	must(t, os.MkdirAll(filepath.Join(dir, "dev"), 0o755))
	must(t, os.Rename(filepath.Join(dir, "ops/a"), filepath.Join(dir, "dev/a")))
	waitFor(t, swapped, func(s *catalog.Snapshot) bool {
		_, ok := s.File("skill://dev/a/refs/notes.md")
		return ok
	})
	for i := range 3 {
		data := fmt.Sprintf("edited %d\n", i)
		must(t, os.WriteFile(filepath.Join(dir, "dev/a/refs/notes.md"), []byte(data), 0o644))
		waitFor(t, swapped, func(s *catalog.Snapshot) bool {
			f, ok := s.File("skill://dev/a/refs/notes.md")
			return ok && f.Size == int64(len(data))
		})
	}
	if listed, walked := r.LastRescan(); listed >= walked {
		t.Errorf("the last rescan listed %d of %d folders: not incremental", listed, walked)
	}
}

// TestRescansNeverWriteTheServedSnapshot reads everything the served
// snapshot holds while rescans that change nothing, and ones that only
// touch a file, run beside it: under -race, any write to a published
// snapshot (a no-change rescan once handed it its reuse map) fails.
func TestRescansNeverWriteTheServedSnapshot(t *testing.T) {
	lib, dir := tree(t, map[string]string{
		"a/SKILL.md":  strings.Replace(skillMD, "%s", "a", 1),
		"a/refs/x.md": "x\n",
	})
	first, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, &catalog.Options{DigestCache: catalog.NewDigestCache(t.TempDir())})
	must(t, err)
	store := catalog.NewStore(first)
	r := catalog.NewReloader(store, func() ([]*catalog.Library, *catalog.Options) { return []*catalog.Library{lib}, nil }, nil)
	done := make(chan struct{})
	read := make(chan struct{})
	go func() {
		defer close(read)
		for {
			select {
			case <-done:
				return
			default:
			}
			s := store.Snapshot()
			_ = catalog.Describe(s)
			_ = s.Unchanged()
		}
	}()
	for i := range 4 {
		if i%2 == 1 {
			now := time.Now()
			must(t, os.Chtimes(filepath.Join(dir, "a/refs/x.md"), now, now))
		}
		_, err := r.Rescan(context.Background())
		must(t, err)
	}
	close(done)
	<-read
	if store.Snapshot() != first {
		t.Error("a rescan that changed nothing a client sees swapped the snapshot")
	}
}
