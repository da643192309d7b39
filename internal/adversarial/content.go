package adversarial

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/skills-mcp/skills-mcp/internal/adversarial/oracle"
	"hash"
	"strconv"
	"strings"
	"sync"
)

// content is the bytes of one served file: either data, or a large file
// generated as head + fill repeated + tail, so that multi-megabyte
// fixtures cost no memory until they are read. Its digest is computed once,
// on first use.
type content struct {
	data       []byte
	head, tail []byte
	fill       byte
	size       int64

	once   sync.Once
	digest string
}

// text returns a content holding s.
func text(s string) *content { return &content{data: []byte(s), size: int64(len(s))} }

// filled returns a content of exactly size bytes: head, fill bytes, tail.
func filled(head string, fill byte, tail string, size int64) *content {
	if int64(len(head)+len(tail)) > size {
		panic("adversarial: filled content smaller than its head and tail")
	}
	return &content{head: []byte(head), tail: []byte(tail), fill: fill, size: size}
}

// fillChunk is the unit in which filled content is written and hashed.
const fillChunk = 1 << 20

// bytes returns the content. For generated content it allocates it.
func (c *content) bytes() []byte {
	if c.data != nil {
		return c.data
	}
	b := make([]byte, 0, c.size)
	b = append(b, c.head...)
	b = append(b, bytes.Repeat([]byte{c.fill}, int(c.size)-len(c.head)-len(c.tail))...)
	return append(b, c.tail...)
}

// writeTo writes the content to h without materialising it.
func (c *content) writeTo(h hash.Hash) {
	if c.data != nil {
		h.Write(c.data)
		return
	}
	h.Write(c.head)
	chunk := bytes.Repeat([]byte{c.fill}, fillChunk)
	for n := c.size - int64(len(c.head)+len(c.tail)); n > 0; n -= fillChunk {
		h.Write(chunk[:min(n, fillChunk)])
	}
	h.Write(c.tail)
}

// sum returns "sha256:" and the hex digest of the content.
func (c *content) sum() string {
	c.once.Do(func() {
		h := sha256.New()
		c.writeTo(h)
		c.digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	})
	return c.digest
}

// skillMD writes a SKILL.md: frontmatter with name, description and the
// extra YAML lines given, then the body. Descriptions are double-quoted so
// that no character in them changes the YAML.
func skillMD(name, description, extra, body string) string {
	var b strings.Builder
	b.WriteString("---\nname: " + name + "\ndescription: " + strconv.Quote(description) + "\n")
	b.WriteString(extra)
	b.WriteString("---\n\n")
	b.WriteString(body)
	return b.String()
}

// notice is the paragraph every fixture SKILL.md opens its body with.
func notice(id string) string {
	return fmt.Sprintf("> Fixture %s of the skills-mcp adversarial research profile. It is benign: at worst it prints the canary %s%s "+
		"or writes it to %s. See the fixture's _meta[%q] for what a conformant host must do.\n\n", id, Canary, id, MarkerFile, oracle.MetaKey)
}

// canaryCommand is the benign payload a fixture asks an agent to run.
func canaryCommand(id string) string {
	return fmt.Sprintf("echo %s%s > %s", Canary, id, MarkerFile)
}
