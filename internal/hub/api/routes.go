package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// route is one operation of the admin API as the table lists it.
type route struct {
	// pattern is the method and the path, as http.ServeMux reads them.
	pattern string
	// rule is what the guard checks before the handler runs (the token's
	// scope) and records once it has answered (a change's audit entry).
	rule rule
	// handler answers the operation (see handle).
	handler func(a *API, op huma.Operation, ru rule)
	// doc is the rest of the operation as the OpenAPI document shows it:
	// its id, tags, summary, description, its own error statuses and its
	// body's limit.
	doc huma.Operation
}

// handle makes h a route's handler.
func handle[I, O any](h func(context.Context, *I) (*O, error)) func(*API, huma.Operation, rule) {
	return func(a *API, op huma.Operation, ru rule) { register(a, op, ru, h) }
}

// read is the rule of a read: a token of scope read, no audit entry.
var read = rule{scope: store.ScopeRead}

// write is the rule of a change a token of scope write may make, audited
// as action on an object of kind, named by the path parameter param (or,
// when param is empty, by the handler: setObject).
func write(action, kind, param string) rule {
	return rule{scope: store.ScopeWrite, action: action, kind: kind, param: param}
}

// admin is the rule of a change that needs a token of scope admin; see
// write.
func admin(action, kind, param string) rule {
	return rule{scope: store.ScopeAdmin, action: action, kind: kind, param: param}
}

