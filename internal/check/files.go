package check

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/skill"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// gets checks skills/get of every listed entry.
func (c *checker) gets(ctx context.Context, s *session, l *listing) {
	for _, e := range l.entries {
		if e.valid && !c.get(ctx, s, e) {
			return
		}
	}
}

// get checks skills/get of one listed entry (S4, S28, S29). It returns
// false when the method is not implemented.
func (c *checker) get(ctx context.Context, s *session, e *entry) bool {
	v := s.version
	raw, err := call(ctx, s, skillsext.MethodGet, &skillsext.GetSkillParams{URI: e.uri})
	if err != nil {
		if code(err) == -32601 {
			c.rec.add(Fail, "get-implemented", v, "skills/get", "the method is not implemented (-32601), though the extension is declared")
			return false
		}
		c.rec.add(Fail, "get-shape", v, e.uri, "skills/get of a listed skill failed: %v", err)
		return true
	}
	c.rec.ok("get-implemented", v)
	m, err := object(raw)
	if err != nil {
		c.rec.add(Fail, "get-shape", v, e.uri, "skills/get result: %v", err)
		return true
	}
	c.resultType(s, m, "skills/get "+e.uri)
	c.cacheFields(s, m, "skills/get "+e.uri)
	var problems []string
	if _, has := m["nextCursor"]; has {
		problems = append(problems, "the result carries nextCursor")
	}
	sk, err := object(m["skill"])
	if err != nil {
		problems = append(problems, "skill: "+err.Error())
	} else {
		if uri, _ := str(sk, "uri"); uri != e.uri {
			problems = append(problems, fmt.Sprintf("skill.uri is %q, not the requested URI", uri))
		}
		if !equalJSON(sk["frontmatter"], e.fmRaw) {
			problems = append(problems, "its frontmatter differs from the listed one")
		}
		if !sameResources(sk["resources"], e) {
			problems = append(problems, "its resources differ from the listed ones")
		}
	}
	if len(problems) > 0 {
		c.rec.add(Fail, "get-shape", v, e.uri, "%s", strings.Join(problems, "; "))
	} else {
		c.rec.ok("get-shape", v)
	}
	return true
}

// sameResources reports whether raw lists the same files as e, in any
// order.
func sameResources(raw json.RawMessage, e *entry) bool {
	if e.dynamic {
		return string(bytes.TrimSpace(raw)) == `"dynamic"`
	}
	var got []struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int64  `json:"size"`
	}
	if json.Unmarshal(raw, &got) != nil || len(got) != len(e.files) {
		return false
	}
	key := func(uri, digest string, size int64) string { return fmt.Sprintf("%s\x00%s\x00%d", uri, digest, size) }
	var a, b []string
	for i := range got {
		a = append(a, key(got[i].URI, got[i].Digest, got[i].Size))
		b = append(b, key(e.files[i].uri, e.files[i].digest, e.files[i].size))
	}
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// probes checks the errors for URIs the server does not serve as asked
// (S27, S31, S33).
func (c *checker) probes(ctx context.Context, s *session, l *listing, d declared) {
	v := s.version
	unknown := skillsext.SkillURI(nonexistentSkillPath)
	expect := func(id, subject, what string, err error, answered bool) {
		switch {
		case err == nil && answered:
			c.rec.add(Fail, id, v, subject, "%s was answered; want error -32602", what)
		case err != nil && code(err) != -32602:
			c.rec.add(Fail, id, v, subject, "%s gave %v; want error -32602", what, err)
		default:
			c.rec.ok(id, v)
		}
	}
	_, err := call(ctx, s, skillsext.MethodGet, &skillsext.GetSkillParams{URI: unknown})
	expect("get-unknown", unknown, "skills/get of an unknown skill", err, true)
	_, err = s.read(ctx, unknown, c.opts.Tester)
	expect("read-unknown", unknown, "resources/read of an unknown skill URI", err, true)

	// Probes built from a served skill: the first valid skill:// entry.
	var e *entry
	for _, x := range l.entries {
		if x.valid && x.scheme == skillsext.Scheme && strings.HasSuffix(x.uri, "/"+skillsext.SkillFile) {
			e = x
			break
		}
	}
	if e == nil {
		c.rec.add(Skip, "get-unknown", v, "", "no listed skill:// entry to build the supporting-file and directory probes from")
	} else {
		for _, r := range e.files {
			if r.uri != e.uri && r.uri != "" {
				_, err = call(ctx, s, skillsext.MethodGet, &skillsext.GetSkillParams{URI: r.uri})
				expect("get-unknown", r.uri, "skills/get of a supporting file (not a SKILL.md)", err, true)
				break
			}
		}
		_, err = call(ctx, s, skillsext.MethodGet, &skillsext.GetSkillParams{URI: e.root})
		expect("get-unknown", e.root, "skills/get of a skill's directory", err, true)
	}
	if !d.directoryRead {
		return
	}
	_, err = call(ctx, s, skillsext.MethodReadDirectory, &skillsext.ReadDirectoryParams{URI: skillsext.RootURI(nonexistentSkillPath)})
	expect("directory-invalid", skillsext.RootURI(nonexistentSkillPath), "resources/directory/read of an unknown directory", err, true)
	if e != nil {
		_, err = call(ctx, s, skillsext.MethodReadDirectory, &skillsext.ReadDirectoryParams{URI: e.uri})
		expect("directory-invalid", e.uri, "resources/directory/read of a file", err, true)
	}
}

