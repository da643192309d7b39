package lint

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The corpus in testdata/lint: skills written to be malicious (with benign
// payloads: they write /tmp/skills-mcp-lint-canary or print a canary) and
// clean skills that use the same vocabulary legitimately.
const corpus = "../../testdata/lint"

// designated names, for each rule, the corpus file (skill/path) that must
// trigger it at the rule's severity. Rules checked outside File (limits,
// archives, symlinks, zip paths) use generated inputs, marked "generated":
// the corpus commits no symlink, archive or 513-file skill.
var designated = map[string]string{
	RulePipeToShell:         "curl-installer/scripts/install.sh",
	RuleRemoteExec:          "ps-bootstrap/scripts/bootstrap.ps1",
	RuleEvalDecoded:         "decoded-payload/scripts/run.py",
	RuleBase64Blob:          "decoded-payload/scripts/blob.py",
	RuleDestructiveRm:       "cleanup-helper/scripts/cleanup.sh",
	RuleWorldWritable:       "cleanup-helper/scripts/perms.sh",
	RuleSensitivePath:       "credential-harvest/scripts/collect.py",
	RuleCredentialLiteral:   "leaked-keys/references/config.md",
	RuleEnvExfil:            "credential-harvest/scripts/exfil.sh",
	RuleReverseShell:        "remote-debug/scripts/debug.sh",
	RulePromptInjection:     "prompt-override/SKILL.md",
	RuleHiddenComment:       "prompt-override/SKILL.md",
	RuleInvisibleChar:       "hidden-text/references/notes.md",
	RuleUnicodeTag:          "hidden-text/references/notes.md",
	RuleBidiControl:         "hidden-text/scripts/check.py",
	RuleFrontmatterHook:     "auto-hooks/SKILL.md",
	RuleInlineExec:          "auto-hooks/SKILL.md",
	RuleInstallHook:         "npm-postinstall/package.json",
	RuleTestAutoload:        "npm-postinstall/tests/conftest.py",
	RuleIgnoreWithoutReason: "careless-ignore/scripts/fetch.sh",
	RuleSkillFrontmatter:    "broken-frontmatter/SKILL.md",
	RuleSkillName:           "name-mismatch/SKILL.md",
	RuleSymlinkEscape:       "generated",
	RuleSkillLimits:         "generated",
	RuleSkillArchive:        "generated",
	RuleZipPath:             "generated",
	RuleZipRefused:          "generated",
	RuleExecutableBinary:    "generated",
	RuleMacroDocument:       "generated",
}

// alsoFire are further corpus files each rule must fire on: the file kinds
// and forms the peer linter missed.
var alsoFire = map[string][]string{
	RulePipeToShell: {
		"curl-installer/SKILL.md", "curl-installer/scripts/setup", "curl-installer/Makefile",
		"curl-installer/scripts/canary.fish", "curl-installer/scripts/install.ps1", "careless-ignore/scripts/fetch.sh",
	},
	RuleEvalDecoded:   {"decoded-payload/scripts/run.sh"},
	RuleEnvExfil:      {"credential-harvest/scripts/exfil.py", "credential-harvest/scripts/exfil.js"},
	RuleInstallHook:   {"npm-postinstall/setup.py"},
	RuleTestAutoload:  {"npm-postinstall/pytest.ini"},
	RuleDestructiveRm: {"cleanup-helper/scripts/cleanup.sh"},
}

// lintTree lints every file below root as the CLI does: File on each file
// (path relative to its skill) and SkillMD on each skill's SKILL.md. It
// returns the findings by "skill/path".
func lintTree(t *testing.T, root string) map[string][]Finding {
	t.Helper()
	out := map[string][]Finding{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		skillName, inSkill, _ := strings.Cut(rel, "/")
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fs := File(inSkill, data)
		if inSkill == "SKILL.md" {
			fs = append(fs, SkillMD(skillName, data)...)
		}
		out[rel] = fs
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fires reports whether fs has an unsuppressed finding of rule at the
// rule's own severity.
func fires(fs []Finding, rule string) bool {
	r, _ := Lookup(rule)
	return slices.ContainsFunc(fs, func(f Finding) bool {
		return f.Rule == rule && !f.Suppressed && f.Severity == r.Severity
	})
}

// generated returns the findings of the rules no committed file can
// trigger.
func generated(t *testing.T, rule string) []Finding {
	switch rule {
	case RuleSymlinkEscape:
		dir := t.TempDir()
		link := filepath.Join(dir, "key")
		if err := os.Symlink("../../.ssh/id_rsa", link); err != nil {
			t.Skipf("cannot create symlinks here: %v", err)
		}
		target, err := os.Readlink(link)
		if err != nil {
			t.Fatal(err)
		}
		if f := Symlink("references/key", target); f != nil {
			return []Finding{*f}
		}
	case RuleSkillLimits:
		return Limits(MaxSkillFiles+1, 1)
	case RuleSkillArchive:
		if f := Archive("assets/notes.dat", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0}); f != nil {
			return []Finding{*f}
		}
	case RuleZipPath:
		if f := ArchivePath("../../.bashrc"); f != nil {
			return []Finding{*f}
		}
	case RuleZipRefused:
		return []Finding{RefusedZip("demo/key", "library: link entry", false)}
	case RuleExecutableBinary:
		return File("bin/tool", []byte("\x7fELF\x02\x01\x01\x00\x00\x00"))
	case RuleMacroDocument:
		return File("assets/report.xlsm", []byte("PK\x03\x04"))
	}
	return nil
}

// TestCorpusRecall checks that every rule fires on its designated malicious
// file (100% recall per rule), and on the extra forms in alsoFire.
func TestCorpusRecall(t *testing.T) {
	got := lintTree(t, path.Join(corpus, "malicious"))
	for _, r := range Rules() {
		file, ok := designated[r.ID]
		if !ok {
			t.Errorf("rule %s has no designated corpus file", r.ID)
			continue
		}
		var fs []Finding
		if file == "generated" {
			fs = generated(t, r.ID)
		} else if fs, ok = got[file]; !ok {
			t.Errorf("rule %s: designated file %s is not in the corpus", r.ID, file)
			continue
		}
		if !fires(fs, r.ID) {
			t.Errorf("rule %s does not fire on %s: %v", r.ID, file, brief(fs))
		}
		for _, f := range alsoFire[r.ID] {
			if !fires(got[f], r.ID) {
				t.Errorf("rule %s does not fire on %s: %v", r.ID, f, brief(got[f]))
			}
		}
	}
	// Every malicious skill is flagged at warning or above.
	flagged := map[string]bool{}
	skills := map[string]bool{}
	for file, fs := range got {
		skill, _, _ := strings.Cut(file, "/")
		skills[skill] = true
		for _, f := range fs {
			if f.Severity >= Warning && !f.Suppressed {
				flagged[skill] = true
			}
		}
	}
	for s := range skills {
		if !flagged[s] {
			t.Errorf("malicious skill %s has no finding at warning or above", s)
		}
	}
}

// TestCorpusPrecision checks that the clean skills get no finding at
// warning or above, per rule, and logs the Info mentions they get.
func TestCorpusPrecision(t *testing.T) {
	got := lintTree(t, path.Join(corpus, "clean"))
	if len(got) == 0 {
		t.Fatal("empty clean corpus")
	}
	info := map[string]int{}
	for file, fs := range got {
		for _, f := range fs {
			if f.Severity >= Warning {
				t.Errorf("clean %s:%d: %s %s: %s [%s]", file, f.Line, f.Severity, f.Rule, f.Message, f.Excerpt)
			} else {
				info[f.Rule]++
			}
		}
	}
	t.Logf("info-level mentions on the clean corpus: %v", info)
}

// TestCorpusTable logs recall and precision per rule over both corpora, for
// the report (go test -run CorpusTable -v).
func TestCorpusTable(t *testing.T) {
	bad := lintTree(t, path.Join(corpus, "malicious"))
	good := lintTree(t, path.Join(corpus, "clean"))
	var b strings.Builder
	fmt.Fprintf(&b, "%-28s %-8s %9s %9s %13s\n", "rule", "severity", "mal files", "findings", "clean ≥warn")
	for _, r := range Rules() {
		files, n := 0, 0
		for _, fs := range bad {
			hit := false
			for _, f := range fs {
				if f.Rule == r.ID && !f.Suppressed {
					n++
					hit = true
				}
			}
			if hit {
				files++
			}
		}
		if designated[r.ID] == "generated" {
			files, n = 1, len(generated(t, r.ID))
		}
		fp := 0
		for _, fs := range good {
			for _, f := range fs {
				if f.Rule == r.ID && f.Severity >= Warning {
					fp++
				}
			}
		}
		fmt.Fprintf(&b, "%-28s %-8s %9d %9d %13d\n", r.ID, r.Severity, files, n, fp)
	}
	t.Log("\n" + b.String())
}
