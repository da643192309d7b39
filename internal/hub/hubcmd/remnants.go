package hubcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/atomicfile"
	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/jobs"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

const hubJobUsage = `Usage: skills-hub job settle JOB [--reason TEXT] [--force]

Ends a running or locked job by an administrator's decision: it becomes
stopped, its reason naming who settled it and why, so that it, its binding
and its project can be deleted again. The replicas settle on their own the
jobs of a replica whose lease in the database has lapsed (a crash, a pod
replaced); settle what cannot wait.

A job whose replica still holds its lease is refused: that replica runs it
and ends it. --force settles it anyway: if that replica still runs the job,
it kills its sandbox when it hears of the settlement, and its result is not
kept. The settlement is written to the audit log (actor cli).
`

func (c *command) job(ctx context.Context, g *hubGlobals, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(c.stdout, hubJobUsage)
		return nil
	}
	if args[0] != "settle" {
		return usagef("skills-hub job -h", "unknown job command %q (want settle)", args[0])
	}
	fs := c.flagSet("job settle", g, hubJobUsage)
	reason := fs.String("reason", "", "why, kept in the job's `TEXT`")
	force := fs.Bool("force", false, "settle even while the job's replica holds its lease")
	pos, err := c.parse(fs, args[1:], 1, 1, "a job id (j-…)")
	if err != nil {
		return err
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	j, err := h.db.SettleJob(ctx, pos[0], store.Settlement{By: CLIActor, Reason: *reason, Force: *force})
	result := store.AuditOK
	switch {
	case errors.Is(err, store.ErrLiveReplica):
		result = "replica_alive"
	case errors.Is(err, store.ErrNotFound):
		result = "not_found"
	case err != nil:
		result = "failed"
	}
	object := pos[0]
	if j.ProjectID != "" {
		object = j.ProjectID + "/" + j.ID
	}
	if _, aerr := h.db.AppendAudit(ctx, store.AuditEntry{Actor: CLIActor, Action: "job.settle", ObjectKind: "job", ObjectID: object, Result: result}); aerr != nil && err == nil {
		fmt.Fprintf(c.stderr, "warning: the audit log did not take the entry: %v\n", aerr)
	}
	if err != nil {
		if errors.Is(err, store.ErrLiveReplica) {
			return fmt.Errorf("%w\nTry: skills-hub job settle %s --force (only if that replica is gone)", err, pos[0])
		}
		return err
	}
	fmt.Fprintf(c.stdout, "job %s is %s: %s\n", j.ID, j.State, j.Reason)
	return nil
}

const hubRemnantsUsage = `Usage: skills-hub remnants (list|show|download|purge) [flags]

When a project is deleted, the files of its jobs are kept for an
operator's recovery, each job's under a remnant named by the job's id.

Commands:
  list [--json]                    list the remnants, oldest first
  show JOB [--json]                a remnant's record and files
  download JOB PATH [--out FILE]   write a remnant's file (its output of PATH,
                                   else its input) to FILE, or to stdout
  purge JOB...                     delete remnants and their files for good,
                                   giving their space back

Downloads and purges are written to the audit log (actor cli).
`

func (c *command) remnants(ctx context.Context, g *hubGlobals, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(c.stdout, hubRemnantsUsage)
		return nil
	}
	switch args[0] {
	case "list":
		return c.remnantsList(ctx, g, args[1:])
	case "show":
		return c.remnantShow(ctx, g, args[1:])
	case "download":
		return c.remnantDownload(ctx, g, args[1:])
	case "purge":
		return c.remnantPurge(ctx, g, args[1:])
	}
	return usagef("skills-hub remnants -h", "unknown remnants command %q", args[0])
}

