package hubcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// The tokens' commands, and the audit entries of changes made from the
// shell.

const tokenHelp = `Usage: skills-hub token COMMAND [flags]

Tokens open the hub: an admin token (scope read, write or admin; read < write
< admin) the admin API and /metrics, a project token its project's endpoint,
an index token (a capability) its project's well-known index, whose URL it
travels in (see skills-hub well-known -h).
A token's secret is printed once, when it is created; the hub keeps only its
hash. Revoking takes effect at once.
`

const tokenCreateHelp = `Usage: skills-hub token create (--scope read|write|admin | --project ID | --index ID) [--name NAME] [--expires DUR] [flags]

Creates an admin token of a scope (read < write < admin), a token for one
project's endpoint, or a capability of one project's well-known index, and
prints its secret, alone, on stdout: this once, since the hub keeps only its
hash. The creation is written to the audit log (actor cli).
`

func tokenCreateCommand(t *cmdline.Table) runFunc {
	var scope, project, index, name string
	var expires time.Duration
	t.String(&scope, "scope", "", "", "an admin token of `SCOPE`: read, write or admin")
	t.String(&project, "project", "", "", "a token for project `ID`'s endpoint")
	t.String(&index, "index", "", "", "a capability of project `ID`'s well-known index")
	t.String(&name, "name", "", "", "a label for people, `NAME`")
	t.Duration(&expires, "expires", "", 0, "valid for `DUR` (720h, 90m); default: until revoked")
	return func(ctx context.Context, s *session, _ []string) error {
		given := 0
		for _, f := range []string{scope, project, index} {
			if f != "" {
				given++
			}
		}
		switch {
		case given != 1:
			return cmdline.Usagef("", "token create needs one of --scope read|write|admin (an admin token), --project ID (a project's token) or --index ID (a capability of a project's well-known index)")
		case scope != "" && !store.Scope(scope).Valid():
			return cmdline.Usagef("", "--scope %q: want read, write or admin", scope)
		case expires < 0:
			return cmdline.Usagef("", "--expires %s: want a positive duration", expires)
		}
		h, err := s.open(ctx, nil)
		if err != nil {
			return err
		}
		req, action := hub.TokenRequest{Project: project, Scope: store.Scope(scope), Name: name, Expires: expires}, "token.create"
		if index != "" {
			req.Project, req.Index, action = index, true, "well_known.issue"
		}
		tok, secret, err := h.CreateToken(ctx, req)
		s.audit(ctx, action, "token", tok.ID, err)
		if err != nil {
			return err
		}
		fmt.Fprintln(s.Stdout, secret)
		what := "admin token " + tok.ID + " (scope " + string(tok.Scope) + ")"
		switch tok.Kind {
		case store.ProjectToken:
			what = "token " + tok.ID + " for project " + tok.ProjectID
		case store.IndexToken:
			what = "capability " + tok.ID + " of project " + tok.ProjectID + "'s well-known index (npx skills add takes the hub's URL followed by " +
				hub.IndexPath(tok.ProjectID, "SECRET") + "; turn the index on with skills-hub well-known on " + tok.ProjectID + ")"
		}
		if !tok.ExpiresAt.IsZero() {
			what += ", expires " + tok.ExpiresAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(s.Stderr, "created %s; its secret is printed above, this once: the hub keeps only its hash\n", what)
		return nil
	}
}

const tokenListHelp = `Usage: skills-hub token list [--project ID] [--all] [flags]

Lists the tokens, admin and project tokens alike, never their secrets:
each one's ID, what it opens, its name, when it was created and expires, and
whether it is active. --all lists revoked tokens too; --project lists the
project's tokens and its index capabilities.
`

func tokenListCommand(t *cmdline.Table) runFunc {
	var project string
	var all, asJSON bool
	t.String(&project, "project", "", "", "only project `ID`'s tokens and index capabilities")
	t.Bool(&all, "all", "", "list revoked tokens too")
	t.Bool(&asJSON, "json", "", "print the tokens as JSON")
	return func(ctx context.Context, s *session, _ []string) error {
		if _, err := s.open(ctx, nil); err != nil {
			return err
		}
		f := store.TokenFilter{ProjectID: project, IncludeRevoked: all}
		toks, err := s.db.ListTokens(ctx, f)
		if err != nil {
			return err
		}
		return Tokens(s.Stdout, toks, asJSON)
	}
}

// Tokens prints a token list, never a secret.
func Tokens(w io.Writer, toks []store.Token, asJSON bool) error {
	if asJSON {
		if toks == nil {
			toks = []store.Token{}
		}
		return WriteJSON(w, toks)
	}
	if len(toks) == 0 {
		fmt.Fprintln(w, "no tokens (create one with `skills-hub token create`)")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tOPENS\tNAME\tCREATED\tEXPIRES\tSTATE")
	for _, t := range toks {
		opens := "admin API, scope " + string(t.Scope)
		switch t.Kind {
		case store.ProjectToken:
			opens = "project " + t.ProjectID
		case store.IndexToken:
			opens = "project " + t.ProjectID + "'s index"
		}
		expires := "never"
		if !t.ExpiresAt.IsZero() {
			expires = t.ExpiresAt.Local().Format(time.DateTime)
		}
		state := "active"
		switch {
		case !t.RevokedAt.IsZero():
			state = "revoked " + t.RevokedAt.Local().Format(time.DateTime)
		case !t.ExpiresAt.IsZero() && t.ExpiresAt.Before(time.Now()):
			state = "expired"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, opens, t.Name, t.CreatedAt.Local().Format(time.DateTime), expires, state)
	}
	return tw.Flush()
}

const tokenRevokeHelp = `Usage: skills-hub token revoke ID [flags]

Revokes a token, at once: every request that presents it is refused from
then on. ID is the 16 hex digits "skills-hub token list" shows, never the
secret. The revocation is written to the audit log (actor cli).
`

func tokenRevokeCommand(*cmdline.Table) runFunc {
	return func(ctx context.Context, s *session, args []string) error {
		id := args[0]
		if strings.HasPrefix(id, "smcp_") {
			return cmdline.Usagef("skills-hub token list", "give the token's ID, not its secret (the ID is the 16 hex digits `skills-hub token list` shows)")
		}
		if _, err := s.open(ctx, nil); err != nil {
			return err
		}
		tok, err := s.db.RevokeToken(ctx, id)
		s.audit(ctx, "token.revoke", "token", id, err)
		if err != nil {
			return err
		}
		fmt.Fprintf(s.Stdout, "revoked token %s at %s\n", tok.ID, tok.RevokedAt.Local().Format(time.DateTime))
		return nil
	}
}

// CLIActor is who the audit log says made a change from the shell.
const CLIActor = "cli"

// audit writes the audit entry of a change made from the shell, whose
// error was err. An entry the log does not take is a warning, when the
// change itself succeeded.
func (s *session) audit(ctx context.Context, action, kind, object string, err error) {
	result := store.AuditOK
	switch {
	case err == nil:
	case errors.Is(err, store.ErrLiveReplica):
		result = "replica_alive"
	case errors.Is(err, store.ErrNotFound):
		result = "not_found"
	default:
		result = "failed"
	}
	if _, aerr := s.db.AppendAudit(ctx, store.AuditEntry{Actor: CLIActor, Action: action, ObjectKind: kind, ObjectID: object, Result: result}); aerr != nil && err == nil {
		fmt.Fprintf(s.Stderr, "warning: the audit log did not take the entry: %v\n", aerr)
	}
}