// reads reads every listed file once and checks it against the entry
// (S19, S31), within the byte bounds.
func (c *checker) reads(ctx context.Context, s *session, l *listing) {
	v := s.version
	verified := map[string]string{} // uri → digest it was verified against
	skillMDs := map[string][]byte{}
entries:
	for _, e := range l.entries {
		switch {
		case !e.valid:
			continue
		case e.dynamic:
			c.rec.add(Skip, "read-files", v, e.uri, `resources is "dynamic": there are no digests to verify reads against`)
			continue
		case e.bytes() > skillsext.MaxTotalBytes:
			c.rec.add(Skip, "read-files", v, e.uri, "not read: the skill declares %d bytes, over the 16 MiB limit; a host may decline it without reading (H16)", e.bytes())
			continue
		}
		for _, r := range e.files {
			if !r.ok {
				continue
			}
			if d, done := verified[r.uri]; done {
				if d != r.digest {
					c.rec.add(Fail, "read-files", v, r.uri, "two skills list this file with different digests (%s and %s)", d, r.digest)
				}
				continue
			}
			if r.size > c.opts.MaxFileBytes {
				c.rec.add(Skip, "read-files", v, r.uri, "not read: %d bytes is over the %d-byte read cap", r.size, c.opts.MaxFileBytes)
				continue
			}
			if c.read+r.size > c.opts.MaxTotalBytes {
				c.rec.add(Skip, "read-files", v, r.uri, "not read, nor any file after it: the run's read budget of %d bytes is spent", c.opts.MaxTotalBytes)
				break entries
			}
			verified[r.uri] = r.digest
			data, ok := c.readFile(ctx, s, r.uri, r.uri == e.uri)
			if !ok {
				continue
			}
			if int64(len(data)) != r.size || digestOf(data) != r.digest {
				c.rec.add(Fail, "read-files", v, r.uri, "read %d bytes with digest %s; the entry lists %d bytes with %s", len(data), digestOf(data), r.size, r.digest)
				continue
			}
			c.rec.ok("read-files", v)
			if strings.HasSuffix(r.uri, "/"+skillsext.SkillFile) {
				skillMDs[r.uri] = data
			}
		}
	}
	// A nested skill's SKILL.md may have been read as a file of the skill
	// around it.
	for _, e := range l.entries {
		if md, ok := skillMDs[e.uri]; ok {
			e.skillMD = md
		}
	}
}

// readFile reads one file and checks the shape of the result; it returns
// the bytes and whether they could be obtained.
func (c *checker) readFile(ctx context.Context, s *session, uri string, isSkillMD bool) ([]byte, bool) {
	v := s.version
	res, err := s.read(ctx, uri, c.opts.Tester)
	if err != nil {
		if code(err) == -32602 {
			c.rec.add(Fail, "read-files", v, uri, "the server does not serve this listed file: %v", err)
		} else {
			c.rec.add(Fail, "read-files", v, uri, "resources/read failed: %v", err)
		}
		return nil, false
	}
	data, problem := contentsOf(res, uri)
	if problem != "" {
		c.rec.add(Fail, "read-files", v, uri, "%s", problem)
		return nil, false
	}
	c.read += int64(len(data))
	if s.newProtocol() {
		if res.CacheScope != "public" && res.CacheScope != "private" {
			c.rec.add(Fail, "cache-fields", v, uri, "the resources/read result has cacheScope %q; on %s it must be public or private", res.CacheScope, v)
		} else {
			c.rec.ok("cache-fields", v)
		}
	}
	if isSkillMD {
		if mt := res.Contents[0].MIMEType; mt != "text/markdown" {
			c.rec.add(Warn, "skillmd-mimetype", v, uri, "SKILL.md is served as %q; want text/markdown", mt)
		} else {
			c.rec.ok("skillmd-mimetype", v)
		}
	}
	return data, true
}