func (c *command) remnantsList(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("remnants list", g, hubRemnantsUsage)
	asJSON := fs.Bool("json", false, "print the remnants as JSON")
	if _, err := c.parse(fs, args, 0, 0, ""); err != nil {
		return err
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	list, err := h.db.JobRemnants(ctx)
	if err != nil {
		return err
	}
	return Remnants(c.stdout, list, *asJSON)
}

// Remnants prints a list of job remnants.
func Remnants(w io.Writer, list []store.JobRemnant, asJSON bool) error {
	if asJSON {
		if list == nil {
			list = []store.JobRemnant{}
		}
		return WriteJSON(w, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(w, "no remnants: no deleted project left job files")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tPROJECT\tVERSION\tSTATE\tDELETED")
	for _, r := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.JobID, r.ProjectID, hub.VersionID(r.Package, r.TreeDigest), r.State, r.DeletedAt.Local().Format(time.DateTime))
	}
	return tw.Flush()
}

func (c *command) remnantShow(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("remnants show", g, hubRemnantsUsage)
	asJSON := fs.Bool("json", false, "print the remnant as JSON")
	pos, err := c.parse(fs, args, 1, 1, "a job id (see `hub remnants list`)")
	if err != nil {
		return err
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	r, err := jobs.ReadRemnant(ctx, h.db, pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		return WriteJSON(c.stdout, r)
	}
	fmt.Fprintf(c.stdout, "job %s of deleted project %s (%s), %s; deleted %s\n", r.JobID, r.ProjectID,
		hub.VersionID(r.Package, r.TreeDigest), r.State, r.DeletedAt.Local().Format(time.DateTime))
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tPATH\tSIZE\tSHA256")
	for _, f := range r.Files {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", f.Kind, f.Path, f.Size, f.SHA256)
	}
	return tw.Flush()
}

func (c *command) remnantDownload(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("remnants download", g, hubRemnantsUsage)
	out := fs.String("out", "", "write the file to `FILE` (made whole or not at all) instead of stdout")
	pos, err := c.parse(fs, args, 2, 2, "a job id and a file's path (see `hub remnants show JOB`)")
	if err != nil {
		return err
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	data, f, err := jobs.ReadRemnantFile(ctx, h.db, pos[0], pos[1])
	result := store.AuditOK
	if err != nil {
		result = "failed"
		if errors.Is(err, store.ErrNotFound) {
			result = "not_found"
		}
	}
	if _, aerr := h.db.AppendAudit(ctx, store.AuditEntry{Actor: CLIActor, Action: "remnant.download", ObjectKind: "job", ObjectID: auditObject(pos[0] + ":" + pos[1]), Result: result}); aerr != nil && err == nil {
		fmt.Fprintf(c.stderr, "warning: the audit log did not take the entry: %v\n", aerr)
	}
	if err != nil {
		return err
	}
	if *out == "" {
		_, err := c.stdout.Write(data)
		return err
	}
	if err := atomicfile.Write(*out, 0o644, false, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	fmt.Fprintf(c.stderr, "wrote %s (%s %s of job %s, %d bytes, sha256 %s)\n", filepath.Clean(*out), f.Kind, f.Path, pos[0], f.Size, f.SHA256)
	return nil
}

func (c *command) remnantPurge(ctx context.Context, g *hubGlobals, args []string) error {
	fs := c.flagSet("remnants purge", g, hubRemnantsUsage)
	pos, err := c.parse(fs, args, 1, -1, "one or more job ids (see `hub remnants list`)")
	if err != nil {
		return err
	}
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	var errs []error
	for _, id := range pos {
		err := h.db.PurgeJobRemnant(ctx, id)
		result := store.AuditOK
		if err != nil {
			result = "failed"
			if errors.Is(err, store.ErrNotFound) {
				result = "not_found"
			}
			errs = append(errs, err)
		} else {
			fmt.Fprintf(c.stdout, "purged the remnant of job %s\n", id)
		}
		if _, aerr := h.db.AppendAudit(ctx, store.AuditEntry{Actor: CLIActor, Action: "remnant.purge", ObjectKind: "job", ObjectID: auditObject(id), Result: result}); aerr != nil && err == nil {
			fmt.Fprintf(c.stderr, "warning: the audit log did not take the entry: %v\n", aerr)
		}
	}
	return errors.Join(errs...)
}

// auditObject fits a command-line argument for the audit log.
func auditObject(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200]
	}
	if strings.Contains(s, "smcp_") {
		return "(withheld: looks like a token)"
	}
	return s
}
