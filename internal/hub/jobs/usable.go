package jobs

import "github.com/skills-mcp/skills-mcp/internal/sandbox"

// Usable reports why jobs and preparations are refused here (no working
// backend, not started, closed), or nil when they can run. The admin API
// asks before it starts a preparation in the background.
func (s *Service) Usable() error { return s.usable() }

// Enforced returns what the backend enforces, as Start found it.
func (s *Service) Enforced() sandbox.Enforced {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enforced
}
