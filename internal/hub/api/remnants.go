package api

import (
	"context"
	"mime"
	"net/http"
	"path"

	"github.com/danielgtaylor/huma/v2"

	"github.com/skills-mcp/skills-mcp/internal/hub/jobs"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// RemnantPath names the remnant of a deleted project's job.
type RemnantPath struct {
	JobID string `path:"job_id" maxLength:"64" pattern:"^[A-Za-z0-9_-]+$" doc:"The job's id"`
}

type remnantsOutput struct {
	Body struct {
		Remnants []JobRemnant `json:"remnants"`
	}
}

type remnantOutput struct {
	Body Remnant
}

type remnantFileInput struct {
	RemnantPath
	Path string `query:"path" required:"true" minLength:"1" maxLength:"1024" doc:"The file's path in the job's /work: an output, else an input" example:"out.txt"`
}

// registerRemnants adds the routes of job remnants: what is left of the
// jobs of deleted projects, their files kept for an operator's recovery.
// Reading a remnant's files and purging it need admin: the project that
// owned them is gone, so no project's scope covers them.
func (a *API) registerRemnants() {
	register(a, huma.Operation{
		OperationID: "list-job-remnants", Method: http.MethodGet, Path: "/api/job-remnants", Tags: []string{"jobs"},
		Summary: "List the remnants of deleted projects' jobs (their files are kept until purged)",
	}, rule{scope: store.ScopeRead}, func(ctx context.Context, _ *struct{}) (*remnantsOutput, error) {
		list, err := a.st.JobRemnants(ctx)
		if err != nil {
			return nil, err
		}
		out := &remnantsOutput{}
		out.Body.Remnants = wireList(list, wireJobRemnant)
		return out, nil
	})

	register(a, huma.Operation{
		OperationID: "get-job-remnant", Method: http.MethodGet, Path: "/api/job-remnants/{job_id}", Tags: []string{"jobs"},
		Summary: "Read a remnant: its job's record and its files' manifest",
	}, rule{scope: store.ScopeRead}, func(ctx context.Context, in *RemnantPath) (*remnantOutput, error) {
		r, err := jobs.ReadRemnant(ctx, a.st, in.JobID)
		if err != nil {
			return nil, err
		}
		return &remnantOutput{Body: wireRemnant(r.JobRemnant, r.Files)}, nil
	})

	register(a, huma.Operation{
		OperationID: "download-job-remnant-file", Method: http.MethodGet, Path: "/api/job-remnants/{job_id}/file", Tags: []string{"jobs"},
		Summary:     "Download a remnant's file: its output of that path, else its input (audited)",
		Description: "The bytes as stored, verified against their digests, as an attachment; X-Content-Digest carries the file's sha256.",
		Responses: map[string]*huma.Response{"200": {
			Description: "The file's bytes",
			Content:     map[string]*huma.MediaType{"application/octet-stream": {Schema: &huma.Schema{Type: huma.TypeString, Format: "binary"}}},
		}},
	}, rule{scope: store.ScopeAdmin, action: "remnant.download", kind: "job"}, func(ctx context.Context, in *remnantFileInput) (*jobFileOutput, error) {
		setObject(ctx, in.JobID+":"+in.Path)
		data, f, err := jobs.ReadRemnantFile(ctx, a.st, in.JobID, in.Path)
		if err != nil {
			return nil, err
		}
		disp := mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(f.Path)})
		if disp == "" {
			disp = "attachment"
		}
		return &jobFileOutput{ContentType: "application/octet-stream", Disposition: disp, Digest: "sha256:" + f.SHA256,
			Kind: string(f.Kind), NoSniff: "nosniff", Body: data}, nil
	})

	register(a, huma.Operation{
		OperationID: "purge-job-remnant", Method: http.MethodDelete, Path: "/api/job-remnants/{job_id}", Tags: []string{"jobs"},
		Summary:       "Purge a remnant: its files are deleted for good and their space given back",
		DefaultStatus: http.StatusNoContent,
	}, rule{scope: store.ScopeAdmin, action: "remnant.purge", kind: "job", param: "job_id"}, func(ctx context.Context, in *RemnantPath) (*struct{}, error) {
		if err := a.st.PurgeJobRemnant(ctx, in.JobID); err != nil {
			return nil, err
		}
		return &struct{}{}, nil
	})
}
