package hubcmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

const hubWellKnownUsage = `Usage: skills-hub well-known (on|off) PROJECT

A project's well-known index lets the skills installer (npx skills add) install
the skills bound to the project, from a URL that holds a capability: an index
token, since the installer sends no headers. It is off until an administrator
turns it on; the project's skills are not public by default.

Commands:
  on PROJECT         serve the project's index to the holders of its capabilities
  off PROJECT        answer 404 at its URLs (its capabilities stay; revoke them
                     with skills-hub token revoke ID)

Issue a capability with skills-hub token create --index PROJECT: it prints the
secret once; give npx skills add the hub's URL followed by /p/PROJECT/i/SECRET.
A paused project's index answers as its endpoint does (403).
`

func (c *command) wellKnown(ctx context.Context, g *hubGlobals, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(c.stdout, hubWellKnownUsage)
		return nil
	}
	switch args[0] {
	case "on", "off":
		return c.wellKnownSet(ctx, g, args[0], args[1:])
	}
	return usagef("skills-hub well-known -h", "unknown well-known command %q: want on or off", args[0])
}

func (c *command) wellKnownSet(ctx context.Context, g *hubGlobals, state string, args []string) error {
	fs := c.flagSet("well-known "+state, g, hubWellKnownUsage)
	pos, err := c.parse(fs, args, 1, 1, "a project ID")
	if err != nil {
		return err
	}
	id := pos[0]
	h, err := c.open(ctx, g, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	p, err := h.db.SetWellKnown(ctx, id, state == "on")
	result := store.AuditOK
	if err != nil {
		result = "failed"
		if errors.Is(err, store.ErrNotFound) {
			result = "not_found"
		}
	}
	if _, aerr := h.db.AppendAudit(ctx, store.AuditEntry{Actor: CLIActor, Action: "well_known." + state, ObjectKind: "project", ObjectID: id, Result: result}); aerr != nil && err == nil {
		fmt.Fprintf(c.stderr, "warning: the audit log did not take the entry: %v\n", aerr)
	}
	if err != nil {
		return err
	}
	if state == "off" {
		fmt.Fprintf(c.stdout, "project %s's well-known index is off: its URLs answer 404\n", p.ID)
		return nil
	}
	fmt.Fprintf(c.stdout, "project %s's well-known index is on since %s: issue a capability with skills-hub token create --index %s\n",
		p.ID, p.WellKnownAt.Local().Format(time.DateTime), p.ID)
	return nil
}
