package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/skills-mcp/skills-mcp/internal/pack"
)

// packCommand builds a vault's release zip.
type packCommand struct {
	streams
}

const packUsage = `Usage: skills-mcp pack --vault DIR [--out FILE.zip] [flags]

Builds the release zip of a vault's public subset: the skills of its skills
folder that pass validation, the active playbooks of 00-CORE/Playbooks with
the files they embed, and its value-chain file, with a pack.json manifest and
a FILE.zip.sha256 sidecar. Private playbook folders are never read and
symlinks never followed. Packing the same vault twice gives the same bytes,
and serving the zip serves what serving the folder serves.

It prints the --lib line that serves the pack, pinned by its digest.

Flags:
`

var nonNamespace = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_.-]+`) })

// Run implements command.
func (c *packCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("pack", flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	dir := fs.String("vault", "", "the vault root `DIR` to pack")
	out := fs.String("out", "", "write the zip to `FILE` (default: the vault folder's name + .zip, here)")
	wrapper := fs.String("wrapper", "", "put every entry in the folder `NAME` inside the zip")
	allStatuses := fs.Bool("all-statuses", false, "pack playbooks of every status, not only active ones")
	dryRun := fs.Bool("dry-run", false, "print what would be packed and its digest; write nothing")
	ns := fs.String("namespace", "", "namespace of the printed --lib line (default: from the vault folder's name)")
	fs.Usage = func() {
		fmt.Fprint(c.stderr, packUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return &usageError{err: err, hint: "skills-mcp pack -h"}
	}
	if fs.NArg() > 0 {
		return usagef("skills-mcp pack -h", "unexpected argument %q", fs.Arg(0))
	}
	if *dir == "" {
		return usagef("skills-mcp pack --vault DIR", "--vault is required: the vault root to pack")
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return usagef("", "--vault: %v", err)
	}
	base := filepath.Base(abs)
	if *out == "" {
		*out = base + ".zip"
	}
	if !strings.EqualFold(filepath.Ext(*out), ".zip") {
		return usagef("", "--out %q must end in .zip: the server recognises archive libraries by it", *out)
	}
	if *ns == "" {
		*ns = strings.Trim(nonNamespace().ReplaceAllString(base, "-"), "-.")
	}
	if !namespacePattern().MatchString(*ns) {
		return usagef("", "--namespace %q must match %s", *ns, namespacePattern())
	}

	p, err := pack.Plan(ctx, abs, pack.Options{Wrapper: *wrapper, AllStatuses: *allStatuses})
	if err != nil {
		if errors.Is(err, pack.ErrNotVault) {
			return usagef("give --vault the vault root (the folder that holds 00-CORE)", "%s: %v", *dir, err)
		}
		return fmt.Errorf("packing %s: %w", *dir, err)
	}
	defer p.Close()
	m := p.Manifest
	fmt.Fprintf(c.stdout, "%d skills, %d playbooks, %d attachments", len(m.Skills), len(m.Playbooks), len(m.Attachments))
	if m.ValueChains != "" {
		fmt.Fprintf(c.stdout, ", value chains from %s", m.ValueChains)
	}
	fmt.Fprintf(c.stdout, ": %d files, %d bytes\n", m.Files, m.Bytes)
	for _, l := range m.Left {
		fmt.Fprintf(c.stderr, "left out: %s\n", l)
	}
	var res pack.Result
	if *dryRun {
		if res, err = p.Digest(); err != nil {
			return fmt.Errorf("packing %s: %w", *dir, err)
		}
		fmt.Fprintf(c.stdout, "dry run: %s would be %d bytes, sha256 %s\n", *out, res.Size, res.SHA256)
		return nil
	}
	if res, err = p.Write(*out); err != nil {
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	outAbs, _ := filepath.Abs(*out)
	fmt.Fprintf(c.stdout, "wrote %s (%d bytes) and %s.sha256\nsha256 %s\n", *out, res.Size, *out, res.SHA256)
	fmt.Fprintf(c.stdout, "serve it:       skills-mcp --lib %s\n", shellQuote(*ns+"="+outAbs))
	fmt.Fprintf(c.stdout, "serve it from a URL: skills-mcp --lib %s\n", shellQuote(*ns+"=https://HOST/PATH/"+filepath.Base(*out)+"#sha256="+res.SHA256))
	return nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