// contentsOf returns the bytes of a single-item read result, or what is
// wrong with it.
func contentsOf(res *mcp.ReadResourceResult, uri string) ([]byte, string) {
	if len(res.Contents) != 1 {
		return nil, fmt.Sprintf("the result holds %d content items; want exactly 1", len(res.Contents))
	}
	ct := res.Contents[0]
	switch {
	case ct == nil:
		return nil, "the content item is null"
	case ct.URI != uri:
		return nil, fmt.Sprintf("the content item is for %q, not the requested URI", ct.URI)
	case ct.Text != "" && ct.Blob != nil:
		return nil, "the content item has both text and blob"
	case ct.Blob != nil:
		return ct.Blob, ""
	default:
		return []byte(ct.Text), ""
	}
}

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// frontmatters checks every SKILL.md read against its entry (S7, S16).
func (c *checker) frontmatters(l *listing, v string) {
	for _, e := range l.entries {
		if e.skillMD == nil {
			if e.valid && !e.dynamic {
				c.rec.add(Skip, "frontmatter-identical", v, e.uri, "SKILL.md was not read, so its frontmatter is not compared")
			}
			continue
		}
		doc, err := skill.Parse(e.skillMD)
		if err != nil {
			c.rec.add(Fail, "skillmd-frontmatter", v, e.uri, "the served SKILL.md has no usable frontmatter: %v", err)
			continue
		}
		fm := doc.Frontmatter
		if fm.Name() == "" || fm.Description() == "" {
			c.rec.add(Fail, "skillmd-frontmatter", v, e.uri, "the served SKILL.md frontmatter lacks a name or description string")
		} else {
			c.rec.ok("skillmd-frontmatter", v)
		}
		if diffs := frontmatterDiffs(e.frontmatter, fm); len(diffs) > 0 {
			c.rec.add(Fail, "frontmatter-identical", v, e.uri, "the entry's frontmatter differs from the served SKILL.md: %s", strings.Join(diffs, "; "))
		} else {
			c.rec.ok("frontmatter-identical", v)
		}
	}
}

// frontmatterDiffs compares an entry's frontmatter with a parsed SKILL.md
// key by key, as values (key order inside values does not matter).
func frontmatterDiffs(entry map[string]json.RawMessage, fm *skill.Frontmatter) []string {
	var diffs []string
	served := map[string]bool{}
	for _, k := range fm.Keys() {
		served[k] = true
		got, _ := fm.Field(k)
		want, ok := entry[k]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%q is in SKILL.md but not in the entry", k))
		case !equalJSON(want, got):
			diffs = append(diffs, fmt.Sprintf("%q is %s in the entry, %s in SKILL.md", k, truncate(string(want), 80), truncate(string(got), 80)))
		}
	}
	var extra []string
	for k := range entry {
		if !served[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		diffs = append(diffs, fmt.Sprintf("%q is in the entry but not in SKILL.md", k))
	}
	return diffs
}

// equalJSON reports whether two JSON texts hold the same value: object key
// order is ignored and numbers compare by value.
func equalJSON(a, b json.RawMessage) bool {
	va, errA := decodeValue(a)
	vb, errB := decodeValue(b)
	return errA == nil && errB == nil && sameValue(va, vb)
}

func decodeValue(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func sameValue(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !sameValue(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, sameValue)
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, okx := new(big.Float).SetString(x.String())
		fy, oky := new(big.Float).SetString(y.String())
		return okx && oky && fx.Cmp(fy) == 0
	default:
		return a == b
	}
}

// rereads reads every SKILL.md the first connection read again on this
// one, twice where the SDK does not cache reads (before 2026-07-28), and
// compares the bytes (S30, S31).
func (c *checker) rereads(ctx context.Context, s *session, first *listing) {
	v := s.version
	n := 1
	if !s.newProtocol() {
		n = 2
	}
	for _, e := range first.entries {
		if e.skillMD == nil {
			continue
		}
		want := digestOf(e.skillMD)
		for i := 1; i <= n; i++ {
			res, err := s.read(ctx, e.uri, c.opts.Tester)
			if err != nil {
				c.rec.add(Fail, "read-stable", v, e.uri, "re-reading SKILL.md failed: %v", err)
				break
			}
			data, problem := contentsOf(res, e.uri)
			if problem != "" {
				c.rec.add(Fail, "read-stable", v, e.uri, "re-reading SKILL.md: %s", problem)
				break
			}
			c.read += int64(len(data))
			if got := digestOf(data); got != want {
				c.rec.add(Fail, "read-stable", v, e.uri, "read %d on this connection returned %d bytes with %s; the first read returned %d bytes with %s, as listed; "+
					"hosts must verify every read (H10)", i, len(data), got, len(e.skillMD), want)
				break
			}
			if i == n {
				c.rec.ok("read-stable", v)
			}
		}
	}
}
