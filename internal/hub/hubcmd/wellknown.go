package hubcmd

import (
	"context"
	"fmt"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
)

// The commands that turn a project's well-known index on and off.

const wellKnownHelp = `Usage: skills-hub well-known COMMAND PROJECT [flags]

A project's well-known index lets the skills installer (npx skills add) install
the skills bound to the project, from a URL that holds a capability: an index
token, since the installer sends no headers. It is off until an administrator
turns it on; the project's skills are not public by default.

Issue a capability with skills-hub token create --index PROJECT: it prints the
secret once; give npx skills add the hub's URL followed by /p/PROJECT/i/SECRET.
A paused project's index answers as its endpoint does (403).
`

const wellKnownOnHelp = `Usage: skills-hub well-known on PROJECT [flags]

Serves the project's well-known index to the holders of its capabilities
(skills-hub token create --index PROJECT issues one). The change is written to
the audit log (actor cli).
`

const wellKnownOffHelp = `Usage: skills-hub well-known off PROJECT [flags]

Answers 404 at the project's well-known index URLs. Its capabilities stay;
revoke them with skills-hub token revoke ID. The change is written to the
audit log (actor cli).
`

// wellKnownCommand turns a project's index on or off.
func wellKnownCommand(on bool) func(*cmdline.Table) runFunc {
	state := "off"
	if on {
		state = "on"
	}
	return func(*cmdline.Table) runFunc {
		return func(ctx context.Context, s *session, args []string) error {
			id := args[0]
			if _, err := s.open(ctx, nil); err != nil {
				return err
			}
			p, err := s.db.SetWellKnown(ctx, id, on)
			s.audit(ctx, "well_known."+state, "project", id, err)
			if err != nil {
				return err
			}
			if !on {
				fmt.Fprintf(s.Stdout, "project %s's well-known index is off: its URLs answer 404\n", p.ID)
				return nil
			}
			fmt.Fprintf(s.Stdout, "project %s's well-known index is on since %s: issue a capability with skills-hub token create --index %s\n",
				p.ID, p.WellKnownAt.Local().Format(time.DateTime), p.ID)
			return nil
		}
	}
}
