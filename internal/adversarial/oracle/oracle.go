// Package oracle is the wire vocabulary of the adversarial research profile:
// the [Fixture] record each of its skills/list entries carries under
// [MetaKey], and the request key and header a tester names a rotation scope
// with. The profile's server (package adversarial) publishes them and the
// client that checks servers (package check) reads them; neither imports
// the other.
package oracle

// MetaKey is the _meta key of a skills/list entry under which the research
// profile publishes the entry's [Fixture]. It uses this project's own
// reverse-domain prefix, as the specification asks of third-party
// annotations.
const MetaKey = "io.github.skills-mcp/fixture"

// TesterMetaKey is the request _meta key (and TesterHeader the HTTP header)
// whose string value names a rotation scope chosen by the tester; see package adversarial.
const (
	TesterMetaKey = "io.github.skills-mcp/tester"
	TesterHeader  = "Skills-Mcp-Tester"
)

// Action is what a conformant host must do with a fixture.
type Action string

// Host actions, in the vocabulary of the threat model.
const (
	// Reject: refuse to install or load.
	Reject Action = "reject"
	// Gate: do not act without verification or the user's approval.
	Gate Action = "gate"
	// RePrompt: ask the user again.
	RePrompt Action = "re-prompt"
	// Sanitize: clear the dangerous bits and continue.
	Sanitize Action = "sanitize"
)

// Fixture documents one adversarial case and its oracle.
type Fixture struct {
	// ID names the case; fixture skills are named after it.
	ID string `json:"id"`
	// URI is where the violation is served: a SKILL.md, a directory, an
	// archive. Also lists further URIs of the same case (a pair, or the
	// carrier skill of an archive).
	URI  string   `json:"uri"`
	Also []string `json:"also,omitempty"`
	// Clause is the rule broken: stable-spec checklist ids (S# for
	// servers, H# for hosts), "deferred: …" for the archive draft, or
	// "not in spec: …" with the threat-model item.
	Clause string `json:"clause"`
	// Threat is the reviewer's threat-model item (Den A2…D7) when one
	// applies.
	Threat string `json:"threat,omitempty"`
	// Action is what a conformant host must do.
	Action Action `json:"action"`
	// Host says concretely what a conformant host does with the fixture.
	Host string `json:"host"`
	// Why explains the violation and why the action follows.
	Why string `json:"why"`
	// Deferred marks the archive cases of the superseded draft: no v1 host
	// ever unpacks them; they are served for legacy hosts through
	// skill://index.json.
	Deferred bool `json:"deferred,omitempty"`
	// DetectableByCheck reports whether `skills-mcp check` sees the
	// violation on the wire; Check and Expect then name the check and the
	// status it reports. HostOnlyReason says why check cannot see it
	// otherwise.
	DetectableByCheck bool   `json:"detectableByCheck"`
	Check             string `json:"check,omitempty"`
	Expect            string `json:"expect,omitempty"`
	HostOnlyReason    string `json:"hostOnlyReason,omitempty"`
}

// URIs returns URI followed by Also.
func (f Fixture) URIs() []string { return append([]string{f.URI}, f.Also...) }
