package docker

import (
	"context"
	"errors"
	"fmt"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// ImageID returns the id of the engine's image ref (a tag such as
// python:3.12-slim, or an id): the immutable identity a preparation pins
// and its runs use, whatever the tag names later. Nothing is pulled: an
// image the engine does not have is an error matching sandbox.ErrNoImage
// that names it and says how to get it there.
func (e *Executor) ImageID(ctx context.Context, ref string) (string, error) {
	if ref == "" {
		return "", errors.New("docker: no image named")
	}
	img, err := e.cli.ImageInspect(ctx, ref)
	if isNotFound(err) {
		return "", fmt.Errorf("%w: the Docker engine at %s has no image %s: pull it there (docker pull %s), or load or build it, then prepare the version again", sandbox.ErrNoImage, e.opts.Host, ref, ref)
	}
	if err != nil {
		return "", fmt.Errorf("docker: reading image %s: %w", ref, err)
	}
	return img.ID, nil
}
