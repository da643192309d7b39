// Package hubcmd is the skills-hub command line. [Main] runs a command
// tree built from one table of sub-commands (tree.go): each declares its
// flags, their SKILLS_HUB_* twins and its help in a [cmdline.Table], and
// runs over a session that opens the hub at most once and closes it after
// the command. Each exported report function runs one operation of an
// open hub and writes its report, as text for a person or as JSON, to the
// writers it is given.
package hubcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/atomicfile"
	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// WriteJSON writes v to w as indented JSON, without HTML escaping.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Installed reports an install: the version, whether it is new, and a
// summary of its inspection.
func Installed(w io.Writer, inst *hub.Installed, asJSON bool) error {
	if asJSON {
		return WriteJSON(w, inst)
	}
	v := inst.Version
	if inst.Created {
		fmt.Fprintf(w, "installed %s (%d files, %s) from %s\n", v.ID, v.FileCount, Bytes(v.Size), OriginText(v.Origin))
	} else {
		fmt.Fprintf(w, "already installed: %s (the same tree, installed %s from %s)\n", v.ID, v.CreatedAt.Local().Format(time.DateTime), OriginText(v.Origin))
	}
	in := inst.Inspection
	fmt.Fprintf(w, "inspection: %s, %s, %s, %s\n", Count(len(in.Findings), "finding"), Count(len(in.Scripts), "script"),
		Count(len(in.Warnings), "validator warning"), in.Requirements.Summary)
	fmt.Fprintf(w, "%s\nsee it all: skills-hub inspect %s\n", pkgtree.NotProofOfSafety, v.ID)
	return nil
}

