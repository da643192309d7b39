package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Limits of GenOptions.Skills.
const (
	MaxGenSkills = 1_000_000
	// markerName is written at the root of every generated library. Its
	// presence is what allows --force to replace a directory: skills-bench
	// never deletes a tree it did not write. It is a dotfile outside any
	// skill folder, so servers do not serve it.
	markerName = ".skills-bench.json"
)

// GenOptions configures Generate. The zero value of each field except
// Skills is a valid default.
type GenOptions struct {
	// Skills is the number of skills to write, nested ones included.
	Skills int
	// Seed selects the library; the same options always give the same bytes.
	Seed uint64
	// Nested is the fraction (0–1) of skills placed inside the folder of
	// another skill rather than in a category folder.
	Nested float64
	// Binaries is the fraction (0–1) of skills that bundle a small binary
	// asset (a PNG-like blob under assets/).
	Binaries float64
	// Force replaces a non-empty output directory, but only one written by
	// an earlier Generate.
	Force bool
}

// GenStats summarises a generated library.
type GenStats struct {
	Skills int   `json:"skills"`
	Nested int   `json:"nested"`
	Files  int   `json:"files"`
	Bytes  int64 `json:"bytes"`
	// Digest is a SHA-256 over every file's path, mode and bytes in write
	// order: two libraries with the same digest are byte-for-byte equal, so
	// results measured on them are comparable.
	Digest string `json:"digest"`
}

// ErrNotEmpty is returned when the output directory holds files and
// GenOptions.Force is not set.
var ErrNotEmpty = errors.New("bench: output directory is not empty (use --force to replace a library written by skills-bench gen)")

// ErrNotGenerated is returned when Force would replace a directory that
// skills-bench did not write.
var ErrNotGenerated = errors.New("bench: refusing to replace a directory that skills-bench gen did not write")

// Generate writes a synthetic skill library of opts.Skills skills to dir.
// The layout is <category>/<name>/SKILL.md over eight categories (nested
// skills sit inside another skill's folder), with one to three reference
// files, a Python script for every second skill and, for a fraction of
// skills, a binary asset: about 3.5 files per skill, like the libraries the
// peer servers were measured on.
//
// The output depends only on opts: no clock, no map order, no environment.
// The tree is built in dir+".tmp" and renamed into place, so dir never holds
// a half-written library. A non-empty dir is refused with ErrNotEmpty unless
// opts.Force is set, and Force never replaces a directory without the
// marker file an earlier Generate left (ErrNotGenerated).
func Generate(dir string, opts GenOptions) (GenStats, error) {
	if opts.Skills < 1 || opts.Skills > MaxGenSkills {
		return GenStats{}, fmt.Errorf("bench: --skills must be between 1 and %d, got %d", MaxGenSkills, opts.Skills)
	}
	if opts.Nested < 0 || opts.Nested > 1 || opts.Binaries < 0 || opts.Binaries > 1 {
		return GenStats{}, errors.New("bench: --nested and --binaries are fractions between 0 and 1")
	}
	dir = filepath.Clean(dir)
	exists, err := checkReplaceable(dir, opts.Force)
	if err != nil {
		return GenStats{}, err
	}
	tmp := dir + ".tmp"
	if err := removeGenerated(tmp); err != nil {
		return GenStats{}, err
	}
	stats, err := writeLibrary(tmp, opts)
	if err != nil {
		return GenStats{}, errors.Join(err, os.RemoveAll(tmp))
	}
	if exists {
		old := dir + ".old"
		if err := removeGenerated(old); err != nil {
			return GenStats{}, err
		}
		if err := os.Rename(dir, old); err != nil {
			return GenStats{}, fmt.Errorf("moving the old library aside: %w", err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			return GenStats{}, fmt.Errorf("installing the library: %w", err)
		}
		return stats, os.RemoveAll(old)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return GenStats{}, fmt.Errorf("installing the library: %w", err)
	}
	return stats, nil
}

// checkReplaceable reports whether dir exists and may be replaced.
func checkReplaceable(dir string, force bool) (exists bool, err error) {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading output directory: %w", err)
	case len(ents) == 0:
		return true, nil
	case !force:
		return false, fmt.Errorf("%s: %w", dir, ErrNotEmpty)
	}
	if _, err := os.Lstat(filepath.Join(dir, markerName)); err != nil {
		return false, fmt.Errorf("%s: %w", dir, ErrNotGenerated)
	}
	return true, nil
}

