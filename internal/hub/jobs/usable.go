package jobs

import "github.com/skills-mcp/skills-mcp/internal/sandbox"

// Enforced returns what the backend enforces, as Start found it.
func (s *Service) Enforced() sandbox.Enforced {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enforced
}
