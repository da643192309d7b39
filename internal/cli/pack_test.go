package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/cmdline"
)

const fixtureVault = "../../testdata/vault"

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	noEnv := func(string) (string, bool) { return "", false }
	code := run(context.Background(), args, streams{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, env: noEnv})
	return code, stdout.String(), stderr.String()
}

// served scans what serve would serve for args and returns a comparable
// view of it: every skill's entry and every vault's playbooks and chains.
func served(t *testing.T, args ...string) string {
	t.Helper()
	noEnv := func(string) (string, bool) { return "", false }
	c := &serveCommand{streams: streams{stdout: io.Discard, stderr: io.Discard, env: noEnv}}
	cfg, err := c.parseArgs(append(args, "--cache-dir", t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	libs, err := openLibraries(context.Background(), cfg, noEnv, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer libs.Close()
	ls, opts := libs.Source()
	snap, err := catalog.Scan(context.Background(), ls, 1, opts)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, sk := range snap.All() {
		b.Write(sk.Entry())
		b.WriteByte('\n')
	}
	for _, v := range snap.Vaults() {
		for _, pb := range v.Playbooks {
			steps, _ := json.Marshal(pb.Steps)
			b.WriteString("#PLAYBOOK " + pb.Name + "\n" + pb.Note.Text + "\n" + string(steps) + "\n")
			for _, a := range pb.Note.Attachments {
				b.WriteString(a.Name + " " + a.Digest + "\n")
			}
		}
		for _, c := range v.Chains {
			data, _ := json.Marshal(c)
			b.WriteString("#CHAIN " + c.ID + " " + string(data) + "\n")
		}
		b.WriteString("runner " + v.Runner + "\n")
	}
	return b.String()
}

func TestPackCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "bob.zip")
	code, stdout, stderr := runCmd(t, "pack", "--vault", fixtureVault, "--out", out, "--namespace", "bob")
	if code != cmdline.ExitOK {
		t.Fatalf("pack: %d\n%s%s", code, stdout, stderr)
	}
	side, err := os.ReadFile(out + ".sha256")
	if err != nil {
		t.Fatal(err)
	}
	sum := strings.Fields(string(side))[0]
	if !strings.Contains(stdout, "sha256 "+sum) || !strings.Contains(stdout, "--lib 'bob="+out+"'") ||
		!strings.Contains(stdout, "#sha256="+sum+"'") {
		t.Errorf("pack output lacks the digest or the --lib lines:\n%s", stdout)
	}
	if !strings.Contains(stderr, "left out: 00-CORE/Playbooks/Draft idea.md: status draft") {
		t.Errorf("what was left out is not said:\n%s", stderr)
	}

	// Serving the pack serves what serving the folder serves.
	folder, zipped := served(t, "--lib", "bob="+fixtureVault), served(t, "--lib", "bob="+out)
	if folder != zipped {
		t.Errorf("the pack serves something else than the folder:\nfolder:\n%s\npack:\n%s", folder, zipped)
	}
	if !strings.Contains(folder, "#PLAYBOOK CRO improvement loop") || !strings.Contains(folder, "#CHAIN lead-to-cash") {
		t.Errorf("the comparison saw no vault content:\n%s", folder)
	}

	// A dry run writes nothing and prints the same digest.
	dry := filepath.Join(dir, "dry.zip")
	code, stdout, _ = runCmd(t, "pack", "--vault", fixtureVault, "--out", dry, "--dry-run")
	if code != cmdline.ExitOK || !strings.Contains(stdout, "sha256 "+sum) {
		t.Errorf("dry run: %d %s", code, stdout)
	}
	if _, err := os.Stat(dry); !os.IsNotExist(err) {
		t.Errorf("dry run wrote %s", dry)
	}
}

func TestPackUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pack"}, "--vault is required"},
		{[]string{"pack", "--vault", "../../testdata/library"}, "not a vault"},
		{[]string{"pack", "--vault", fixtureVault, "--out", "x.tar"}, "must end in .zip"},
		{[]string{"pack", "--vault", fixtureVault, "--namespace", "a b"}, "--namespace"},
		{[]string{"pack", "--vault", fixtureVault, "extra"}, "unexpected argument"},
	} {
		code, _, stderr := runCmd(t, tc.args...)
		if code != cmdline.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q", tc.args, code, stderr)
		}
	}
}

