package jobs

import (
	"context"
	"fmt"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// imageResolver is a backend that runs images (the Docker engine): it
// resolves one of its images, by tag or id, to the image's id. Nothing is
// pulled: an image it lacks is an error naming it.
type imageResolver interface {
	ImageID(ctx context.Context, ref string) (string, error)
}

// runtimeImage is a runtime's default Docker image, as the seed suggests
// it, and where the runtime's interpreter is in that image.
type runtimeImage struct{ ref, interpreter string }

var defaultImages = map[store.Runtime]runtimeImage{
	store.RuntimePython: {"python:3.12-slim", "/usr/local/bin/python3"},
	store.RuntimeNode:   {"node:22-bookworm-slim", "/usr/local/bin/node"},
	store.RuntimeBash:   {"debian:bookworm-slim", "/usr/bin/bash"},
}

// DefaultImage is the Docker image a profile of runtime rt runs on when it
// names none and the hub was given no other (Options.DockerImage).
func DefaultImage(rt store.Runtime) string { return defaultImages[rt].ref }

// runsImages reports whether the backend runs images.
func (s *Service) runsImages() (imageResolver, bool) {
	r, ok := s.ex.(imageResolver)
	return r, ok
}

// usesDefaultImage reports whether p runs on its runtime's default image:
// it names none, the hub has no image of its own for such profiles, and
// the backend runs images.
func (s *Service) usesDefaultImage(p store.Profile) bool {
	_, ok := s.runsImages()
	return ok && p.Image == "" && s.opts.DockerImage == ""
}

// imageRef is the image a preparation of p runs on: the profile's, else
// the hub's (Options.DockerImage), else the runtime's default.
func (s *Service) imageRef(p store.Profile) string {
	switch {
	case p.Image != "":
		return p.Image
	case s.opts.DockerImage != "":
		return s.opts.DockerImage
	}
	return DefaultImage(p.Runtime)
}

// pinImage resolves the image a preparation of p runs on to its id, which
// the preparation records and every run of the profile uses until it is
// prepared again: a tag moved since never changes a prepared profile. ""
// on a backend that runs no images.
func (s *Service) pinImage(ctx context.Context, p store.Profile) (string, error) {
	r, ok := s.runsImages()
	if !ok {
		return "", nil
	}
	ref := s.imageRef(p)
	id, err := r.ImageID(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("the profile's image %s: %w", ref, err)
	}
	return id, nil
}

// runImage is the image a run of p uses: the id its preparation pinned.
// A profile prepared on a backend that runs no images has none, and must
// be prepared again on this one.
func (s *Service) runImage(p store.Profile) (string, error) {
	if _, ok := s.runsImages(); !ok {
		return "", nil
	}
	if p.ImageID == "" {
		return "", fmt.Errorf("the version was prepared without a Docker image (on another sandbox backend, or before images were pinned): an administrator prepares it again, which pins the image %s", s.imageRef(p))
	}
	return p.ImageID, nil
}
