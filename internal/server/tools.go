package server

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// Tool limits, clamped server-side whatever the schema says.
const (
	defaultSearchLimit = 10
	maxSearchLimit     = 50
	defaultListLimit   = 50
	maxListLimit       = 200
)

// toolError is a tool failure the agent can act on: it becomes a result
// with isError and this text.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func toolErrorf(format string, args ...any) error {
	return &toolError{msg: fmt.Sprintf(format, args...)}
}

// resolveErr turns a failed name resolution into advice.
func resolveErr(err error) error {
	var re *catalog.ResolveError
	if errors.As(err, &re) {
		if len(re.Candidates) > 0 {
			return toolErrorf("%q is ambiguous; call again with one of these paths: %s", re.Ref, strings.Join(re.Candidates, ", "))
		}
		return toolErrorf("no skill %q is served; call the search tool with what you need, or list the skills", re.Ref)
	}
	return err
}

func (s *server) tool(name string) string { return s.opts.Prefix + "_" + name }

// readOnly marks every tool: none changes anything.
var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}

func (s *server) addTools(ms *mcp.Server) {
	mcp.AddTool(ms, &mcp.Tool{
		Name:        s.tool("search_skills"),
		Title:       "Search skills",
		Description: "Find the skills that fit a task. Describe the need in plain words; results are ranked, with each skill's path. Then call " + s.tool("get_skill") + " with the path of the one to use.",
		Annotations: readOnly,
	}, s.searchSkills)
	mcp.AddTool(ms, &mcp.Tool{
		Name:        s.tool("list_skills"),
		Title:       "List skills",
		Description: "List the served skills, optionally of one library or category, in pages. Prefer " + s.tool("search_skills") + " to find a skill for a task.",
		Annotations: readOnly,
	}, s.listSkillsTool)
	mcp.AddTool(ms, &mcp.Tool{
		Name:        s.tool("get_skill"),
		Title:       "Get a skill",
		Description: "Load one skill: its instructions (the SKILL.md body), its files with digests, its runtime dependencies and, when it bundles scripts, how to run them safely. Accepts a skill path, a skill:// URI, a unique name or library/name.",
		Annotations: readOnly,
	}, s.getSkillTool)
	mcp.AddTool(ms, &mcp.Tool{
		Name:        s.tool("read_skill_file"),
		Title:       "Read a skill file",
		Description: "Read one file of a skill by its path relative to the skill folder (as listed by " + s.tool("get_skill") + "). Text comes back as text, anything else as base64.",
		Annotations: readOnly,
	}, s.readSkillFile)
	mcp.AddTool(ms, &mcp.Tool{
		Name:        s.tool("list_libraries"),
		Title:       "List libraries",
		Description: "List the skill libraries this server serves, with their skill counts.",
		Annotations: readOnly,
	}, s.listLibraries)
	mcp.AddTool(ms, &mcp.Tool{
		Name:        s.tool("list_categories"),
		Title:       "List categories",
		Description: "List skill categories with the number of skills in each, optionally for one library.",
		Annotations: readOnly,
	}, s.listCategories)
	mcp.AddTool(ms, &mcp.Tool{
		Name:        s.tool("catalog_status"),
		Title:       "Catalog status",
		Description: "Report what the server serves and what it withheld and why (set include_warnings).",
		Annotations: readOnly,
	}, s.catalogStatus)
}

// textResult renders a human-readable text next to the structured content.
func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// SkillSummary is a skill in search and list results.
type SkillSummary struct {
	Name        string   `json:"name"`
	Path        string   `json:"path" jsonschema:"the skill path: pass it to get_skill"`
	Library     string   `json:"library,omitempty"`
	Description string   `json:"description"`
	Category    string   `json:"category"`
	URI         string   `json:"uri"`
	Files       int      `json:"files"`
	Tags        []string `json:"tags,omitempty"`
	RiskFlags   []string `json:"riskFlags,omitempty" jsonschema:"risk rules the skill's files trigger: review before running anything"`
}

