package api

import (
	"context"
	"mime"
	"path"

	"github.com/skills-mcp/skills-mcp/internal/hub/jobs"
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

func (a *API) listJobRemnants(ctx context.Context, _ *struct{}) (*remnantsOutput, error) {
	list, err := a.st.JobRemnants(ctx)
	if err != nil {
		return nil, err
	}
	out := &remnantsOutput{}
	out.Body.Remnants = wireList(list, wireJobRemnant)
	return out, nil
}

func (a *API) getJobRemnant(ctx context.Context, in *RemnantPath) (*remnantOutput, error) {
	r, err := jobs.ReadRemnant(ctx, a.st, in.JobID)
	if err != nil {
		return nil, err
	}
	return &remnantOutput{Body: wireRemnant(r.JobRemnant, r.Files)}, nil
}

func (a *API) downloadJobRemnantFile(ctx context.Context, in *remnantFileInput) (*jobFileOutput, error) {
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
}

func (a *API) purgeJobRemnant(ctx context.Context, in *RemnantPath) (*struct{}, error) {
	if err := a.st.PurgeJobRemnant(ctx, in.JobID); err != nil {
		return nil, err
	}
	return &struct{}{}, nil
}
