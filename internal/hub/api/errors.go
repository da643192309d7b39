package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// The error codes of the API. A code is stable: clients branch on it; the
// message is for people and may change.
const (
	CodeBadRequest        = "bad_request"        // 400: a body that is not JSON, a bad cursor
	CodeUnauthorized      = "unauthorized"       // 401: no token, or one that is invalid, revoked or expired
	CodeForbidden         = "forbidden"          // 403: a token whose scope is too small, or a project token
	CodeNotFound          = "not_found"          // 404: no such route, skill, project, token or file
	CodeConflict          = "conflict"           // 409: the id or name is taken
	CodeVersionBound      = "version_bound"      // 409: uninstalling a version bound to projects
	CodeJobs              = "jobs_in_the_way"    // 409: jobs forbid the change
	CodeTooLarge          = "too_large"          // 413: a body over its route's limit
	CodeInvalid           = "invalid_request"    // 422: a body or parameter the route refuses
	CodeNotApproved       = "not_approved"       // 422: binding an unapproved version
	CodeAmbiguous         = "ambiguous_version"  // 422: a version reference matching several
	CodePackageInvalid    = "package_invalid"    // 422: a package the hub refuses to install
	CodeCatalogRefused    = "catalog_refused"    // 422: a catalog document or URL refused
	CodeInstallFailed     = "install_failed"     // 422: a repository that could not be read
	CodeUnavailable       = "unavailable"        // 503: the database cannot be reached
	CodeStorageFull       = "storage_full"       // 503: the database has no room left
	CodeInternal          = "internal"           // 500: a fault of the hub's, logged
	CodeMethodNotAllowed  = "method_not_allowed" // 405
	CodeUnsupportedFormat = "unsupported_media_type"

	// The job routes' codes.
	CodeJobState           = "job_state"           // 409: the job's state does not allow this (an upload after the run, a second run, a download while it runs)
	CodeProfile            = "profile_not_ready"   // 409: the version's profile is not enabled, not prepared, or changed since the job was created
	CodeJobLimit           = "job_limit"           // 413: a file, job or project limit would be passed
	CodeScriptNotAllowed   = "script_not_allowed"  // 422: a script the profile does not list
	CodePrepareFailed      = "prepare_failed"      // 422: the environment's build failed; the profile keeps its log
	CodeSandboxUnavailable = "sandbox_unavailable" // 503: no sandbox backend works here; the message names each one tried and why
	CodeProjectPaused      = "project_paused"      // 409: the project is paused: no job of it is created, uploaded to or run
	CodeInputIncomplete    = "input_incomplete"    // 409: an input's upload was cut off: upload it again before running the job
	CodeReplicaAlive       = "replica_alive"       // 409: settling a job whose replica holds its lease, without force
	CodeRunStateUnknown    = "run_state_unknown"   // 503: the database went away while the run was queued: read the job before running it again
)

// Error is every error the API answers, as {"error":{...}}.
type Error struct {
	status int
	header string    // WWW-Authenticate, for 401 and 403
	Body   ErrorBody `json:"error"`
}

// ErrorBody is the content of an error answer.
type ErrorBody struct {
	Code    string `json:"code" doc:"A stable code clients may branch on" example:"not_found"`
	Message string `json:"message" doc:"What went wrong and how to fix it, for people"`
	// Details locate each problem of a request that failed validation.
	Details []ErrorDetail `json:"details,omitempty" doc:"Where a request failed validation"`
}

// ErrorDetail locates one problem of a request. The value sent is never
// echoed: it may hold a secret.
type ErrorDetail struct {
	Location string `json:"location,omitempty" doc:"Where, e.g. body.name or query.limit"`
	Message  string `json:"message"`
}

// Error returns the message.
func (e *Error) Error() string { return e.Body.Message }

// GetStatus returns the HTTP status (huma.StatusError).
func (e *Error) GetStatus() int { return e.status }

func newError(status int, code, msg string) *Error {
	return &Error{status: status, Body: ErrorBody{Code: code, Message: msg}}
}

// codeOf is the code of an error huma itself makes (validation, limits).
func codeOf(status int) string {
	switch status {
	case http.StatusBadRequest:
		return CodeBadRequest
	case http.StatusUnauthorized:
		return CodeUnauthorized
	case http.StatusForbidden:
		return CodeForbidden
	case http.StatusNotFound:
		return CodeNotFound
	case http.StatusMethodNotAllowed:
		return CodeMethodNotAllowed
	case http.StatusConflict:
		return CodeConflict
	case http.StatusRequestEntityTooLarge:
		return CodeTooLarge
	case http.StatusUnsupportedMediaType:
		return CodeUnsupportedFormat
	case http.StatusUnprocessableEntity:
		return CodeInvalid
	case http.StatusServiceUnavailable:
		return CodeUnavailable
	}
	return CodeInternal
}

var installErrors sync.Once

