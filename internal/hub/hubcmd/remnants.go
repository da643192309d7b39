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
	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/jobs"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// The commands on jobs whose replica is gone, and on what deleted
// projects' jobs left.

const jobHelp = `Usage: skills-hub job COMMAND [flags]

Jobs run skills' scripts in a sandbox, each on the replica that claimed it.
The replicas settle on their own the jobs of a replica whose lease in the
database has lapsed; settle by hand what cannot wait.
`

const jobSettleHelp = `Usage: skills-hub job settle JOB [--reason TEXT] [--force] [flags]

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

func jobSettleCommand(t *cmdline.Table) runFunc {
	var reason string
	var force bool
	t.String(&reason, "reason", "", "", "why, kept in the job's `TEXT`")
	t.Bool(&force, "force", "", "settle even while the job's replica holds its lease")
	return func(ctx context.Context, s *session, args []string) error {
		if _, err := s.open(ctx, nil); err != nil {
			return err
		}
		j, err := s.db.SettleJob(ctx, args[0], store.Settlement{By: CLIActor, Reason: reason, Force: force})
		object := args[0]
		if j.ProjectID != "" {
			object = j.ProjectID + "/" + j.ID
		}
		s.audit(ctx, "job.settle", "job", object, err)
		if errors.Is(err, store.ErrLiveReplica) {
			return fmt.Errorf("%w\nTry: skills-hub job settle %s --force (only if that replica is gone)", err, args[0])
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(s.Stdout, "job %s is %s: %s\n", j.ID, j.State, j.Reason)
		return nil
	}
}

const remnantsHelp = `Usage: skills-hub remnants COMMAND [flags]

When a project is deleted, the files of its jobs are kept for an
operator's recovery, each job's under a remnant named by the job's id.
Downloads and purges are written to the audit log (actor cli).
`

const remnantsListHelp = `Usage: skills-hub remnants list [flags]

Lists the remnants of deleted projects' jobs, oldest first: each one's job,
project, version, state and when its project was deleted.
`

var remnantsListCommand = reportCommand("print the remnants as JSON", func(ctx context.Context, h *hub.Hub, s *session, _ []string, asJSON bool) error {
	list, err := s.db.JobRemnants(ctx)
	if err != nil {
		return err
	}
	return Remnants(s.Stdout, list, asJSON)
})

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

const remnantsShowHelp = `Usage: skills-hub remnants show JOB [flags]

Shows a remnant: its job, deleted project, version and state, and its
files (input and output), each with its size and SHA-256.
`

var remnantsShowCommand = reportCommand("print the remnant as JSON", func(ctx context.Context, h *hub.Hub, s *session, args []string, asJSON bool) error {
	r, err := jobs.ReadRemnant(ctx, s.db, args[0])
	if err != nil {
		return err
	}
	if asJSON {
		return WriteJSON(s.Stdout, r)
	}
	fmt.Fprintf(s.Stdout, "job %s of deleted project %s (%s), %s; deleted %s\n", r.JobID, r.ProjectID,
		hub.VersionID(r.Package, r.TreeDigest), r.State, r.DeletedAt.Local().Format(time.DateTime))
	tw := tabwriter.NewWriter(s.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tPATH\tSIZE\tSHA256")
	for _, f := range r.Files {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", f.Kind, f.Path, f.Size, f.SHA256)
	}
	return tw.Flush()
})

const remnantsDownloadHelp = `Usage: skills-hub remnants download JOB PATH [--out FILE] [flags]

Writes a remnant's file (its output of PATH, else its input) to FILE, made
whole or not at all, or to stdout.
`

func remnantsDownloadCommand(t *cmdline.Table) runFunc {
	var out string
	t.String(&out, "out", "", "", "write the file to `FILE` (made whole or not at all) instead of stdout")
	return func(ctx context.Context, s *session, args []string) error {
		if _, err := s.open(ctx, nil); err != nil {
			return err
		}
		data, f, err := jobs.ReadRemnantFile(ctx, s.db, args[0], args[1])
		s.audit(ctx, "remnant.download", "job", auditObject(args[0]+":"+args[1]), err)
		if err != nil {
			return err
		}
		if out == "" {
			_, err := s.Stdout.Write(data)
			return err
		}
		if err := atomicfile.Write(out, 0o644, false, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
			return fmt.Errorf("writing %s: %w", out, err)
		}
		fmt.Fprintf(s.Stderr, "wrote %s (%s %s of job %s, %d bytes, sha256 %s)\n", filepath.Clean(out), f.Kind, f.Path, args[0], f.Size, f.SHA256)
		return nil
	}
}

const remnantsPurgeHelp = `Usage: skills-hub remnants purge JOB... [flags]

Deletes remnants and their files for good, giving their space back. Each
purge is written to the audit log (actor cli).
`

func remnantsPurgeCommand(*cmdline.Table) runFunc {
	return func(ctx context.Context, s *session, args []string) error {
		if _, err := s.open(ctx, nil); err != nil {
			return err
		}
		var errs []error
		for _, id := range args {
			err := s.db.PurgeJobRemnant(ctx, id)
			if err != nil {
				errs = append(errs, err)
			} else {
				fmt.Fprintf(s.Stdout, "purged the remnant of job %s\n", id)
			}
			s.audit(ctx, "remnant.purge", "job", auditObject(id), err)
		}
		return errors.Join(errs...)
	}
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
