package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/moby/moby/client"

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

// ImportImage makes an image from a root file system tar (no registry
// needed) and tags it ref ("name:tag"). It returns the image's id, the
// immutable identity a prepared profile records.
func (e *Executor) ImportImage(ctx context.Context, rootfs io.Reader, ref string) (string, error) {
	resp, err := e.cli.ImageImport(ctx, client.ImageImportSource{Source: rootfs, SourceName: "-"}, ref, client.ImageImportOptions{})
	if err != nil {
		return "", fmt.Errorf("docker: importing image %s: %w", ref, err)
	}
	defer resp.Close()
	// The engine answers with a stream of JSON messages; a failure may
	// arrive as one of them after a 200.
	dec := json.NewDecoder(resp)
	for {
		var msg struct {
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", fmt.Errorf("docker: importing image %s: reading the engine's answer: %w", ref, err)
		}
		if msg.Error != "" || msg.ErrorDetail.Message != "" {
			return "", fmt.Errorf("docker: importing image %s: %s", ref, msg.Error+msg.ErrorDetail.Message)
		}
	}
	img, err := e.cli.ImageInspect(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("docker: importing image %s: the image is not there afterwards: %w", ref, err)
	}
	return img.ID, nil
}