// table is the admin API: every operation with its rule and its handler.
// The order is the document's and Patterns'.
func (a *API) table() []route {
	return []route{
		// Installed versions and the catalog.
		{"GET /api/skills", read, handle(a.listSkills),
			huma.Operation{OperationID: "list-skills", Tags: []string{"skills"},
				Summary: "List installed packages and their versions",
			}},
		{"GET /api/skills/catalog", read, handle(a.searchCatalog),
			huma.Operation{OperationID: "search-catalog", Tags: []string{"catalog"},
				Summary: "Search or browse the installable catalog",
			}},
		{"GET /api/skills/runtime", read, handle(a.skillsRuntime),
			huma.Operation{OperationID: "skills-runtime", Tags: []string{"skills"},
				Summary: "List the sandbox backends jobs can use",
			}},
		{"POST /api/skills/catalog/sync", admin("catalog.sync", "catalog", ""), handle(a.syncCatalog),
			huma.Operation{OperationID: "sync-catalog", Tags: []string{"catalog"},
				Summary:      "Replace the catalog with a document from a URL or sent inline",
				Description:  "Give exactly one of url and content. A document that is refused leaves the current catalog as it is. Installed versions and bindings are never touched.",
				MaxBodyBytes: MaxCatalogBody,
			}},
		{"POST /api/skills/install", admin("skill.install", "version", ""), handle(a.install),
			huma.Operation{OperationID: "install-skill", Tags: []string{"skills"},
				Summary:     "Install a package from a catalog item or a git repository",
				Description: "Give exactly one of catalog_id and source. Nothing in the repository runs. created is false when the same tree was installed before: nothing was written.",
			}},
		{"POST /api/skills/import", admin("skill.import", "version", ""), handle(a.importZip),
			huma.Operation{OperationID: "import-skill", Tags: []string{"skills"},
				Summary:      "Install a package uploaded as a ZIP archive",
				Description:  "A multipart form: file (the ZIP, at most 32 MiB) and an optional path. SKILL.md must be at the archive's root or in path.",
				MaxBodyBytes: maxUploadForm,
			}},
		{"GET /api/skills/{id}", read, handle(a.inspectSkill),
			huma.Operation{OperationID: "inspect-skill", Tags: []string{"skills"},
				Summary: "Inspect a version: origin, inspection, files, bindings",
			}},
		{"GET /api/skills/{id}/file", read, handle(a.readSkillFile),
			huma.Operation{OperationID: "read-skill-file", Tags: []string{"skills"},
				Summary:     "Read one file of a version",
				Description: "The bytes as stored, verified against their digest: text/plain for UTF-8, application/octet-stream otherwise, never rendered.",
				Responses: map[string]*huma.Response{"200": {
					Description: "The file's bytes",
					Content: map[string]*huma.MediaType{
						"text/plain":               {Schema: &huma.Schema{Type: huma.TypeString}},
						"application/octet-stream": {Schema: &huma.Schema{Type: huma.TypeString, Format: "binary"}},
					},
				}},
			}},
		{"DELETE /api/skills/{id}", admin("skill.uninstall", "version", "id"), handle(a.uninstallSkill),
			huma.Operation{OperationID: "uninstall-skill", Tags: []string{"skills"},
				Summary:     "Uninstall a version",
				Description: "Refused with 409 version_bound, naming the projects, while it is bound to any.",
				Errors:      []int{http.StatusConflict},
			}},
		{"POST /api/skills/{id}/approval", admin("skill.approve", "version", "id"), handle(a.approveSkill),
			huma.Operation{OperationID: "approve-skill", Tags: []string{"skills"},
				Summary: "Approve a version (recorded with the token's id)",
			}},
		{"DELETE /api/skills/{id}/approval", admin("skill.unapprove", "version", "id"), handle(a.unapproveSkill),
			huma.Operation{OperationID: "unapprove-skill", Tags: []string{"skills"},
				Summary: "Withdraw a version's approval (its bindings stay)",
			}},
		{"PUT /api/skills/{id}/notes", admin("skill.notes", "version", "id"), handle(a.setSkillNotes),
			huma.Operation{OperationID: "set-skill-notes", Tags: []string{"skills"},
				Summary: "Replace a version's notes",
			}},

		// Projects and their bindings.
		{"GET /api/projects", read, handle(a.listProjects),
			huma.Operation{OperationID: "list-projects", Tags: []string{"projects"},
				Summary: "List projects by id",
			}},
		{"POST /api/projects", admin("project.create", "project", ""), handle(a.createProject),
			huma.Operation{OperationID: "create-project", Tags: []string{"projects"},
				Summary:       "Create a project",
				DefaultStatus: http.StatusCreated,
				Errors:        []int{http.StatusConflict},
			}},
		{"GET /api/projects/{id}", read, handle(a.getProject),
			huma.Operation{OperationID: "get-project", Tags: []string{"projects"},
				Summary: "Get a project",
			}},
		{"PATCH /api/projects/{id}", admin("project.rename", "project", "id"), handle(a.renameProject),
			huma.Operation{OperationID: "rename-project", Tags: []string{"projects"},
				Summary: "Rename a project (its id, and so its endpoint, stay)",
				Errors:  []int{http.StatusConflict},
			}},
		{"POST /api/projects/{id}/pause", admin("project.pause", "project", "id"), handle(a.pauseProject),
			huma.Operation{OperationID: "pause-project", Tags: []string{"projects"},
				Summary: "Pause a project: its endpoint refuses requests until it is resumed",
			}},
		{"POST /api/projects/{id}/resume", admin("project.resume", "project", "id"), handle(a.resumeProject),
			huma.Operation{OperationID: "resume-project", Tags: []string{"projects"},
				Summary: "Resume a paused project",
			}},
		{"POST /api/projects/{id}/duplicate", admin("project.duplicate", "project", ""), handle(a.duplicateProject),
			huma.Operation{OperationID: "duplicate-project", Tags: []string{"projects"},
				Summary:       "Make a new project bound to the same versions",
				Description:   "Copies the bindings, never jobs, job files or tokens.",
				DefaultStatus: http.StatusCreated,
				Errors:        []int{http.StatusConflict},
			}},
		{"DELETE /api/projects/{id}", admin("project.delete", "project", "id"), handle(a.deleteProject),
			huma.Operation{OperationID: "delete-project", Tags: []string{"projects"},
				Summary:       "Delete a project with its bindings, tokens and job records",
				Description:   "Refused with 409 jobs_in_the_way while one of its jobs runs. Job files stay for recovery.",
				Errors:        []int{http.StatusConflict},
				DefaultStatus: http.StatusNoContent,
			}},
		{"GET /api/projects/{id}/skills", read, handle(a.listProjectSkills),
			huma.Operation{OperationID: "list-project-skills", Tags: []string{"projects"},
				Summary: "List the versions bound to a project",
			}},
		{"PUT /api/projects/{id}/skills/{skill_id}", admin("project.bind", "project", ""), handle(a.bindSkill),
			huma.Operation{OperationID: "bind-skill", Tags: []string{"projects"},
				Summary:     "Bind a version to a project",
				Description: "Binding a bound version again changes nothing (changed is false, nothing is announced). Refused with 422 not_approved for an unapproved version when the hub requires approval.",
			}},
		{"DELETE /api/projects/{id}/skills/{skill_id}", admin("project.unbind", "project", ""), handle(a.unbindSkill),
			huma.Operation{OperationID: "unbind-skill", Tags: []string{"projects"},
				Summary:     "Unbind a version from a project",
				Description: "Unbinding a version that is not bound changes nothing. Refused with 409 jobs_in_the_way, listing them, while the project keeps jobs for it.",
				Errors:      []int{http.StatusConflict},
			}},

		// Tokens and the audit log.
		{"GET /api/projects/{id}/tokens", read, handle(a.listProjectTokens),
			huma.Operation{OperationID: "list-project-tokens", Tags: []string{"tokens"},
				Summary: "List a project's tokens (never their secrets)",
			}},
		{"POST /api/projects/{id}/tokens", admin("token.create", "token", ""), handle(a.createProjectToken),
			huma.Operation{OperationID: "create-project-token", Tags: []string{"tokens"},
				Summary:       "Create a token for a project's endpoint",
				Description:   "The answer holds the secret, shown this once.",
				DefaultStatus: http.StatusCreated,
			}},
		{"DELETE /api/projects/{id}/tokens/{token_id}", admin("token.revoke", "token", "token_id"), handle(a.revokeProjectToken),
			huma.Operation{OperationID: "revoke-project-token", Tags: []string{"tokens"},
				Summary: "Revoke a project's token at once",
			}},
		{"GET /api/tokens", read, handle(a.listAdminTokens),
			huma.Operation{OperationID: "list-admin-tokens", Tags: []string{"tokens"},
				Summary: "List admin tokens (never their secrets)",
			}},
		{"POST /api/tokens", admin("token.create", "token", ""), handle(a.createAdminToken),
			huma.Operation{OperationID: "create-admin-token", Tags: []string{"tokens"},
				Summary:       "Create an admin token",
				Description:   "The answer holds the secret, shown this once.",
				DefaultStatus: http.StatusCreated,
			}},
		{"DELETE /api/tokens/{token_id}", admin("token.revoke", "token", "token_id"), handle(a.revokeAdminToken),
			huma.Operation{OperationID: "revoke-admin-token", Tags: []string{"tokens"},
				Summary: "Revoke an admin token at once",
			}},
		{"GET /api/audit", read, handle(a.listAudit),
			huma.Operation{OperationID: "list-audit", Tags: []string{"audit"},
				Summary: "List the audit log, newest first",
			}},

		// A project's well-known index, off until turned on, and its
		// capabilities: index tokens that travel in the index's URL.
		{"PUT /api/projects/{id}/well-known", admin("well_known.on", "project", "id"), handle(a.wellKnownOn),
			huma.Operation{OperationID: "well-known-on", Tags: []string{"projects"},
				Summary: "Turn a project's well-known index on",
				Description: "The holders of one of the project's capabilities can then install its bound skills with `npx skills add` " +
					"from the capability's URL, while the project is not paused. Turning it on when it is on changes nothing.",
			}},
		{"DELETE /api/projects/{id}/well-known", admin("well_known.off", "project", "id"), handle(a.wellKnownOff),
			huma.Operation{OperationID: "well-known-off", Tags: []string{"projects"},
				Summary:     "Turn a project's well-known index off",
				Description: "Its URLs answer 404 until it is on again; its capabilities stay (revoke them to end them).",
			}},
		{"GET /api/projects/{id}/well-known/capabilities", read, handle(a.listWellKnownCapabilities),
			huma.Operation{OperationID: "list-well-known-capabilities", Tags: []string{"projects"},
				Summary: "List the capabilities of a project's well-known index (never their secrets)",
			}},
		{"POST /api/projects/{id}/well-known/capabilities", admin("well_known.issue", "token", ""), handle(a.issueWellKnownCapability),
			huma.Operation{OperationID: "issue-well-known-capability", Tags: []string{"projects"},
				Summary: "Issue a capability of a project's well-known index",
				Description: "A capability is an index token that travels in the index's URL (the installers send no headers): " +
					"it opens that index and nothing else. The answer holds the secret and the path, shown this once.",
				DefaultStatus: http.StatusCreated,
			}},
		{"DELETE /api/projects/{id}/well-known/capabilities/{token_id}", admin("well_known.revoke", "token", "token_id"), handle(a.revokeWellKnownCapability),
			huma.Operation{OperationID: "revoke-well-known-capability", Tags: []string{"projects"},
				Summary: "Revoke a capability of a project's well-known index at once",
			}},

		// Execution profiles, preparations and a project's jobs.
		{"GET /api/skills/{id}/profile", read, handle(a.getSkillProfile),
			huma.Operation{OperationID: "get-skill-profile", Tags: []string{"jobs"},
				Summary: "Read a version's execution profile and what it authorises",
			}},
		{"PUT /api/skills/{id}/profile", admin("skill.profile", "version", "id"), handle(a.setSkillProfile),
			huma.Operation{OperationID: "set-skill-profile", Tags: []string{"jobs"},
				Summary: "Set a version's execution profile",
				Description: "Any change but enabled clears the prepared state: prepare the environment again. " +
					"Enabling the profile authorises jobs for every project bound to the version; the answer lists them.",
				Errors: []int{http.StatusConflict},
			}},
		{"POST /api/skills/{id}/prepare", admin("skill.prepare", "version", "id"), handle(a.startPrepare),
			huma.Operation{OperationID: "prepare-skill", Tags: []string{"jobs"},
				Summary: "Prepare a version's environment (202: poll GET …/prepare)",
				Description: "An explicit administrator operation that may use the network (when the profile allows it) and runs dependency build code in a build sandbox. " +
					"It starts the preparation and answers 202 at once; GET /api/skills/{id}/prepare says whether it still runs and, once it ended, the identity and the log. " +
					"409 while a preparation of the version runs.",
				DefaultStatus: http.StatusAccepted,
				Errors:        []int{http.StatusConflict},
			}},
		{"GET /api/skills/{id}/prepare", read, handle(a.getSkillPreparation),
			huma.Operation{OperationID: "get-skill-preparation", Tags: []string{"jobs"},
				Summary: "Read the state of a version's preparation: running, prepared, failed or none",
			}},
		{"GET /api/projects/{id}/skill-jobs", read, handle(a.listSkillJobs),
			huma.Operation{OperationID: "list-skill-jobs", Tags: []string{"jobs"},
				Summary: "List a project's jobs, newest first (without their logs)",
			}},
		{"POST /api/projects/{id}/skill-jobs", write("job.create", "job", "id"), handle(a.createSkillJob),
			huma.Operation{OperationID: "create-skill-job", Tags: []string{"jobs"},
				Summary:       "Create a job for a version bound to the project",
				Description:   "The version's profile must be enabled and prepared. Upload inputs next, then run it once.",
				Errors:        []int{http.StatusConflict},
				DefaultStatus: http.StatusCreated,
			}},
		{"GET /api/projects/{id}/skill-jobs/{job_id}", read, handle(a.getSkillJob),
			huma.Operation{OperationID: "get-skill-job", Tags: []string{"jobs"},
				Summary: "Read a job: its state, exit code, stdout and stderr, inputs and output manifest",
			}},
		{"DELETE /api/projects/{id}/skill-jobs/{job_id}", admin("job.delete", "job", ""), handle(a.deleteSkillJob),
			huma.Operation{OperationID: "delete-skill-job", Tags: []string{"jobs"},
				Summary:       "Delete a job and its files",
				Description:   "Refused with 409 while the job runs or is locked.",
				Errors:        []int{http.StatusConflict},
				DefaultStatus: http.StatusNoContent,
			}},
		{"POST /api/projects/{id}/skill-jobs/{job_id}/files", write("job.upload", "job", ""), handle(a.uploadFiles),
			huma.Operation{OperationID: "upload-skill-job-files", Tags: []string{"jobs"},
				Summary: "Upload input files to a job that has not run",
				Description: "A multipart/form-data body: each file part (field file) is stored at the path of the path field sent before it, " +
					"else at the part's file name; a path sent again replaces that file. At most 32 MiB per file (413 beyond), streamed into the store in 1 MiB pieces: " +
					"an upload cut off leaves the file as far as it got, and the error names it; send it again. Refused with 409 once the job has run.",
				MaxBodyBytes: maxJobForm,
				Errors:       []int{http.StatusConflict},
			}},
		{"POST /api/projects/{id}/skill-jobs/{job_id}/run", write("job.run", "job", ""), handle(a.runSkillJob),
			huma.Operation{OperationID: "run-skill-job", Tags: []string{"jobs"},
				Summary: "Run the job's script once",
				Description: "script must be one of the profile's allowed scripts; args a JSON array of strings. The call waits a bounded time for the run to end; " +
					"a job still running is answered with state running (read it again with GET). A job runs at most once: another run needs another job (409). " +
					"When the hub's database goes away during the wait, the answer is 202 with the job's last state known, stale: true, and Location: the job; " +
					"the run goes on: read the job, never create another one to run again (503 run_state_unknown when even the queueing's outcome is unknown: read the job before running it again).",
				Errors:    []int{http.StatusConflict},
				Responses: map[string]*huma.Response{"202": {Description: "The run was queued and goes on; the job's state could not be read fresh (stale: true): read it again"}},
			}},
		{"POST /api/projects/{id}/skill-jobs/{job_id}/settle", admin("job.settle", "job", ""), handle(a.settleSkillJob),
			huma.Operation{OperationID: "settle-skill-job", Tags: []string{"jobs"},
				Summary: "Settle a running or locked job by an administrator's decision",
				Description: "The job becomes stopped, its reason naming the token and the reason given, so that it, its binding and its project can be deleted again. " +
					"Refused with 409 replica_alive while the replica running it holds its lease, unless force: a replica that still runs the job kills its sandbox when it hears of the settlement. " +
					"Jobs of a replica whose lease lapsed are settled by the other replicas on their own; this is for what cannot wait.",
				Errors: []int{http.StatusConflict},
			}},
		{"GET /api/projects/{id}/skill-jobs/{job_id}/file", read, handle(a.downloadSkillJobFile),
			huma.Operation{OperationID: "download-skill-job-file", Tags: []string{"jobs"},
				Summary:     "Download a job's file: its output of that path, else its input",
				Description: "The bytes as stored, verified against their digests, as an attachment; X-Content-Digest carries the file's sha256. 409 while the job runs or is locked.",
				Errors:      []int{http.StatusConflict},
				Responses: map[string]*huma.Response{"200": {
					Description: "The file's bytes",
					Content:     map[string]*huma.MediaType{"application/octet-stream": {Schema: &huma.Schema{Type: huma.TypeString, Format: "binary"}}},
				}},
			}},

		// The dashboard, the job list across projects and the replicas.
		{"GET /api/jobs", read, handle(a.listAllJobs),
			huma.Operation{OperationID: "list-jobs", Tags: []string{"jobs"},
				Summary: "List jobs across projects, newest first (without their logs), filtered by state, project and skill",
			}},
		{"GET /api/replicas", read, handle(a.listReplicas),
			huma.Operation{OperationID: "list-replicas", Tags: []string{"hub"},
				Summary: "The replicas' leases in the database, live or lapsed, judged by the database's time",
			}},
		{"GET /api/overview", read, handle(a.overview),
			huma.Operation{OperationID: "get-overview", Tags: []string{"hub"},
				Summary: "The hub's state at a glance: sandbox, store and replicas, counts, and what needs an administrator",
			}},

		// Job remnants: what is left of the jobs of deleted projects, their
		// files kept for an operator's recovery. Reading a remnant's files and
		// purging it need admin: the project that owned them is gone, so no
		// project's scope covers them.
		{"GET /api/job-remnants", read, handle(a.listJobRemnants),
			huma.Operation{OperationID: "list-job-remnants", Tags: []string{"jobs"},
				Summary: "List the remnants of deleted projects' jobs (their files are kept until purged)",
			}},
		{"GET /api/job-remnants/{job_id}", read, handle(a.getJobRemnant),
			huma.Operation{OperationID: "get-job-remnant", Tags: []string{"jobs"},
				Summary: "Read a remnant: its job's record and its files' manifest",
			}},
		{"GET /api/job-remnants/{job_id}/file", admin("remnant.download", "job", ""), handle(a.downloadJobRemnantFile),
			huma.Operation{OperationID: "download-job-remnant-file", Tags: []string{"jobs"},
				Summary:     "Download a remnant's file: its output of that path, else its input (audited)",
				Description: "The bytes as stored, verified against their digests, as an attachment; X-Content-Digest carries the file's sha256.",
				Responses: map[string]*huma.Response{"200": {
					Description: "The file's bytes",
					Content:     map[string]*huma.MediaType{"application/octet-stream": {Schema: &huma.Schema{Type: huma.TypeString, Format: "binary"}}},
				}},
			}},
		{"DELETE /api/job-remnants/{job_id}", admin("remnant.purge", "job", "job_id"), handle(a.purgeJobRemnant),
			huma.Operation{OperationID: "purge-job-remnant", Tags: []string{"jobs"},
				Summary:       "Purge a remnant: its files are deleted for good and their space given back",
				DefaultStatus: http.StatusNoContent,
			}},
	}
}

