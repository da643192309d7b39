package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/pack"
)

// packCommand builds a vault's release zip.
type packCommand struct {
	streams
	opts                  *cmdline.Table
	dir, out, wrapper, ns string
	allStatuses, dryRun   bool
}

const packUsage = `Usage: skills-mcp pack --vault DIR [--out FILE.zip] [flags]

Builds the release zip of a vault's public subset: the skills of its skills
folder that pass validation, the active playbooks of 00-CORE/Playbooks with
the files they embed, and its value-chain file, with a pack.json manifest and
a FILE.zip.sha256 sidecar. Private playbook folders are never read and
symlinks never followed. Packing the same vault twice gives the same bytes,
and serving the zip serves what serving the folder serves.

It prints the --lib line that serves the pack, pinned by its digest.
`

var nonNamespace = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_.-]+`) })

// table is pack's table of flags.
func (c *packCommand) table() *cmdline.Table {
	if c.opts != nil {
		return c.opts
	}
	o := cmdline.NewTable("pack")
	c.opts = o
	o.String(&c.dir, "vault", "", "", "the vault root `DIR` to pack")
	o.String(&c.out, "out", "", "", "write the zip to `FILE` (default: the vault folder's name + .zip, here)")
	o.String(&c.wrapper, "wrapper", "", "", "put every entry in the folder `NAME` inside the zip")
	o.Bool(&c.allStatuses, "all-statuses", "", "pack playbooks of every status, not only active ones")
	o.Bool(&c.dryRun, "dry-run", "", "print what would be packed and its digest; write nothing")
	o.String(&c.ns, "namespace", "", "", "namespace of the printed --lib line (default: from the vault folder's name)")
	return o
}

// Run parses args and packs.
func (c *packCommand) Run(ctx context.Context, args []string) error {
	pos, err := parseFlags(c.table(), args, c.env, "")
	if err != nil {
		return err
	}
	return c.exec(ctx, pos)
}

// exec implements subcommand.
func (c *packCommand) exec(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return cmdline.Usagef("", "unexpected argument %q", args[0])
	}
	dir, out, wrapper, allStatuses, dryRun, ns := &c.dir, &c.out, &c.wrapper, &c.allStatuses, &c.dryRun, &c.ns
	if *dir == "" {
		return cmdline.Usagef("", "--vault is required: the vault root to pack")
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return cmdline.Usagef("", "--vault: %v", err)
	}
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		return cmdline.Usagef("", "--vault %s: no such folder", *dir)
	}
	base := filepath.Base(abs)
	if *out == "" {
		*out = base + ".zip"
	}
	if !strings.EqualFold(filepath.Ext(*out), ".zip") {
		return cmdline.Usagef("", "--out %q must end in .zip: the server recognises archive libraries by it", *out)
	}
	if *ns == "" {
		*ns = strings.Trim(nonNamespace().ReplaceAllString(base, "-"), "-.")
	}
	if !namespacePattern().MatchString(*ns) {
		return cmdline.Usagef("", "--namespace %q must match %s", *ns, namespacePattern())
	}

	p, err := pack.Plan(ctx, abs, pack.Options{Wrapper: *wrapper, AllStatuses: *allStatuses})
	if err != nil {
		if errors.Is(err, pack.ErrNotVault) {
			return cmdline.Usagef("give --vault the vault root (the folder that holds 00-CORE)", "%s: %v", *dir, err)
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