func summary(sk *catalog.Skill) SkillSummary {
	return SkillSummary{
		Name: sk.Name, Path: sk.Path, Library: sk.Library, Description: sk.Description,
		Category: sk.Category, URI: sk.URI, Files: len(sk.Files), Tags: sk.Tags, RiskFlags: sk.RiskFlags(),
	}
}

// SearchIn are the search tool's arguments.
type SearchIn struct {
	Query    string `json:"query" jsonschema:"what you need, in plain words"`
	Library  string `json:"library,omitempty" jsonschema:"only skills of this library (namespace)"`
	Category string `json:"category,omitempty" jsonschema:"only skills of this category"`
	Limit    int    `json:"limit,omitempty" jsonschema:"how many results (default 10, at most 50)"`
}

// SearchResult is one ranked skill.
type SearchResult struct {
	SkillSummary
	Score   float64  `json:"score"`
	Matched []string `json:"matched" jsonschema:"the fields the query matched"`
}

// SearchOut is the search tool's result.
type SearchOut struct {
	Results []SearchResult `json:"results"`
	Hint    string         `json:"hint,omitempty"`
}

func (s *server) searchSkills(_ context.Context, _ *mcp.CallToolRequest, in SearchIn) (*mcp.CallToolResult, SearchOut, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, SearchOut{}, toolErrorf("query is empty: describe what you need, e.g. \"review a pull request\"")
	}
	snap := s.store.Snapshot()
	if in.Library != "" && !snap.HasLibrary(in.Library) {
		return nil, SearchOut{}, toolErrorf("no library %q is served; %s lists them", in.Library, s.tool("list_libraries"))
	}
	limit := clamp(in.Limit, defaultSearchLimit, maxSearchLimit)
	hits := snap.Search(in.Query, in.Library, in.Category, limit)
	out := SearchOut{Results: make([]SearchResult, len(hits))}
	var b strings.Builder
	for i, h := range hits {
		out.Results[i] = SearchResult{SkillSummary: summary(h.Skill), Score: round2(h.Score), Matched: h.Matched}
		fmt.Fprintf(&b, "%d. %s [%s] %.2f — %s\n", i+1, h.Skill.Path, h.Skill.Category, h.Score, oneLine(h.Skill.Description, 160))
		if flags := h.Skill.RiskFlags(); len(flags) > 0 {
			fmt.Fprintf(&b, "   ⚠ risk flags: %s\n", strings.Join(flags, ", "))
		}
	}
	if len(hits) == 0 {
		out.Hint = "No skill matched. Try other words for the task, drop filters, or list the categories."
		b.WriteString(out.Hint + "\n")
	} else {
		out.Hint = "Call " + s.tool("get_skill") + " with the path of the skill to use."
		b.WriteString("\n" + out.Hint + "\n")
	}
	return textResult(b.String()), out, nil
}

// ListIn are the list tool's arguments.
type ListIn struct {
	Library  string `json:"library,omitempty" jsonschema:"only skills of this library (namespace)"`
	Category string `json:"category,omitempty" jsonschema:"only skills of this category"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page"`
	Limit    int    `json:"limit,omitempty" jsonschema:"page size (default 50, at most 200)"`
}

// ListOut is the list tool's result.
type ListOut struct {
	Total      int            `json:"total"`
	Skills     []SkillSummary `json:"skills"`
	NextCursor string         `json:"nextCursor,omitempty"`
}

