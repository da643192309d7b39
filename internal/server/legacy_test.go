package server_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/server"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// legacyServer serves lib with the given options and returns a session at
// 2026-07-28 and the store, so that tests can swap snapshots.
func legacyServer(t *testing.T, lib fstest.MapFS, opts *server.Options) (*mcp.ClientSession, *catalog.Store) {
	t.Helper()
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{{FS: lib, Kind: "test"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	store := catalog.NewStore(snap)
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	for _, err := range []error{
		mcp.AddSendingCustomMethod[*skillsext.ListSkillsParams, *rawResult](c, skillsext.MethodList),
		mcp.AddSendingCustomMethod[*skillsext.GetSkillParams, *rawResult](c, skillsext.MethodGet),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	// 2025-11-25: the SDK client caches reads by TTL on 2026-07-28, and
	// these tests re-read after swapping snapshots.
	return session(t, server.New(store, opts), c, "2025-11-25"), store
}

func readBytes(t *testing.T, cs *mcp.ClientSession, uri string) ([]byte, string, error) {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, "", err
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri {
		t.Fatalf("%s: %d contents", uri, len(res.Contents))
	}
	c := res.Contents[0]
	if c.Blob != nil {
		return c.Blob, c.MIMEType, nil
	}
	return []byte(c.Text), c.MIMEType, nil
}

type legacyIndex struct {
	Skills []struct {
		URL         string          `json:"url"`
		Digest      string          `json:"digest"`
		Frontmatter json.RawMessage `json:"frontmatter"`
		Archives    []struct {
			URL      string `json:"url"`
			MIMEType string `json:"mimeType"`
			Digest   string `json:"digest"`
		} `json:"archives"`
	} `json:"skills"`
}

func TestLegacyIndexOffByDefault(t *testing.T) {
	cs, _ := legacyServer(t, library(), nil)
	for _, uri := range []string{"skill://index.json", "skill://code-review.tar.gz", "skill://code-review.zip"} {
		if _, _, err := readBytes(t, cs, uri); code(err) != -32602 {
			t.Errorf("%s without LegacyIndex: %v, want -32602", uri, err)
		}
	}
}

func TestLegacyIndex(t *testing.T) {
	cs, _ := legacyServer(t, library(), &server.Options{LegacyIndex: true})
	data, mime, err := readBytes(t, cs, "skill://index.json")
	if err != nil || mime != "application/json" {
		t.Fatalf("index: %v, %s", err, mime)
	}
	var idx legacyIndex
	if err := json.Unmarshal(data, &idx); err != nil {
		t.Fatal(err)
	}
	entries := listAll(t, cs)
	if len(idx.Skills) != len(entries) {
		t.Fatalf("index has %d skills, the listing %d", len(idx.Skills), len(entries))
	}
	for i, e := range idx.Skills {
		want := entries[i]
		var fm bytes.Buffer
		json.Compact(&fm, e.Frontmatter)
		if e.URL != want.URI || fm.String() != string(want.Frontmatter) {
			t.Errorf("entry %d: %s %s, want %s %s", i, e.URL, e.Frontmatter, want.URI, want.Frontmatter)
		}
		md, _, err := readBytes(t, cs, e.URL)
		if err != nil || e.Digest != sha(md) {
			t.Errorf("%s: digest %s, SKILL.md has %s (%v)", e.URL, e.Digest, sha(md), err)
		}
		root := strings.TrimSuffix(e.URL, "/SKILL.md")
		if len(e.Archives) != 2 || e.Archives[0].URL != root+".tar.gz" || e.Archives[0].MIMEType != "application/gzip" ||
			e.Archives[1].URL != root+".zip" || e.Archives[1].MIMEType != "application/zip" {
			t.Fatalf("%s archives: %+v", e.URL, e.Archives)
		}
		files := map[string][]byte{}
		for _, r := range want.Resources.List {
			b, _, err := readBytes(t, cs, r.URI)
			if err != nil {
				t.Fatal(err)
			}
			files[strings.TrimPrefix(r.URI, root+"/")] = b
		}
		for _, a := range e.Archives {
			blob, mime, err := readBytes(t, cs, a.URL)
			if err != nil || mime != a.MIMEType || sha(blob) != a.Digest {
				t.Fatalf("%s: %v, %s, digest %s, index %s", a.URL, err, mime, sha(blob), a.Digest)
			}
			got := unpack(t, a.URL, blob)
			if len(got) != len(files) {
				t.Errorf("%s holds %d files, the skill %d", a.URL, len(got), len(files))
			}
			for name, b := range files {
				if !bytes.Equal(got[name], b) {
					t.Errorf("%s: %s differs from the served file", a.URL, name)
				}
			}
		}
	}
	// Archive URIs that name no skill, and the catalog's own files, are
	// answered as before.
	if _, _, err := readBytes(t, cs, "skill://nope.tar.gz"); code(err) != -32602 {
		t.Errorf("archive of no skill: %v", err)
	}
	if _, _, err := readBytes(t, cs, "skill://code-review/references/checklist.md"); err != nil {
		t.Errorf("a catalog file: %v", err)
	}
}

func listAll(t *testing.T, cs *mcp.ClientSession) []skillsext.Skill {
	t.Helper()
	var out []skillsext.Skill
	cursor := ""
	for range 100 {
		res, err := call(t, cs, skillsext.MethodList, &skillsext.ListSkillsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, decode[[]skillsext.Skill](t, res["skills"])...)
		if _, ok := res["nextCursor"]; !ok {
			return out
		}
		cursor = decode[string](t, res["nextCursor"])
	}
	t.Fatal("listing does not end")
	return nil
}

// unpack returns the files of an archive, and checks that its entries are
// sorted, with fixed times, modes and owners.
func unpack(t *testing.T, uri string, blob []byte) map[string][]byte {
	t.Helper()
	want := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	files := map[string][]byte{}
	var names []string
	if strings.HasSuffix(uri, ".tar.gz") {
		gz, err := gzip.NewReader(bytes.NewReader(blob))
		if err != nil {
			t.Fatal(err)
		}
		if gz.Name != "" || !gz.ModTime.IsZero() || gz.Comment != "" {
			t.Errorf("%s: gzip header %+v", uri, gz.Header)
		}
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, h.Name)
			dir := h.Typeflag == tar.TypeDir
			if !h.ModTime.Equal(want) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" ||
				(dir && h.Mode != 0o755) || (!dir && (h.Mode != 0o644 || h.Typeflag != tar.TypeReg)) {
				t.Errorf("%s: header %+v", uri, h)
			}
			if !dir {
				files[h.Name], _ = io.ReadAll(tr)
			}
		}
	} else {
		zr, err := zip.NewReader(bytes.NewReader(blob), int64(len(blob)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			names = append(names, f.Name)
			dir := strings.HasSuffix(f.Name, "/")
			if !f.Modified.Equal(want) || (dir && f.Mode() != fs.ModeDir|0o755) || (!dir && f.Mode() != 0o644) {
				t.Errorf("%s: %s modified %s mode %s", uri, f.Name, f.Modified, f.Mode())
			}
			if !dir {
				rc, err := f.Open()
				if err != nil {
					t.Fatal(err)
				}
				files[f.Name], _ = io.ReadAll(rc)
				rc.Close()
			}
		}
	}
	if !slices.IsSorted(names) || !slices.Contains(names, "SKILL.md") {
		t.Errorf("%s: entries %v are not sorted or lack SKILL.md", uri, names)
	}
	return files
}

// TestLegacyReproducible: two servers built from separate scans serve
// byte-identical indexes and archives.
func TestLegacyReproducible(t *testing.T) {
	a, _ := legacyServer(t, library(), &server.Options{LegacyIndex: true})
	lib := library()
	for name, f := range lib {
		f.ModTime = time.Unix(12345, 0) // file times must not matter
		f.Mode = 0o600
		lib[name] = f
	}
	b, _ := legacyServer(t, lib, &server.Options{LegacyIndex: true})
	ia, _, _ := readBytes(t, a, "skill://index.json")
	ib, _, _ := readBytes(t, b, "skill://index.json")
	if !bytes.Equal(ia, ib) {
		t.Fatalf("indexes differ:\n%s\n%s", ia, ib)
	}
	for _, u := range []string{"skill://ops/deploy.tar.gz", "skill://ops/deploy.zip", "skill://code-review.tar.gz", "skill://code-review.zip"} {
		x, _, err1 := readBytes(t, a, u)
		y, _, err2 := readBytes(t, b, u)
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs: %v %v", u, err1, err2)
		}
	}
}

// TestLegacyStableMethodsUnchanged: skills/list and skills/get answer
// byte for byte the same with the legacy index on; resources/list gains
// skill://index.json on its first page.
func TestLegacyStableMethodsUnchanged(t *testing.T) {
	off, _ := legacyServer(t, library(), &server.Options{PageSize: 2})
	on, _ := legacyServer(t, library(), &server.Options{PageSize: 2, LegacyIndex: true})
	cursor := ""
	for range 10 {
		a, err1 := call(t, off, skillsext.MethodList, &skillsext.ListSkillsParams{Cursor: cursor})
		b, err2 := call(t, on, skillsext.MethodList, &skillsext.ListSkillsParams{Cursor: cursor})
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if err1 != nil || err2 != nil || !bytes.Equal(ja, jb) {
			t.Fatalf("skills/list differs:\n%s\n%s", ja, jb)
		}
		for _, e := range decode[[]skillsext.Skill](t, a["skills"]) {
			ga, _ := call(t, off, skillsext.MethodGet, &skillsext.GetSkillParams{URI: e.URI})
			gb, _ := call(t, on, skillsext.MethodGet, &skillsext.GetSkillParams{URI: e.URI})
			x, _ := json.Marshal(ga)
			y, _ := json.Marshal(gb)
			if !bytes.Equal(x, y) {
				t.Errorf("skills/get %s differs", e.URI)
			}
		}
		if _, ok := a["nextCursor"]; !ok {
			break
		}
		cursor = decode[string](t, a["nextCursor"])
	}
	ra, _ := off.ListResources(context.Background(), nil)
	rb, _ := on.ListResources(context.Background(), nil)
	if len(rb.Resources) != len(ra.Resources)+1 || rb.Resources[0].URI != "skill://index.json" {
		t.Errorf("resources/list with the legacy index: %d resources, first %s", len(rb.Resources), rb.Resources[0].URI)
	}
}

// TestLegacyFollowsSnapshots: after a rescan the index and archives
// describe the new snapshot.
func TestLegacyFollowsSnapshots(t *testing.T) {
	cs, store := legacyServer(t, library(), &server.Options{LegacyIndex: true})
	before, _, _ := readBytes(t, cs, "skill://index.json")
	tarBefore, _, _ := readBytes(t, cs, "skill://code-review.tar.gz")
	lib := library()
	lib["code-review/references/checklist.md"] = &fstest.MapFile{Data: []byte("# Review checklist\n\nChanged.\n")}
	lib["new-skill/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: new-skill\ndescription: New.\n---\nNew.\n")}
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{{FS: lib, Kind: "test"}}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	store.Swap(snap)
	after, _, _ := readBytes(t, cs, "skill://index.json")
	tarAfter, _, _ := readBytes(t, cs, "skill://code-review.tar.gz")
	if bytes.Equal(before, after) || !strings.Contains(string(after), "skill://new-skill.zip") || bytes.Equal(tarBefore, tarAfter) {
		t.Error("the legacy index did not follow the new snapshot")
	}
	if _, _, err := readBytes(t, cs, "skill://new-skill.tar.gz"); err != nil {
		t.Errorf("archive of the new skill: %v", err)
	}
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