// removeGenerated removes a leftover work directory (dir.tmp or dir.old)
// if it is empty or was written by Generate.
func removeGenerated(dir string) error {
	exists, err := checkReplaceable(dir, true)
	if err != nil || !exists {
		return err
	}
	return os.RemoveAll(dir)
}

// plannedSkill is one skill's place in the library, decided before any
// content is drawn.
type plannedSkill struct {
	name     string
	category string
	dir      string // slash-separated, relative to the library root
	parent   int    // index of the enclosing skill, or -1
}

// planLayout draws every skill's name, category and folder.
func planLayout(opts GenOptions) []plannedSkill {
	r := rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15))
	used := make(map[string]bool, opts.Skills) // lookups only: never iterated
	var tops []int
	plan := make([]plannedSkill, opts.Skills)
	for i := range plan {
		name := uniqueName(r, used, i)
		p := plannedSkill{name: name, parent: -1}
		if len(tops) > 0 && r.Float64() < opts.Nested {
			p.parent = tops[r.IntN(len(tops))]
			p.category = plan[p.parent].category
			p.dir = plan[p.parent].dir + "/" + name
		} else {
			p.category = categories[r.IntN(len(categories))]
			p.dir = p.category + "/" + name
			tops = append(tops, i)
		}
		plan[i] = p
	}
	return plan
}

// uniqueName returns a valid Agent Skills name not yet in used: verb-object,
// then verb-object-qualifier, then a numbered form.
func uniqueName(r *rand.Rand, used map[string]bool, i int) string {
	verb, obj := pick(r, verbs), pick(r, objects)
	candidates := []string{
		verb + "-" + obj,
		verb + "-" + obj + "-" + pick(r, qualifiers),
		pick(r, qualifiers) + "-" + verb + "-" + obj,
		fmt.Sprintf("%s-%s-%d", verb, obj, i+1),
	}
	for _, c := range candidates {
		if !used[c] {
			used[c] = true
			return c
		}
	}
	// Unreachable: the numbered form embeds the unique index and no other
	// form ends in a number.
	panic("bench: name collision for " + candidates[len(candidates)-1])
}

func pick(r *rand.Rand, words []string) string { return words[r.IntN(len(words))] }

// pickN returns min(n, len(words)) distinct words in random order.
func pickN(r *rand.Rand, words []string, n int) []string {
	out := make([]string, 0, n)
	for _, i := range r.Perm(len(words))[:min(n, len(words))] {
		out = append(out, words[i])
	}
	return out
}

// writeLibrary writes the library into root, which must not exist.
func writeLibrary(root string, opts GenOptions) (GenStats, error) {
	if err := os.Mkdir(root, 0o755); err != nil {
		return GenStats{}, fmt.Errorf("creating %s: %w", root, err)
	}
	marker, err := json.Marshal(struct {
		Generator string  `json:"generator"`
		Skills    int     `json:"skills"`
		Seed      uint64  `json:"seed"`
		Nested    float64 `json:"nested"`
		Binaries  float64 `json:"binaries"`
	}{"skills-bench gen", opts.Skills, opts.Seed, opts.Nested, opts.Binaries})
	if err != nil {
		return GenStats{}, err
	}
	// The marker goes first, so that a half-written dir.tmp left by a crash
	// can be recognised and removed by the next run.
	if err := os.WriteFile(filepath.Join(root, markerName), append(marker, '\n'), 0o644); err != nil {
		return GenStats{}, err
	}
	var st GenStats
	digest := sha256.New()
	for i, p := range planLayout(opts) {
		files := skillFiles(opts, i, p)
		for _, f := range files {
			path := filepath.Join(root, filepath.FromSlash(p.dir), filepath.FromSlash(f.path))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return st, err
			}
			if err := os.WriteFile(path, f.data, f.mode); err != nil {
				return st, err
			}
			st.Files++
			st.Bytes += int64(len(f.data))
			fmt.Fprintf(digest, "%s/%s\x00%o\x00%d\x00", p.dir, f.path, f.mode, len(f.data))
			digest.Write(f.data)
		}
		st.Skills++
		if p.parent >= 0 {
			st.Nested++
		}
	}
	st.Digest = "sha256:" + hex.EncodeToString(digest.Sum(nil))
	return st, nil
}