func (s *server) listSkillsTool(_ context.Context, _ *mcp.CallToolRequest, in ListIn) (*mcp.CallToolResult, ListOut, error) {
	snap := s.store.Snapshot()
	if in.Library != "" && !snap.HasLibrary(in.Library) {
		return nil, ListOut{}, toolErrorf("no library %q is served; %s lists them", in.Library, s.tool("list_libraries"))
	}
	key, err := skillsext.DecodeCursor(in.Cursor)
	if err != nil {
		return nil, ListOut{}, toolErrorf("cursor is not one this server issued; call again without it")
	}
	limit := clamp(in.Limit, defaultListLimit, maxListLimit)
	out := ListOut{Skills: []SkillSummary{}}
	var b strings.Builder
	for _, sk := range snap.Skills() {
		if (in.Library != "" && sk.Library != in.Library) || (in.Category != "" && !strings.EqualFold(sk.Category, in.Category)) {
			continue
		}
		out.Total++
		if sk.URI <= key {
			continue
		}
		if len(out.Skills) == limit {
			if out.NextCursor == "" {
				out.NextCursor = skillsext.EncodeCursor(out.Skills[len(out.Skills)-1].URI)
			}
			continue
		}
		out.Skills = append(out.Skills, summary(sk))
		fmt.Fprintf(&b, "- %s [%s] — %s", sk.Path, sk.Category, oneLine(sk.Description, 120))
		if flags := sk.RiskFlags(); len(flags) > 0 {
			fmt.Fprintf(&b, " ⚠ %s", strings.Join(flags, ", "))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n%d of %d skills", len(out.Skills), out.Total)
	if out.NextCursor != "" {
		b.WriteString("; more with cursor " + out.NextCursor)
	}
	return textResult(b.String()), out, nil
}

// GetIn are the get_skill tool's arguments.
type GetIn struct {
	Name               string `json:"name" jsonschema:"a skill path, skill:// URI, unique name, or library/name"`
	IncludeFrontmatter bool   `json:"include_frontmatter,omitempty" jsonschema:"also return the full frontmatter"`
}

// FileInfo is one file of a skill.
type FileInfo struct {
	Path        string `json:"path" jsonschema:"relative to the skill folder"`
	URI         string `json:"uri"`
	Size        int64  `json:"size"`
	MIMEType    string `json:"mimeType"`
	Digest      string `json:"digest"`
	Interpreter string `json:"interpreter,omitempty" jsonschema:"for scripts: the command that runs it"`
	PEP723      bool   `json:"pep723,omitempty"`
}

// SkillDetail is the get_skill result.
type SkillDetail struct {
	SkillSummary
	Source              string          `json:"source" jsonschema:"the server and library the skill comes from"`
	Instructions        string          `json:"instructions" jsonschema:"the SKILL.md body"`
	Files               []FileInfo      `json:"files"`
	Dependencies        []string        `json:"dependencies" jsonschema:"skills this one runs code from (required runtime dependencies)"`
	OptionalDeps        []string        `json:"optionalDependencies,omitempty"`
	DependencyClosure   []string        `json:"dependencyClosure" jsonschema:"skill paths of all required dependencies, transitively"`
	MissingDependencies []string        `json:"missingDependencies,omitempty"`
	Setup               []string        `json:"setup,omitempty" jsonschema:"external tools or keys the skill needs (frontmatter requires); not skills"`
	Frontmatter         json.RawMessage `json:"frontmatter,omitempty"`
	ScriptGuidance      string          `json:"scriptGuidance,omitempty"`
	Risks               []Risk          `json:"risks,omitempty" jsonschema:"what the risk linter found, file by file; labels, not verdicts"`
}

// Risk is one risk-linter finding in a skill's files.
type Risk struct {
	Rule       string `json:"rule"`
	Severity   string `json:"severity"`
	File       string `json:"file"`
	Line       int    `json:"line,omitempty"`
	Message    string `json:"message"`
	Excerpt    string `json:"excerpt,omitempty"`
	Suppressed bool   `json:"suppressed,omitempty"`
}

func (s *server) getSkillTool(ctx context.Context, _ *mcp.CallToolRequest, in GetIn) (*mcp.CallToolResult, SkillDetail, error) {
	snap := s.store.Snapshot()
	sk, err := snap.Resolve(in.Name)
	if err != nil {
		return nil, SkillDetail{}, resolveErr(err)
	}
	hold, err := s.answers.hold(ctx, mdSize(snap, sk))
	if err != nil {
		return nil, SkillDetail{}, err
	}
	defer hold.release()
	body, err := sk.Body()
	if err != nil {
		s.log.Warn("reading a SKILL.md body", "skill", sk.Path, "err", err)
		return nil, SkillDetail{}, toolErrorf("%s cannot be read right now (it changed on the server); call %s again shortly", sk.Path, s.tool("get_skill"))
	}
	d := SkillDetail{
		SkillSummary:        summary(sk),
		Source:              s.source(snap, sk),
		Instructions:        body,
		Files:               fileInfos(sk),
		Dependencies:        orEmpty(sk.Dependencies.Required),
		OptionalDeps:        sk.Dependencies.Optional,
		DependencyClosure:   orEmpty(sk.Closure),
		MissingDependencies: sk.Missing,
		Setup:               sk.Setup,
	}
	if in.IncludeFrontmatter {
		d.Frontmatter = sk.Frontmatter
	}
	d.ScriptGuidance = s.scriptGuidance(snap, sk)
	for _, f := range sk.Risks {
		d.Risks = append(d.Risks, Risk{Rule: f.Rule, Severity: f.Severity.String(), File: f.Path, Line: f.Line,
			Message: f.Message, Excerpt: f.Excerpt, Suppressed: f.Suppressed})
	}

	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\nPath: %s\nSource: %s (MCP-served skill, not installed locally)\n", sk.Name, sk.Description, sk.Path, d.Source)
	if len(d.Dependencies) > 0 {
		fmt.Fprintf(&b, "Runtime dependencies: %s (closure: %s)\n", strings.Join(d.Dependencies, ", "), strings.Join(d.DependencyClosure, ", "))
	}
	if len(d.MissingDependencies) > 0 {
		fmt.Fprintf(&b, "⚠ Missing dependencies (not served here): %s\n", strings.Join(d.MissingDependencies, ", "))
	}
	if len(d.Setup) > 0 {
		fmt.Fprintf(&b, "Setup (external tools or keys, not skills): %s\n", strings.Join(d.Setup, ", "))
	}
	if len(d.RiskFlags) > 0 {
		fmt.Fprintf(&b, "\n⚠ Risk flags: %s. Review these before following the instructions or running anything:\n", strings.Join(d.RiskFlags, ", "))
		for _, r := range d.Risks {
			if r.Severity == "info" {
				continue
			}
			note := ""
			if r.Suppressed {
				note = " (marked lint-ignore by the author)"
			}
			fmt.Fprintf(&b, "  - %s %s:%d %s%s\n", r.Rule, r.File, r.Line, r.Message, note)
		}
	}
	b.WriteString("\n--- SKILL.md body ---\n")
	b.WriteString(body)
	if !strings.HasSuffix(body, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString("--- end of SKILL.md body ---\n\nFiles (read with " + s.tool("read_skill_file") + "):\n")
	for _, f := range d.Files {
		fmt.Fprintf(&b, "- %s (%d bytes, %s)", f.Path, f.Size, f.Digest)
		if f.Interpreter != "" {
			fmt.Fprintf(&b, " run with: %s", f.Interpreter)
		}
		b.WriteByte('\n')
	}
	if d.ScriptGuidance != "" {
		b.WriteString("\n" + d.ScriptGuidance)
	}
	hold.answer()
	return textResult(b.String()), d, nil
}

// source names where a skill comes from, never where it is on disk: the
// server, the library, and the library's title, source and version when
// the configuration gives them.
func (s *server) source(snap *catalog.Snapshot, sk *catalog.Skill) string {
	src := s.opts.Name
	if sk.Library != "" {
		src += " / library " + sk.Library
	}
	info := snap.LibraryInfo(sk.Library)
	var extra []string
	for _, v := range []string{info.Title, info.Source, info.Version} {
		if v != "" {
			extra = append(extra, v)
		}
	}
	if len(extra) > 0 {
		src += " (" + strings.Join(extra, ", ") + ")"
	}
	return src
}

func fileInfos(sk *catalog.Skill) []FileInfo {
	root := skillsext.RootURI(sk.Path)
	out := make([]FileInfo, len(sk.Files))
	for i, f := range sk.Files {
		rel, _ := skillsext.RelPath(f.URI, root)
		out[i] = FileInfo{Path: rel, URI: f.URI, Size: f.Size, MIMEType: f.MIMEType, Digest: f.Digest.String()}
		if f.Script != nil {
			out[i].Interpreter, out[i].PEP723 = f.Script.Interpreter, f.Script.PEP723
		}
	}
	return out
}

// ReadIn are the read_skill_file tool's arguments.
type ReadIn struct {
	Name string `json:"name" jsonschema:"the skill: a path, skill:// URI, unique name, or library/name"`
	Path string `json:"path" jsonschema:"the file, relative to the skill folder, e.g. references/guide.md"`
}

// ReadOut is the read_skill_file result.
type ReadOut struct {
	FileInfo
	Text   *string `json:"text,omitempty"`
	Base64 *string `json:"base64,omitempty"`
	Note   string  `json:"note,omitempty"`
}

func (s *server) readSkillFile(ctx context.Context, _ *mcp.CallToolRequest, in ReadIn) (*mcp.CallToolResult, ReadOut, error) {
	snap := s.store.Snapshot()
	sk, err := snap.Resolve(in.Name)
	if err != nil {
		return nil, ReadOut{}, resolveErr(err)
	}
	rel := strings.TrimLeft(strings.ReplaceAll(in.Path, "\\", "/"), "/")
	if rel == "" {
		return nil, ReadOut{}, toolErrorf("path is empty; give a file path relative to the skill folder, such as SKILL.md")
	}
	for seg := range strings.SplitSeq(rel, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return nil, ReadOut{}, toolErrorf("path %q must be relative to the skill folder without . or .. segments", in.Path)
		}
	}
	uri := skillsext.FileURI(sk.Path, rel)
	infos := fileInfos(sk)
	i := slices.IndexFunc(infos, func(fi FileInfo) bool { return fi.URI == uri })
	if i < 0 {
		avail := make([]string, len(infos))
		for j, fi := range infos {
			avail[j] = fi.Path
		}
		return nil, ReadOut{}, toolErrorf("%s has no file %q; its files are: %s", sk.Path, rel, strings.Join(avail, ", "))
	}
	info, file := infos[i], sk.Files[i]
	hold, err := s.answers.hold(ctx, file.Size)
	if err != nil {
		return nil, ReadOut{}, err
	}
	defer hold.release()
	data, err := file.ReadFile()
	if err != nil {
		s.log.Warn("reading skill file", "uri", uri, "err", err)
		return nil, ReadOut{}, toolErrorf("%s cannot be read right now (it changed on the server); call %s again", rel, s.tool("get_skill"))
	}
	out := ReadOut{FileInfo: info}
	var text string
	if file.Text {
		t := string(data)
		out.Text = &t
		text = t
	} else {
		b := base64.StdEncoding.EncodeToString(data)
		out.Base64 = &b
		text = fmt.Sprintf("%s is binary (%s, %d bytes); its base64 content is in the structured result.", rel, file.MIMEType, file.Size)
	}
	switch {
	case file.Script != nil && file.Script.Interpreter != "":
		out.Note = fmt.Sprintf("This is a script from an MCP-served skill. Do not run it without the user's explicit approval; "+
			"run it only from a verified local copy of the skill (digest %s), with: %s %s", file.Digest, file.Script.Interpreter, rel)
		text = out.Note + "\n\n" + text
	case file.Script != nil:
		out.Note = fmt.Sprintf("This is an executable (%s) from an MCP-served skill. Do not run it without the user's explicit approval; "+
			"run it only from a verified local copy of the skill (digest %s).", file.Script.Kind(), file.Digest)
		text = out.Note + "\n\n" + text
	}
	hold.answer()
	return textResult(text), out, nil
}

// LibraryInfo describes a served library, never its location.
type LibraryInfo struct {
	Namespace       string            `json:"namespace"`
	Kind            string            `json:"kind" jsonschema:"directory, archive, url or embedded"`
	Title           string            `json:"title,omitempty"`
	Source          string            `json:"source,omitempty"`
	Version         string            `json:"version,omitempty"`
	Metadata        map[string]string `json:"metadata,omitempty"`
	Digest          string            `json:"digest,omitempty" jsonschema:"sha256 of the archive the library was extracted from"`
	Skills          int               `json:"skills"`
	Hidden          int               `json:"hidden"`
	Withheld        int               `json:"withheld"`
	ScriptsWithheld int               `json:"scriptsWithheld"`
	// Vault reports whether the library has a vault; the fields after it
	// count what the vault serves.
	Vault             bool   `json:"vault"`
	Playbooks         int    `json:"playbooks"`
	PlaybooksHidden   int    `json:"playbooksHidden" jsonschema:"playbooks not served: not active, or no playbook-runner skill"`
	PlaybooksPrivate  int    `json:"playbooksPrivate" jsonschema:"notes in the vault's private playbook folders, never served"`
	PlaybookRunner    string `json:"playbookRunner,omitempty"`
	ValueChains       int    `json:"valueChains"`
	ValueChainBuckets int    `json:"valueChainBuckets"`
	ValueChainSource  string `json:"valueChainSource,omitempty" jsonschema:"definition, index or derived"`
}

// LibrariesOut is the list_libraries result.
type LibrariesOut struct {
	Libraries []LibraryInfo `json:"libraries"`
}

func (s *server) listLibraries(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, LibrariesOut, error) {
	out := LibrariesOut{Libraries: libraryInfos(s.store.Snapshot())}
	var b strings.Builder
	for _, l := range out.Libraries {
		fmt.Fprintf(&b, "- %s (%s)", cmp.Or(l.Namespace, "(no namespace)"), l.Kind)
		for _, kv := range [][2]string{{"title", l.Title}, {"source", l.Source}, {"version", l.Version}, {"sha256", l.Digest}} {
			if kv[1] != "" {
				fmt.Fprintf(&b, " %s: %s;", kv[0], kv[1])
			}
		}
		for _, k := range slices.Sorted(maps.Keys(l.Metadata)) {
			fmt.Fprintf(&b, " %s: %s;", k, l.Metadata[k])
		}
		fmt.Fprintf(&b, " %d skills, %d hidden, %d withheld", l.Skills, l.Hidden, l.Withheld)
		if l.Vault {
			fmt.Fprintf(&b, "; vault: %d playbooks (%d hidden, %d private), %d value chains", l.Playbooks, l.PlaybooksHidden, l.PlaybooksPrivate, l.ValueChains)
			if l.ValueChainSource != "" {
				fmt.Fprintf(&b, " (%s)", l.ValueChainSource)
			}
		}
		b.WriteByte('\n')
	}
	return textResult(b.String()), out, nil
}

func libraryInfos(snap *catalog.Snapshot) []LibraryInfo {
	st := snap.Stats()
	out := make([]LibraryInfo, len(st.Libraries))
	for i, l := range st.Libraries {
		out[i] = LibraryInfo{
			Namespace: l.Namespace, Kind: l.Kind, Title: l.Info.Title, Source: l.Info.Source, Version: l.Info.Version,
			Metadata: l.Info.Metadata, Digest: l.Info.Digest,
			Skills: l.Skills, Hidden: l.Hidden, Withheld: l.Withheld, ScriptsWithheld: l.ScriptsWithheld,
			Vault: l.Vault, Playbooks: l.Playbooks, PlaybooksHidden: l.PlaybooksHidden, PlaybooksPrivate: l.PlaybooksPrivate,
			PlaybookRunner: l.PlaybookRunner, ValueChains: l.ValueChains, ValueChainBuckets: l.ValueChainBuckets,
			ValueChainSource: l.ValueChainSource,
		}
	}
	return out
}

// CategoriesIn are the list_categories tool's arguments.
type CategoriesIn struct {
	Library string `json:"library,omitempty" jsonschema:"only this library (namespace)"`
}

// CategoriesOut is the list_categories result.
type CategoriesOut struct {
	Categories  map[string]int `json:"categories"`
	TotalSkills int            `json:"totalSkills"`
}

func (s *server) listCategories(_ context.Context, _ *mcp.CallToolRequest, in CategoriesIn) (*mcp.CallToolResult, CategoriesOut, error) {
	snap := s.store.Snapshot()
	if in.Library != "" && !snap.HasLibrary(in.Library) {
		return nil, CategoriesOut{}, toolErrorf("no library %q is served; %s lists them", in.Library, s.tool("list_libraries"))
	}
	out := CategoriesOut{Categories: map[string]int{}}
	for _, sk := range snap.Skills() {
		if in.Library == "" || sk.Library == in.Library {
			out.Categories[sk.Category]++
			out.TotalSkills++
		}
	}
	names := slices.SortedFunc(maps.Keys(out.Categories), func(a, b string) int {
		return cmp.Or(cmp.Compare(out.Categories[b], out.Categories[a]), cmp.Compare(a, b))
	})
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "- %s: %d\n", n, out.Categories[n])
	}
	fmt.Fprintf(&b, "%d skills\n", out.TotalSkills)
	return textResult(b.String()), out, nil
}

