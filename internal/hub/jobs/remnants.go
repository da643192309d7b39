package jobs

import (
	"context"
	"errors"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// A remnant is what is left of a job whose project was deleted: its record
// and its files, kept for an operator's recovery until purged. Reading one
// needs no service (no sandbox runs): the command line and the admin API
// read them over the store alike.

// RemnantStore is what reading a remnant needs of the hub's store;
// *store.DB is one.
type RemnantStore interface {
	GetJobRemnant(ctx context.Context, id string) (store.JobRemnant, error)
	JobFiles(ctx context.Context, id string) ([]store.JobFile, error)
	ReadJobFile(ctx context.Context, id string, kind store.FileKind, path string, offset, limit int64) ([]byte, store.JobFile, error)
}

// Remnant is a remnant's record with its files.
type Remnant struct {
	store.JobRemnant
	Files []store.JobFile `json:"files"`
}

// ReadRemnant returns the remnant of job id with its files; an error
// matching store.ErrNotFound for a job that is not one (a live job's files
// are its project's).
func ReadRemnant(ctx context.Context, st RemnantStore, jobID string) (Remnant, error) {
	r, err := st.GetJobRemnant(ctx, jobID)
	if err != nil {
		return Remnant{}, err
	}
	files, err := st.JobFiles(ctx, jobID)
	if err != nil {
		return Remnant{}, err
	}
	return Remnant{JobRemnant: r, Files: files}, nil
}

// ReadRemnantFile reads a remnant's file whole, verified against its
// digests: its output of path, else its input, as a live job's file is
// read (Service.ReadFile).
func ReadRemnantFile(ctx context.Context, st RemnantStore, jobID, path string) ([]byte, store.JobFile, error) {
	if _, err := st.GetJobRemnant(ctx, jobID); err != nil {
		return nil, store.JobFile{}, err
	}
	data, f, err := st.ReadJobFile(ctx, jobID, store.JobOutput, path, 0, store.MaxJobFileSize)
	if errors.Is(err, store.ErrNotFound) {
		data, f, err = st.ReadJobFile(ctx, jobID, store.JobInput, path, 0, store.MaxJobFileSize)
	}
	return data, f, err
}