// genFile is one file of a skill, relative to the skill folder.
type genFile struct {
	path string
	data []byte
	mode fs.FileMode
}

// skillFiles draws the files of skill i. Each skill has its own generator
// seeded from (Seed, i), so one skill's content never depends on another's.
func skillFiles(opts GenOptions, i int, p plannedSkill) []genFile {
	r := rand.New(rand.NewPCG(opts.Seed, uint64(i)+1))
	words := strings.Split(p.name, "-")
	s := &skillText{r: r, name: p.name, title: titleCase(words), words: words}

	nrefs := 1 + r.IntN(3) // 1–3, two on average
	refs := []string{"references/guide.md", "references/checklist.md", "references/examples/" + pick(r, objects) + "-example.md"}[:nrefs]
	hasScript := i%2 == 0
	files := []genFile{{path: "SKILL.md", data: s.skillMD(p.category, refs, hasScript), mode: 0o644}}
	for _, ref := range refs {
		var data []byte
		switch {
		case strings.HasSuffix(ref, "guide.md"):
			data = s.guide()
		case strings.HasSuffix(ref, "checklist.md"):
			data = s.checklist()
		default:
			data = s.example()
		}
		files = append(files, genFile{path: ref, data: data, mode: 0o644})
	}
	if hasScript {
		files = append(files, genFile{path: "scripts/run.py", data: s.script(), mode: 0o755})
	}
	if r.Float64() < opts.Binaries {
		files = append(files, genFile{path: "assets/" + pick(r, objects) + ".png", data: pngBlob(r), mode: 0o644})
	}
	return files
}

// skillText draws the text of one skill.
type skillText struct {
	r     *rand.Rand
	name  string
	title string
	words []string
}

func titleCase(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(out, " ")
}

func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// thirdPerson inflects a verb from the verbs table: "verify" → "verifies",
// "fix" → "fixes", "build" → "builds".
func thirdPerson(v string) string {
	switch {
	case strings.HasSuffix(v, "y") && !strings.ContainsRune("aeiou", rune(v[len(v)-2])):
		return v[:len(v)-1] + "ies"
	case strings.HasSuffix(v, "x"), strings.HasSuffix(v, "sh"), strings.HasSuffix(v, "ch"), strings.HasSuffix(v, "s"):
		return v + "es"
	}
	return v + "s"
}

