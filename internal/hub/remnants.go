package hub

import (
	"context"
	"errors"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// Remnant is what is left of a job whose project was deleted: its record
// and its files, kept for an operator's recovery until purged.
type Remnant struct {
	store.JobRemnant
	Files []store.JobFile `json:"files"`
}

// Remnants lists the remnants of deleted projects' jobs, oldest first.
func (h *Hub) Remnants(ctx context.Context) ([]store.JobRemnant, error) {
	return h.st.JobRemnants(ctx)
}

// Remnant returns the remnant of job id with its files; an error matching
// store.ErrNotFound for a job that is not one (a live job's files are its
// project's).
func (h *Hub) Remnant(ctx context.Context, jobID string) (Remnant, error) {
	r, err := h.st.GetJobRemnant(ctx, jobID)
	if err != nil {
		return Remnant{}, err
	}
	files, err := h.st.JobFiles(ctx, jobID)
	if err != nil {
		return Remnant{}, err
	}
	return Remnant{JobRemnant: r, Files: files}, nil
}

// ReadRemnantFile reads a remnant's file whole, verified against its
// digests: its output of path, else its input.
func (h *Hub) ReadRemnantFile(ctx context.Context, jobID, path string) ([]byte, store.JobFile, error) {
	if _, err := h.st.GetJobRemnant(ctx, jobID); err != nil {
		return nil, store.JobFile{}, err
	}
	data, f, err := h.st.ReadJobFile(ctx, jobID, store.JobOutput, path, 0, store.MaxJobFileSize)
	if errors.Is(err, store.ErrNotFound) {
		data, f, err = h.st.ReadJobFile(ctx, jobID, store.JobInput, path, 0, store.MaxJobFileSize)
	}
	return data, f, err
}

// PurgeRemnant removes a remnant and its files for good, and gives their
// space back.
func (h *Hub) PurgeRemnant(ctx context.Context, jobID string) error {
	return h.st.PurgeJobRemnant(ctx, jobID)
}