// OriginText says where a version came from, in one line.
func OriginText(o pkgtree.Origin) string {
	switch o.Kind {
	case pkgtree.OriginZip:
		s := o.FileName
		if o.Path != "" {
			s += " (" + o.Path + ")"
		}
		return s
	case pkgtree.OriginGit, pkgtree.OriginCatalog:
		s := o.Repository
		if o.Path != "" {
			s += " " + o.Path
		}
		if o.Ref != "" {
			s += " " + o.Ref
		}
		if o.Commit != "" {
			s += " at " + shortCommit(o.Commit)
		}
		if o.CatalogItem != "" {
			s = "catalog item " + o.CatalogItem + " (" + s + ")"
		}
		return s
	}
	return o.Kind
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// Count is n and word, plural unless n is 1: "1 file", "3 files".
func Count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Bytes is a size for a person.
func Bytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// Progress returns the progress callback of a long install, writing to w:
// a line when a stage starts, then at most one a second.
func Progress(w io.Writer) func(pkgtree.Progress) {
	var stage string
	var last time.Time
	return func(p pkgtree.Progress) {
		now := time.Now()
		if p.Stage == stage && now.Sub(last) < time.Second {
			return
		}
		stage, last = p.Stage, now
		var b strings.Builder
		fmt.Fprintf(&b, "hub: %s", p.Stage)
		switch {
		case p.Files > 0 && p.TotalFiles > 0:
			fmt.Fprintf(&b, " %d/%d files", p.Files, p.TotalFiles)
		case p.Files > 0:
			fmt.Fprintf(&b, " %d files", p.Files)
		case p.TotalFiles > 0:
			fmt.Fprintf(&b, " %d files", p.TotalFiles)
		}
		switch {
		case p.Bytes > 0 && p.TotalBytes > 0:
			fmt.Fprintf(&b, ", %s of %s", Bytes(p.Bytes), Bytes(p.TotalBytes))
		case p.Bytes > 0:
			fmt.Fprintf(&b, ", %s", Bytes(p.Bytes))
		case p.TotalBytes > 0:
			fmt.Fprintf(&b, ", %s", Bytes(p.TotalBytes))
		}
		fmt.Fprintln(w, b.String())
	}
}

// List writes the installed packages: a table, or JSON.
func List(ctx context.Context, h *hub.Hub, w io.Writer, asJSON bool) error {
	pkgs, err := h.List(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		if pkgs == nil {
			pkgs = []hub.Package{}
		}
		return WriteJSON(w, pkgs)
	}
	if len(pkgs) == 0 {
		fmt.Fprintln(w, "no packages installed: install one with skills-hub install")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tVERSIONS\tLATEST\tINSTALLED\tAPPROVED")
	for _, p := range pkgs {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", p.Name, p.Versions, p.Latest.ID, p.Latest.CreatedAt.Local().Format(time.DateTime), approvedText(p.Latest))
	}
	return tw.Flush()
}

func approvedText(v hub.Version) string {
	if !v.Approved {
		return "no"
	}
	return "by " + v.Labels.ApprovedBy
}

// Versions writes a package's versions: a table, or JSON.
func Versions(ctx context.Context, h *hub.Hub, w io.Writer, pkg string, asJSON bool) error {
	vs, err := h.Versions(ctx, pkg)
	if err != nil {
		return err
	}
	if asJSON {
		return WriteJSON(w, vs)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tINSTALLED\tFILES\tSIZE\tAPPROVED\tORIGIN")
	for _, v := range vs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", v.ID, v.CreatedAt.Local().Format(time.DateTime), v.FileCount, Bytes(v.Size), approvedText(v), OriginText(v.Origin))
	}
	return tw.Flush()
}

// Inspect writes a version, its files and its inspection.
func Inspect(ctx context.Context, h *hub.Hub, w io.Writer, ref string, asJSON bool) error {
	in, err := h.Inspect(ctx, ref)
	if err != nil {
		return err
	}
	if asJSON {
		return WriteJSON(w, in)
	}
	v := in.Version
	fmt.Fprintf(w, "%s\n", v.ID)
	fmt.Fprintf(w, "  tree digest  %s\n", v.TreeDigest)
	if v.Description != "" {
		fmt.Fprintf(w, "  description  %s\n", v.Description)
	}
	fmt.Fprintf(w, "  origin       %s\n", OriginText(v.Origin))
	if v.Origin.FileSHA256 != "" {
		fmt.Fprintf(w, "  upload       sha256 %s\n", v.Origin.FileSHA256)
	}
	fmt.Fprintf(w, "  installed    %s\n", v.CreatedAt.Local().Format(time.DateTime))
	if v.Approved {
		fmt.Fprintf(w, "  approved     by %s at %s\n", v.Labels.ApprovedBy, v.Labels.ApprovedAt.Local().Format(time.DateTime))
	} else {
		fmt.Fprintf(w, "  approved     no\n")
	}
	if v.Labels.Notes != "" {
		fmt.Fprintf(w, "  notes        %s\n", v.Labels.Notes)
	}
	if len(in.Bindings) > 0 {
		fmt.Fprintf(w, "  bound to     %s\n", strings.Join(in.Bindings, ", "))
	}
	fmt.Fprintf(w, "  files        %d, %s\n", v.FileCount, Bytes(v.Size))
	for _, f := range in.Files {
		fmt.Fprintf(w, "    %s %8s  %s\n", f.Mode, Bytes(f.Size), f.Path)
	}
	fmt.Fprintln(w)
	return in.Inspection.WriteText(w)
}

// Approve records by's approval of the version ref, or with revoke (and no
// by) withdraws it, and reports the version.
func Approve(ctx context.Context, h *hub.Hub, w io.Writer, ref, by string, revoke, asJSON bool) error {
	var v hub.Version
	var err error
	if revoke {
		v, err = h.Unapprove(ctx, ref)
	} else {
		v, err = h.Approve(ctx, ref, by)
	}
	if err != nil {
		return err
	}
	if asJSON {
		return WriteJSON(w, v)
	}
	if revoke {
		fmt.Fprintf(w, "%s is no longer approved\n", v.ID)
	} else {
		fmt.Fprintf(w, "%s approved by %s at %s\n", v.ID, v.Labels.ApprovedBy, v.Labels.ApprovedAt.Local().Format(time.DateTime))
	}
	return nil
}

// Notes sets the notes of the version ref and reports it.
func Notes(ctx context.Context, h *hub.Hub, w io.Writer, ref, text string, asJSON bool) error {
	v, err := h.SetNotes(ctx, ref, text)
	if err != nil {
		return err
	}
	if asJSON {
		return WriteJSON(w, v)
	}
	fmt.Fprintf(w, "notes of %s set\n", v.ID)
	return nil
}

// Uninstall removes the version ref and reports it.
func Uninstall(ctx context.Context, h *hub.Hub, w io.Writer, ref string, asJSON bool) error {
	v, err := h.Uninstall(ctx, ref)
	if err != nil {
		return err
	}
	if asJSON {
		return WriteJSON(w, v)
	}
	fmt.Fprintf(w, "uninstalled %s\n", v.ID)
	return nil
}

// Search writes the catalog items q finds: a table with a count, or JSON.
func Search(ctx context.Context, h *hub.Hub, w io.Writer, q index.Query, asJSON bool) error {
	hits, cur, err := h.SearchCatalog(ctx, q)
	if err != nil {
		return err
	}
	if asJSON {
		if hits == nil {
			hits = []hub.CatalogHit{}
		}
		return WriteJSON(w, hits)
	}
	if len(hits) == 0 {
		fmt.Fprintf(w, "no catalog item matches (the catalog has %d items, from %s)\n", cur.Len(), cur.Source())
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAUTHOR\tCATEGORY\tDESCRIPTION")
	for _, hit := range hits {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", hit.ID, cutLine(hit.Author, 24), cutLine(hit.Category, 20), cutLine(hit.Description, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d shown; the catalog has %d items, from %s\n", len(hits), cur.Len(), cur.Source())
	return nil
}

// cutLine is s on one line, cut to at most n characters.
func cutLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Refresh replaces the catalog with the document at url, saying on
// progress that it downloads and on w what it got.
func Refresh(ctx context.Context, h *hub.Hub, w, progress io.Writer, url string) error {
	fmt.Fprintf(progress, "hub: downloading the catalog\n")
	ix, err := h.RefreshCatalog(ctx, url)
	if err != nil {
		return catalogFailed(ix, err)
	}
	fmt.Fprintf(w, "catalog refreshed: %d items\n", ix.Len())
	return nil
}

// Import replaces the catalog with the document in the file name.
func Import(ctx context.Context, h *hub.Hub, w io.Writer, name string) error {
	ix, err := h.ImportCatalog(ctx, name)
	if err != nil {
		return catalogFailed(ix, err)
	}
	fmt.Fprintf(w, "catalog imported from %s: %d items\n", name, ix.Len())
	return nil
}

// catalogFailed says that a failed update left the catalog cur unchanged.
func catalogFailed(cur *index.Index, err error) error {
	if cur == nil {
		return err
	}
	return fmt.Errorf("%w\nthe catalog is unchanged: %d items, from %s", err, cur.Len(), cur.Source())
}

// Backup writes a backup of the hub's store db to the file out, whole or
// not at all, and reports what it holds.
func Backup(ctx context.Context, db *store.DB, w io.Writer, out string) error {
	var n int64
	err := atomicfile.Write(out, 0o600, true, func(f io.Writer) error {
		cw := &countingWriter{w: f}
		err := db.Backup(ctx, cw)
		n = cw.n
		return err
	})
	if err != nil {
		if errors.Is(err, store.ErrBackupUnsupported) {
			return err
		}
		return fmt.Errorf("backing up to %s: %w", out, err)
	}
	stats, err := db.Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "backed up %s, %s to %s (%s)\n", Count(stats.Packages, "package"), Count(stats.Versions, "version"), out, Bytes(n))
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Restored reports what the hub's store db, just restored from the backup
// in the file name into dir, holds.
func Restored(ctx context.Context, db *store.DB, w io.Writer, name, dir string) error {
	stats, err := db.Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "restored %s into %s: %s, %s\n", name, dir, Count(stats.Packages, "package"), Count(stats.Versions, "version"))
	return nil
}