func (s *skillText) skillMD(category string, refs []string, hasScript bool) []byte {
	r := s.r
	var b bytes.Buffer
	b.WriteString("---\n")
	fmt.Fprintf(&b, "name: %s\n", s.name)
	fmt.Fprintf(&b, "description: %s %s work for %s, keeping the result %s and %s. Use it %s, or when the user mentions %s.\n",
		capitalize(thirdPerson(s.words[0])), strings.Join(s.words[1:], " "), pick(r, audiences),
		pick(r, adjectives), pick(r, adjectives), pick(r, situations), strings.Join(s.words, " or "))
	fmt.Fprintf(&b, "category: %s\n", category)
	b.WriteString("tags:\n")
	for _, t := range s.words {
		fmt.Fprintf(&b, "  - %s\n", t)
	}
	fmt.Fprintf(&b, "  - %s\n", pick(r, objects))
	if r.IntN(10) < 3 {
		fmt.Fprintf(&b, "license: %s\n", pick(r, licenses))
	}
	if r.IntN(10) < 2 {
		fmt.Fprintf(&b, "metadata:\n  version: \"%d.%d\"\n  owner: %s\n", 1+r.IntN(3), r.IntN(10), pick(r, categories))
	}
	b.WriteString("---\n")

	// The body is 10–60 lines: title, intro, sections, and the footer that
	// points at the bundled files.
	target := 10 + r.IntN(51)
	lines := []string{
		"# " + s.title, "",
		fmt.Sprintf("This skill helps %s %s %s. It is written for %s and works best %s.",
			pick(r, audiences), s.words[0], strings.Join(s.words[1:], " "), pick(r, audiences), pick(r, situations)),
		"",
	}
	var footer []string
	if hasScript {
		footer = append(footer, "Run `python3 scripts/run.py <files>` to check the inputs before you start.")
	}
	for _, ref := range refs {
		footer = append(footer, fmt.Sprintf("See [%s](%s) for details.", filepath.Base(ref), ref))
	}
	for sec := 0; len(lines) < target-len(footer)-1; sec++ {
		lines = append(lines, s.section(sec%3)...)
	}
	lines = append(lines[:max(target-len(footer)-1, 4)], "")
	lines = append(lines, footer...)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// section returns one body section: when to use, steps, or notes.
func (s *skillText) section(kind int) []string {
	r := s.r
	n := 2 + r.IntN(5)
	var out []string
	switch kind {
	case 0:
		out = append(out, "## When to use", "")
		for _, w := range pickN(r, situations, n) {
			out = append(out, "- "+capitalize(w)+".")
		}
	case 1:
		out = append(out, "## Steps", "")
		for j, w := range pickN(r, actions, n) {
			out = append(out, fmt.Sprintf("%d. %s.", j+1, w))
		}
	default:
		out = append(out, "## Notes", "")
		for _, w := range pickN(r, notes, n) {
			out = append(out, "- "+w+".")
		}
	}
	return append(out, "")
}

func (s *skillText) guide() []byte {
	r := s.r
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s guide\n\n", s.title)
	for sec := range 2 + r.IntN(5) {
		fmt.Fprintf(&b, "## %d. %s\n\n", sec+1, capitalize(pick(r, verbs))+" the "+pick(r, objects))
		for range 2 + r.IntN(4) {
			fmt.Fprintf(&b, "%s. %s, so that the result stays %s. %s.\n",
				pick(r, actions), capitalize(pick(r, situations)), pick(r, adjectives), pick(r, notes))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func (s *skillText) checklist() []byte {
	r := s.r
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Checklist: %s\n\n", s.title)
	for _, w := range pickN(r, actions, 6+r.IntN(12)) {
		fmt.Fprintf(&b, "- [ ] %s.\n", w)
	}
	return b.Bytes()
}

func (s *skillText) example() []byte {
	r := s.r
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Example: %s a %s\n\nInput:\n\n```yaml\n", s.words[0], pick(r, objects))
	for range 3 + r.IntN(8) {
		fmt.Fprintf(&b, "%s: %s\n", pick(r, objects), pick(r, adjectives))
	}
	fmt.Fprintf(&b, "```\n\nExpected result: a %s %s for %s.\n", pick(r, adjectives), pick(r, objects), pick(r, audiences))
	return b.Bytes()
}

func (s *skillText) script() []byte {
	r := s.r
	var b bytes.Buffer
	b.WriteString("#!/usr/bin/env python3\n")
	if r.IntN(10) < 4 { // a PEP 723 inline metadata block
		b.WriteString("# /// script\n# requires-python = \">=3.11\"\n# dependencies = [\n")
		for range 1 + r.IntN(3) {
			fmt.Fprintf(&b, "#     %q,\n", pick(r, pythonDeps))
		}
		b.WriteString("# ]\n# ///\n")
	}
	fmt.Fprintf(&b, "\"\"\"%s: check %s inputs before the skill runs.\"\"\"\n\n", s.title, strings.Join(s.words[1:], " "))
	b.WriteString("import argparse\nimport json\nimport sys\n\n\n")
	checks := 1 + r.IntN(4)
	for c := range checks {
		fmt.Fprintf(&b, "def check_%d(text: str) -> list[str]:\n", c)
		fmt.Fprintf(&b, "    \"\"\"%s.\"\"\"\n", pick(r, actions))
		fmt.Fprintf(&b, "    problems = []\n    if len(text) > %d:\n", 1000*(1+r.IntN(100)))
		fmt.Fprintf(&b, "        problems.append(%q)\n    return problems\n\n\n", pick(r, notes))
	}
	b.WriteString("def main() -> int:\n")
	fmt.Fprintf(&b, "    parser = argparse.ArgumentParser(description=%q)\n", s.title)
	b.WriteString("    parser.add_argument(\"paths\", nargs=\"+\")\n    args = parser.parse_args()\n")
	b.WriteString("    report = []\n    for path in args.paths:\n")
	b.WriteString("        with open(path, encoding=\"utf-8\") as f:\n            text = f.read()\n")
	b.WriteString("        problems = []\n")
	for c := range checks {
		fmt.Fprintf(&b, "        problems += check_%d(text)\n", c)
	}
	b.WriteString("        report.append({\"path\": path, \"problems\": problems})\n")
	b.WriteString("    json.dump(report, sys.stdout, indent=2)\n")
	b.WriteString("    return 1 if any(r[\"problems\"] for r in report) else 0\n\n\n")
	b.WriteString("if __name__ == \"__main__\":\n    sys.exit(main())\n")
	return b.Bytes()
}

// pngBlob returns 200–4,000 bytes shaped like a PNG: the signature, an
// IHDR chunk and an IDAT chunk of random bytes. Servers see binary content
// (not valid UTF-8) that no archive sniffer mistakes for an archive.
func pngBlob(r *rand.Rand) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(16+r.IntN(240)))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(16+r.IntN(240)))
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	writeChunk(&b, "IHDR", ihdr)
	data := make([]byte, 160+r.IntN(3800))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	writeChunk(&b, "IDAT", data)
	writeChunk(&b, "IEND", nil)
	return b.Bytes()
}

func writeChunk(b *bytes.Buffer, typ string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	b.Write(n[:])
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	b.WriteString(typ)
	b.Write(data)
	binary.BigEndian.PutUint32(n[:], crc.Sum32())
	b.Write(n[:])
}

// SharedLibrary returns the folder of a generated library of n skills
// (seed 1) under the system's temporary directory, generating it on first
// use, so that the Go benchmarks of several packages measure the same
// tree. It is generated beside its final name and renamed into place, so an
// interrupted run never leaves a partial library to be reused.
func SharedLibrary(n int) (string, error) {
	dir := filepath.Join(os.TempDir(), "skills-mcp-bench", "lib-"+strconv.Itoa(n))
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".lib-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // gone after the rename; removes a failed attempt
	if _, err := Generate(filepath.Join(tmp, "lib"), GenOptions{Skills: n, Seed: 1}); err != nil {
		return "", err
	}
	if err := os.Rename(filepath.Join(tmp, "lib"), dir); err != nil {
		if _, serr := os.Stat(dir); serr == nil {
			return dir, nil // another process won the race
		}
		return "", err
	}
	return dir, nil
}

// SharedFiles returns the contents of up to max files named name (a path
// relative to a skill folder, such as "SKILL.md" or "references/guide.md")
// from SharedLibrary(n), in walk order: samples for benchmarks of the
// per-file work.
func SharedFiles(n int, name string, max int) ([][]byte, error) {
	dir, err := SharedLibrary(n)
	if err != nil {
		return nil, err
	}
	var files [][]byte
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(files) == max || d.IsDir() || !strings.HasSuffix(filepath.ToSlash(p), "/"+name) {
			return err
		}
		data, err := os.ReadFile(p)
		files = append(files, data)
		return err
	})
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("bench: no %s in %s", name, dir)
	}
	return files, err
}
