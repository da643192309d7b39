package search

import "strings"

// Limits of the usage passages.
const (
	// maxUsageSection bounds what one section adds: the opening of an
	// overview says what the skill is for, its tail is detail.
	maxUsageSection = 1 << 10
	// maxUsageBytes bounds the passages of one body.
	maxUsageBytes = 3 << 10
	// maxUsageScan is how much of a body is looked through for them:
	// they open a SKILL.md, and a long body's procedure need not be read
	// twice while an index builds.
	maxUsageScan = 16 << 10
)

// usageHeadings are the (folded) openings of the headings whose
// sections say what a skill is for or when to use it. "When not to use"
// is left out on purpose: its words name what the skill is not.
var usageHeadings = []string{
	"overview", "when to use", "when to apply", "when to invoke", "when to reach",
	"use this skill when", "use cases", "common use cases", "purpose", "summary",
	"core capabilities", "capabilities", "what this skill does", "what it does",
	"introduction", "about",
}

// usagePassages returns the passages of a SKILL.md body that say when to
// use the skill: the text before the first heading below the title, the
// sections under the headings in usageHeadings, and every line that
// opens with "Use when" or "Use this skill when". Authors write these for
// the reader choosing a skill, so their words are closer to a request's
// than the procedure's are; the index weighs them above the rest of the
// body.
func usagePassages(body string) []string {
	var out []string
	total := 0
	keep := func(s string, limit int) {
		s = truncate(strings.TrimSpace(s), min(limit, maxUsageBytes-total))
		if s != "" {
			out = append(out, s)
			total += len(s)
		}
	}
	section := strings.Builder{}
	inUsage, beforeHeading, inFence := false, true, false
	flush := func() {
		if inUsage || beforeHeading {
			keep(section.String(), maxUsageSection)
		}
		section.Reset()
	}
	for line := range strings.Lines(truncate(body, maxUsageScan)) {
		if total >= maxUsageBytes {
			break
		}
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if level, title, ok := heading(trimmed); ok {
			if level == 1 && beforeHeading && section.Len() == 0 {
				continue // the title; the text under it is the opening
			}
			flush()
			beforeHeading = false
			inUsage = isUsageHeading(title)
			continue
		}
		if !inUsage && (hasFoldedPrefix(trimmed, "use when") || hasFoldedPrefix(trimmed, "use this skill when")) {
			keep(trimmed, maxUsageSection)
			continue
		}
		if (inUsage || beforeHeading) && section.Len() < maxUsageSection {
			section.WriteString(line)
		}
	}
	flush()
	return out
}

// heading parses a Markdown ATX heading.
func heading(line string) (level int, title string, ok bool) {
	for level < len(line) && line[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || level < len(line) && line[level] != ' ' {
		return 0, "", false
	}
	return level, strings.TrimSpace(line[level:]), true
}

func isUsageHeading(title string) bool {
	title = strings.TrimLeft(title, " *_:0123456789.")
	for _, h := range usageHeadings {
		if hasFoldedPrefix(title, h) {
			return true
		}
	}
	return false
}

// hasFoldedPrefix reports whether s opens with the lowercase ASCII
// prefix, ignoring ASCII case.
func hasFoldedPrefix(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
