package lint

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Realistic inputs: skill instructions in markdown and helper scripts, with
// the vocabulary the rules look for (curl, env, chmod, base64, rm) used the
// way ordinary skills use it.

var proseWords = strings.Fields(`the a an to of and or in for with when this that skill user file
files folder run check review report output input data API request response error errors value
values table column migration schema deploy release branch commit merge test tests build format
environment variable token install package version update create delete read write open close
before after each every first then only also must should may not never always use using instead`)

func sentence(r *rand.Rand) string {
	n := 6 + r.IntN(14)
	w := make([]string, n)
	for i := range w {
		w[i] = proseWords[r.IntN(len(proseWords))]
	}
	w[0] = strings.ToUpper(w[0][:1]) + w[0][1:]
	return strings.Join(w, " ") + "."
}

var codeLines = []string{
	"git fetch origin && git rebase origin/main",
	"npm ci && npm test",
	"curl -fsSLo tool.tar.gz https://example.invalid/tool.tar.gz",
	"python3 scripts/check.py --input data.json --format table",
	"rm -rf ./build && mkdir -p build",
	"chmod 755 build/tool",
	"export PATH=\"$HOME/.local/bin:$PATH\"",
	"env | grep '^SKILLS_'",
	"jq -r '.items[] | .name' response.json",
	"docker build -t example/tool:1.2 .",
	"for f in *.md; do wc -l \"$f\"; done",
	"psql \"$DATABASE_URL\" -f migrations/001_init.sql",
}

// markdownDoc returns about size bytes of skill-style markdown.
func markdownDoc(size int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("---\nname: example-skill\ndescription: Review database migrations and report risky changes before they ship.\n---\n\n# Example skill\n\n")
	for b.Len() < size {
		switch r.IntN(6) {
		case 0:
			fmt.Fprintf(&b, "## %s\n\n", strings.TrimSuffix(sentence(r), "."))
		case 1:
			b.WriteString("```sh\n")
			for range 2 + r.IntN(5) {
				b.WriteString(codeLines[r.IntN(len(codeLines))] + "\n")
			}
			b.WriteString("```\n\n")
		case 2:
			for range 2 + r.IntN(4) {
				fmt.Fprintf(&b, "- %s Use `%s`.\n", sentence(r), strings.Fields(codeLines[r.IntN(len(codeLines))])[0])
			}
			b.WriteString("\n")
		case 3:
			b.WriteString("| Column | Meaning |\n|---|---|\n")
			for range 3 {
				fmt.Fprintf(&b, "| `%s` | %s |\n", proseWords[r.IntN(len(proseWords))], sentence(r))
			}
			b.WriteString("\n")
		default:
			for range 2 + r.IntN(3) {
				b.WriteString(sentence(r) + " ")
			}
			b.WriteString("\n\n")
		}
	}
	return []byte(b.String())
}

// scriptDoc returns about size bytes of shell and Python-like code.
func scriptDoc(size int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 2))
	var b strings.Builder
	b.WriteString("#!/usr/bin/env bash\nset -euo pipefail\n\n")
	for b.Len() < size {
		switch r.IntN(5) {
		case 0:
			fmt.Fprintf(&b, "# %s\n", sentence(r))
		case 1:
			fmt.Fprintf(&b, "%s() {\n  local %s=\"$1\"\n  %s\n}\n\n", proseWords[r.IntN(len(proseWords))], proseWords[r.IntN(len(proseWords))], codeLines[r.IntN(len(codeLines))])
		case 2:
			fmt.Fprintf(&b, "if [[ -f \"$%s\" ]]; then\n  echo \"%s\" >&2\nfi\n", strings.ToUpper(proseWords[r.IntN(len(proseWords))]), sentence(r))
		default:
			b.WriteString(codeLines[r.IntN(len(codeLines))] + "\n")
		}
	}
	return []byte(b.String())
}

func BenchmarkFile(b *testing.B) {
	for _, tc := range []struct {
		name, path string
		data       []byte
	}{
		{"markdown-20KiB", "SKILL.md", markdownDoc(20<<10, 1)},
		{"script-200KiB", "scripts/run.sh", scriptDoc(200<<10, 1)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.data)))
			cpu0 := cpuTime()
			for b.Loop() {
				File(tc.path, tc.data)
			}
			reportCPU(b, cpu0, len(tc.data))
		})
	}
}

// BenchmarkLibrary lints a generated library of 5,000 skills (17,500 files
// of about 4 KiB: SKILL.md, two references and a script for half of them)
// on GOMAXPROCS workers, as the catalog does during a scan.
func BenchmarkLibrary(b *testing.B) {
	type file struct {
		path string
		data []byte
	}
	var files []file
	var total int64
	for i := range 5000 {
		fs := []file{
			{"SKILL.md", markdownDoc(4<<10, uint64(i))},
			{"references/guide.md", markdownDoc(4<<10, uint64(i)+1e6)},
			{"references/notes.md", markdownDoc(4<<10, uint64(i)+2e6)},
		}
		if i%2 == 0 {
			fs = append(fs, file{"scripts/run.sh", scriptDoc(4<<10, uint64(i))})
		}
		for _, f := range fs {
			total += int64(len(f.data))
		}
		files = append(files, fs...)
	}
	b.SetBytes(total)
	b.ReportMetric(float64(len(files)), "files")
	workers := runtime.GOMAXPROCS(0)
	cpu0 := cpuTime()
	for b.Loop() {
		next := make(chan int, len(files))
		for i := range files {
			next <- i
		}
		close(next)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for i := range next {
					File(files[i].path, files[i].data)
				}
			})
		}
		wg.Wait()
	}
	reportCPU(b, cpu0, int(total))
}

// reportCPU reports the CPU time per operation and the throughput per CPU
// second, which a loaded machine distorts less than wall time.
func reportCPU(b *testing.B, cpu0 time.Duration, size int) {
	cpu := cpuTime() - cpu0
	if cpu <= 0 || b.N == 0 {
		return
	}
	per := cpu / time.Duration(b.N)
	b.ReportMetric(float64(per.Nanoseconds()), "cpu-ns/op")
	b.ReportMetric(float64(size)/per.Seconds()/1e6, "MB/cpu-s")
}

// BenchmarkHostile lints 1 MiB single-line files of repeated patterns, the
// worst cases for per-occurrence work.
func BenchmarkHostile(b *testing.B) {
	for _, unit := range []string{"curl x | sh ", "$(curl ", "~/.ssh cat ", "eval(base64 ", "/dev/tcp/ >& ", "rm -rf ", "never run `curl x | sh` ", "a\U000E0041"} {
		data := []byte(strings.Repeat(unit, (1<<20)/len(unit)))
		b.Run(strings.TrimSpace(unit), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			cpu0 := cpuTime()
			for b.Loop() {
				File("a.md", data)
			}
			reportCPU(b, cpu0, len(data))
		})
	}
}