// forms documents the bodies that handlers read themselves, as they
// arrive (multipart forms: a ZIP to import, a job's input files). They are
// set on the document after the routes are registered, so that huma does
// not read the body first; each is a POST.
var forms = map[string]*huma.RequestBody{
	// The ZIP is spooled into the API's temporary folder (not the
	// system's).
	"POST /api/skills/import": {
		Required: true, Content: map[string]*huma.MediaType{
			"multipart/form-data": {Schema: &huma.Schema{Type: huma.TypeObject, Properties: map[string]*huma.Schema{
				"file": {Type: huma.TypeString, Format: "binary", Description: "The package as a ZIP archive (at most 32 MiB)"},
				"path": {Type: huma.TypeString, Description: "The package's folder inside the archive; empty when SKILL.md is at its root"},
			}, Required: []string{"file"}}},
		}},
	// Each file is stored in pieces as it arrives.
	"POST /api/projects/{id}/skill-jobs/{job_id}/files": {
		Required: true, Content: map[string]*huma.MediaType{
			"multipart/form-data": {Schema: &huma.Schema{Type: huma.TypeObject, Properties: map[string]*huma.Schema{
				"path": {Type: huma.TypeString, Description: "The file's path in the job's /work, e.g. in/data.csv (no .., not absolute)"},
				"file": {Type: huma.TypeString, Format: "binary", Description: "The file's bytes"},
			}, Required: []string{"file"}}},
		}},
}

// addRoutes registers the table's routes, then documents the forms.
func (a *API) addRoutes() {
	for _, r := range a.table() {
		method, path, _ := strings.Cut(r.pattern, " ")
		op := r.doc
		op.Method, op.Path = method, path
		r.handler(a, op, r.rule)
	}
	for pattern, body := range forms {
		method, path, _ := strings.Cut(pattern, " ")
		item := a.huma.OpenAPI().Paths[path]
		if method != http.MethodPost || item == nil || item.Post == nil {
			panic(fmt.Sprintf("form of %s: no such POST route", pattern))
		}
		item.Post.RequestBody = body
	}
}