// StatusIn are the catalog_status tool's arguments.
type StatusIn struct {
	IncludeWarnings bool `json:"include_warnings,omitempty" jsonschema:"also list every warning"`
}

// StatusOut is the catalog_status result.
type StatusOut struct {
	Libraries     []LibraryInfo  `json:"libraries"`
	Skills        int            `json:"skills"`
	Withheld      int            `json:"withheld"`
	Files         int            `json:"files"`
	Bytes         int64          `json:"bytes"`
	Categories    int            `json:"categories"`
	FlaggedSkills int            `json:"flaggedSkills" jsonschema:"listed skills with risk flags"`
	Hidden        int            `json:"hidden"`
	Playbooks     int            `json:"playbooks"`
	ValueChains   int            `json:"valueChains"`
	WarningCount  int            `json:"warningCount"`
	ByReason      map[string]int `json:"warningsByReason"`
	Warnings      []string       `json:"warnings,omitempty"`
	ScannedAt     string         `json:"scannedAt"`
	ScanMs        float64        `json:"scanMs"`
	Generation    uint64         `json:"generation"`
}

func (s *server) catalogStatus(_ context.Context, _ *mcp.CallToolRequest, in StatusIn) (*mcp.CallToolResult, StatusOut, error) {
	snap := s.store.Snapshot()
	st := snap.Stats()
	cats := map[string]bool{}
	for _, sk := range snap.Skills() {
		cats[sk.Category] = true
	}
	out := StatusOut{
		Libraries: libraryInfos(snap), Skills: st.Skills, Withheld: st.Withheld, Files: st.Files, Bytes: st.Bytes,
		Categories: len(cats), FlaggedSkills: st.FlaggedSkills, Hidden: st.Hidden, Playbooks: st.Playbooks, ValueChains: st.ValueChains, WarningCount: len(st.Warnings), ByReason: st.ByReason,
		ScannedAt: snap.ScannedAt.UTC().Format("2006-01-02T15:04:05Z"), ScanMs: st.ScanMillis, Generation: st.Generation,
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d skills served (%d files, %d bytes), %d hidden, %d withheld, %d flagged by the risk linter, %d warnings; scanned in %.1f ms\n",
		out.Skills, out.Files, out.Bytes, out.Hidden, out.Withheld, out.FlaggedSkills, out.WarningCount, out.ScanMs)
	if out.Playbooks+out.ValueChains > 0 {
		fmt.Fprintf(&b, "Vaults: %d playbooks, %d value chains\n", out.Playbooks, out.ValueChains)
	}
	if in.IncludeWarnings {
		out.Warnings = []string{}
		for _, w := range snap.Warnings() {
			out.Warnings = append(out.Warnings, w.String())
			b.WriteString("- " + w.String() + "\n")
		}
	} else if out.WarningCount > 0 {
		b.WriteString("Call again with include_warnings=true to see the warnings.\n")
	}
	return textResult(b.String()), out, nil
}

func clamp(v, def, hi int) int {
	if v <= 0 {
		return def
	}
	return min(v, hi)
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// oneLine shortens s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