func TestVaultFlags(t *testing.T) {
	all := served(t, "--lib", "bob="+fixtureVault)
	if !strings.Contains(all, "#PLAYBOOK Monthly Close") || !strings.Contains(all, "#CHAIN record-to-insight") {
		t.Fatalf("vault content not served:\n%s", all)
	}
	// The skills folder alone is a skills library: no playbooks, no chains.
	skillsOnly := served(t, "--lib", "bob="+filepath.Join(fixtureVault, "00-CORE/Agents/skills"))
	if strings.Contains(skillsOnly, "#PLAYBOOK ") || strings.Contains(skillsOnly, "#CHAIN ") {
		t.Errorf("a skills folder served vault content:\n%s", skillsOnly)
	}
	// --vault names the vault explicitly.
	explicit := served(t, "--lib", "bob="+filepath.Join(fixtureVault, "00-CORE/Agents/skills"), "--vault", "bob="+fixtureVault)
	if explicit != all {
		t.Errorf("--vault serves something else than the vault root:\n%s\nvs\n%s", explicit, all)
	}
	off := served(t, "--lib", "bob="+fixtureVault, "--no-playbooks", "--no-value-chains")
	if strings.Contains(off, "#PLAYBOOK ") || strings.Contains(off, "#CHAIN ") {
		t.Errorf("--no-playbooks --no-value-chains still serves vault content:\n%s", off)
	}
	// Skills are served from the vault's skills folder either way.
	if !strings.Contains(off, "skill://bob/ab-test-setup/SKILL.md") {
		t.Errorf("skills not served with the extras off:\n%s", off)
	}

	// A value-chains.md deeper down marks a vault too; the first scan finds it.
	deep := t.TempDir()
	writeTree(t, deep, map[string]string{
		"solo/SKILL.md":                 "---\nname: solo\ndescription: Solo.\nvalue-chains: [procure-to-pay]\nchain-stage: pay\n---\nBody\n",
		"docs/process/value-chains.md":  "## procure-to-pay\n**SME Label:** Procure to pay\n**Stages:** Order → Pay\n",
		"docs/process/other/readme.txt": "x",
	})
	if got := served(t, "--lib", "d="+deep); !strings.Contains(got, "#CHAIN procure-to-pay") {
		t.Errorf("a vault found by its deep chain file was not served:\n%s", got)
	}

	// A config file turns the extras off for one library with "vault": false.
	cfgFile := filepath.Join(t.TempDir(), "skills.json")
	abs, _ := filepath.Abs(fixtureVault)
	os.WriteFile(cfgFile, []byte(`{"libraries":[{"namespace":"bob","root":`+quote(abs)+`,"vault":false}]}`), 0o644)
	noVault := served(t, "--config", cfgFile)
	if strings.Contains(noVault, "#PLAYBOOK ") || !strings.Contains(noVault, "skill://bob/cro/SKILL.md") {
		t.Errorf(`"vault": false:\n%s`, noVault)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lib", "a=" + fixtureVault, "--vault", "b=" + fixtureVault}, `no library "b"`},
		{[]string{"--lib", "a=" + fixtureVault, "--vault", "a=" + fixtureVault, "--vault", "a=" + fixtureVault}, "given twice"},
		{[]string{"--lib", "a=" + fixtureVault, "--vault", "nonsense"}, `--vault "nonsense": want NS=DIR`},
	} {
		c := &serveCommand{streams: streams{stdout: io.Discard, stderr: io.Discard, env: func(string) (string, bool) { return "", false }}}
		if _, err := c.parseArgs(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v", tc.args, err)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
