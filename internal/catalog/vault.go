package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/skills-mcp/skills-mcp/internal/vault"
)

// Vault is one library's vault as a snapshot serves it: its playbooks and
// value chains.
type Vault struct {
	*vault.Library
	// Namespace is the library's.
	Namespace string

	root        *Library // the vault root, to read attachments from
	fingerprint string
}

// VaultResource is what a playbook:// or value-chain:// URI names.
type VaultResource struct {
	Vault *Vault
	// Exactly one of these is set.
	Playbook   *vault.Playbook
	Attachment *vault.Attachment
	Chain      *vault.Chain
}

// Vaults returns the vaults of the snapshot's libraries, in library order.
func (s *Snapshot) Vaults() []*Vault { return s.vaults }

// Playbooks reports whether any library serves a playbook.
func (s *Snapshot) Playbooks() bool {
	for _, v := range s.vaults {
		if len(v.Playbooks) > 0 {
			return true
		}
	}
	return false
}

// ValueChains reports whether any library serves a value chain.
func (s *Snapshot) ValueChains() bool {
	for _, v := range s.vaults {
		if len(v.Chains) > 0 {
			return true
		}
	}
	return false
}

// VaultResource returns what a playbook:// or value-chain:// URI names.
func (s *Snapshot) VaultResource(uri string) (VaultResource, bool) {
	u, err := vault.ParseURI(uri)
	if err != nil {
		return VaultResource{}, false
	}
	var canonical string
	seg := u.Segments
	// The namespace segment is there only when the library has one; try
	// both readings and let the index decide.
	for _, ns := range []bool{true, false} {
		rest, ns0 := seg, ""
		if ns {
			if len(seg) < 2 {
				continue
			}
			ns0, rest = seg[0], seg[1:]
		}
		switch {
		case u.Scheme == vault.ChainScheme && len(rest) == 1:
			canonical = vault.ChainURI(ns0, rest[0])
		case u.Scheme == vault.PlaybookScheme && len(rest) == 1:
			canonical = vault.PlaybookURI(ns0, rest[0], "")
		case u.Scheme == vault.PlaybookScheme && len(rest) == 2:
			canonical = vault.PlaybookURI(ns0, rest[0], rest[1])
		default:
			continue
		}
		if r, ok := s.vaultURIs[canonical]; ok {
			return r, true
		}
	}
	return VaultResource{}, false
}

// ReadAttachment returns the content of a playbook attachment, verified
// against the digest the snapshot published.
func (v *Vault) ReadAttachment(a *vault.Attachment) ([]byte, error) { return ReadAttachment(v.root, a) }

// ReadAttachment reads the attachment a from the vault root, verified
// against the size and digest vault.Load recorded (ErrChanged if they no
// longer hold).
func ReadAttachment(root *Library, a *vault.Attachment) ([]byte, error) {
	r, err := root.FS.Open(a.Path)
	return readVerified(r, err, "attachment "+a.Name, a.Size, a.Digest)
}

// AttachmentMimeType returns the media type an attachment is served with.
func AttachmentMimeType(a *vault.Attachment) string { return mimeType(a.Name, a.Text) }

// buildVaults reads the vault of every library that has one and joins it
// with the skills the snapshot serves.
func (snap *Snapshot) buildVaults(libs []*Library, o Options, st *scanState) {
	if o.NoPlaybooks && o.NoValueChains {
		return
	}
	// A library's playbooks run on its own playbook-runner, else on the
	// first one any library serves.
	runners := map[string]string{}
	anyRunner := ""
	for _, sk := range snap.all {
		if sk.Name == vault.RunnerName {
			if _, ok := runners[sk.Library]; !ok {
				runners[sk.Library] = sk.Path
			}
		}
	}
	for _, lib := range libs {
		if r, ok := runners[lib.Namespace]; ok {
			anyRunner = r
			break
		}
	}
	snap.vaultURIs = map[string]VaultResource{}
	for _, lib := range libs {
		if !lib.isVault() {
			continue
		}
		root := lib.Vault
		raw := vault.Load(root.FS, vault.Options{
			Playbooks:    !o.NoPlaybooks,
			ValueChains:  !o.NoValueChains,
			SkillsDir:    lib.VaultSkills,
			MaxFileBytes: o.MaxFileBytes,
			NoScripts:    o.NoScripts || lib.NoScripts,
			OnFolder: func(dir string) {
				st.walked[root] = append(st.walked[root], dir)
				if o.OnFolder != nil {
					o.OnFolder(root, dir)
				}
			},
		})
		var refs []vault.SkillRef
		for _, sk := range snap.all {
			if sk.Library != lib.Namespace {
				continue
			}
			refs = append(refs, vault.SkillRef{Name: sk.Name, Path: sk.Path, Chains: sk.ValueChains, Stage: sk.ChainStage})
		}
		runner := runners[lib.Namespace]
		if runner == "" {
			runner = anyRunner
		}
		v := &Vault{
			Library:   vault.Build(raw, refs, vault.BuildOptions{Runner: runner, ShowDisabled: o.ShowDisabled}),
			Namespace: lib.Namespace,
			root:      root,
		}
		v.fingerprint = v.fingerprintOf()
		snap.vaults = append(snap.vaults, v)
		for _, w := range v.Warnings {
			snap.warnings = append(snap.warnings, Warning{Library: lib.Namespace, Path: w.Path, Reason: w.Reason, Message: w.Message})
		}
		for _, pb := range v.Playbooks {
			snap.vaultURIs[vault.PlaybookURI(lib.Namespace, pb.Name, "")] = VaultResource{Vault: v, Playbook: pb}
			for _, a := range pb.Note.Attachments {
				snap.vaultURIs[vault.PlaybookURI(lib.Namespace, pb.Name, a.Name)] = VaultResource{Vault: v, Playbook: pb, Attachment: a}
			}
		}
		for i := range v.Chains {
			snap.vaultURIs[vault.ChainURI(lib.Namespace, v.Chains[i].ID)] = VaultResource{Vault: v, Chain: &v.Chains[i]}
		}
		for i := range snap.libraries {
			if st := &snap.libraries[i]; st.Namespace == lib.Namespace {
				st.Vault = true
				st.Playbooks = len(v.Playbooks)
				st.PlaybooksHidden = v.Hidden
				st.PlaybooksPrivate = v.Private
				st.PlaybookRunner = v.Runner
				st.ValueChains = len(v.Chains)
				st.ValueChainBuckets = v.Buckets()
				st.ValueChainSource = v.ChainSource
			}
		}
	}
}

// fingerprintOf sums up everything a client can see of the vault, so that
// a rescan can tell whether it changed.
func (v *Vault) fingerprintOf() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00%s\x00", v.Runner, v.Hidden, v.Private, v.ChainSource)
	for _, pb := range v.Playbooks {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", pb.Name, pb.VaultPath, pb.Note.Text)
		for _, a := range pb.Note.Attachments {
			fmt.Fprintf(h, "%s\x00%s\x00", a.Name, a.Digest)
		}
	}
	chains, _ := json.Marshal(v.Chains)
	h.Write(chains)
	return hex.EncodeToString(h.Sum(nil))
}

// sameVaults reports whether two snapshots serve the same vault content.
func sameVaults(a, b *Snapshot) bool {
	if len(a.vaults) != len(b.vaults) {
		return false
	}
	for i, v := range a.vaults {
		if v.Namespace != b.vaults[i].Namespace || v.fingerprint != b.vaults[i].fingerprint {
			return false
		}
	}
	return true
}