// useErrorModel makes huma build its errors (validation, body limits) as
// *Error. huma keeps the constructor in a package variable; this package is
// its only user in the binary, and sets it once.
func useErrorModel() {
	installErrors.Do(func() {
		huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
			return humaError(nil, status, msg, errs)
		}
		huma.NewErrorWithContext = func(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
			return humaError(ctx, status, msg, errs)
		}
	})
}

func humaError(ctx huma.Context, status int, msg string, errs []error) *Error {
	var c *call
	if ctx != nil {
		c = callOf(ctx.Context())
	}
	if c != nil && c.tooLarge.Load() {
		status = http.StatusRequestEntityTooLarge
		msg = "request body is too large"
		errs = nil
	}
	if status == 0 { // the example huma documents the model with
		status = http.StatusInternalServerError
	}
	e := newError(status, codeOf(status), msg)
	var parts []string
	for _, err := range errs {
		if err == nil {
			continue
		}
		d := ErrorDetail{Message: err.Error()}
		var hd huma.ErrorDetailer
		if errors.As(err, &hd) {
			if x := hd.ErrorDetail(); x != nil {
				d = ErrorDetail{Location: x.Location, Message: x.Message}
			}
		}
		e.Body.Details = append(e.Body.Details, d)
		if d.Location != "" {
			parts = append(parts, d.Location+": "+d.Message)
		} else {
			parts = append(parts, d.Message)
		}
	}
	if len(parts) > 0 {
		e.Body.Message += " (" + strings.Join(parts, "; ") + ")"
	}
	if c != nil {
		c.code = e.Body.Code
	}
	return e
}

// errorOf maps an operation's error to the API's: the store's and the
// hub's errors to their statuses and codes, anything else to 500, whose
// cause is logged and not shown.
func (a *API) errorOf(ctx context.Context, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if e := jobError(err); e != nil {
		return e
	}
	msg := err.Error()
	var (
		be *store.BoundError
		je *store.JobsError
		ie *index.ItemError
	)
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return newError(http.StatusServiceUnavailable, CodeUnavailable, "the request was cancelled or ran out of time: "+msg)
	case errors.Is(err, store.ErrUnavailable):
		a.storeError()
		return newError(http.StatusServiceUnavailable, CodeUnavailable, "the hub's database is unavailable; try again when it is back")
	case errors.Is(err, store.ErrStorageFull):
		a.storeError()
		// The driver's text can name the database server's files: the
		// log has it, the answer does not.
		a.log.Error("admin API: the database is full", "err", err)
		return newError(http.StatusServiceUnavailable, CodeStorageFull, "the hub's storage is full; free space (delete old jobs or versions) and try again")
	case errors.As(err, &be):
		return newError(http.StatusConflict, CodeVersionBound, msg)
	case errors.As(err, &je):
		return newError(http.StatusConflict, CodeJobs, msg)
	case errors.Is(err, store.ErrExists):
		return newError(http.StatusConflict, CodeConflict, msg)
	case errors.Is(err, store.ErrNotFound), errors.Is(err, pkgtree.ErrNotFound):
		return newError(http.StatusNotFound, CodeNotFound, msg)
	case errors.Is(err, store.ErrNotApproved):
		return newError(http.StatusUnprocessableEntity, CodeNotApproved, msg)
	case errors.Is(err, hub.ErrAmbiguous):
		return newError(http.StatusUnprocessableEntity, CodeAmbiguous, msg)
	case errors.Is(err, hub.ErrBadID):
		// A reference that cannot name anything names nothing.
		return newError(http.StatusNotFound, CodeNotFound, msg)
	case errors.Is(err, store.ErrInvalid):
		return newError(http.StatusUnprocessableEntity, CodeInvalid, msg)
	case errors.Is(err, hub.ErrLocalRepository):
		return newError(http.StatusUnprocessableEntity, CodeInvalid, msg)
	case errors.Is(err, hub.ErrDigestMismatch), isPackageError(err):
		return newError(http.StatusUnprocessableEntity, CodePackageInvalid, msg)
	case errors.As(err, &ie), errors.Is(err, index.ErrTooLarge):
		return newError(http.StatusUnprocessableEntity, CodeCatalogRefused, msg)
	}
	a.storeError()
	a.log.ErrorContext(ctx, "admin API: operation failed", "err", err)
	return newError(http.StatusInternalServerError, CodeInternal, "the hub failed to do this; its log says why")
}

func isPackageError(err error) bool {
	for _, target := range []error{pkgtree.ErrNoSkill, pkgtree.ErrPath, pkgtree.ErrDuplicate, pkgtree.ErrLink,
		pkgtree.ErrSpecial, pkgtree.ErrTooLarge, pkgtree.ErrArchive, pkgtree.ErrSource} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

func (a *API) storeError() {
	if a.opts.OnStoreError != nil {
		a.opts.OnStoreError()
	}
}
