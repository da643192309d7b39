package wellknown

import (
	"archive/zip"
	"bytes"
	"errors"
	"hash/crc32"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// dosDate is 1980-01-01, the earliest time a zip header holds: every
// member carries it, so that the archive depends on content alone.
const dosDate = 1<<5 | 1

// archiveOf builds the archive of e: a zip of the skill folder's served
// files, stored without
// compression. The bytes are a function of the names and contents only:
// members in name order, one fixed time, mode 0644, the UTF-8 flag on
// every name, no directory entries and no extra fields. Stored rather
// than deflated because a compressor's output may change with the Go
// release, and with it every digest an installer keeps to detect updates.
func archiveOf(e *entry) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(e.skill.Bytes) + len(e.names)*128)
	zw := zip.NewWriter(&buf)
	for _, name := range e.names {
		data, err := e.files[name].ReadFile()
		if errors.Is(err, catalog.ErrChanged) {
			return nil, errChanged
		} else if err != nil {
			return nil, err
		}
		fh := &zip.FileHeader{
			Name:               name,
			Method:             zip.Store,
			Flags:              0x800, // names are UTF-8
			ModifiedDate:       dosDate,
			CRC32:              crc32.ChecksumIEEE(data),
			CompressedSize64:   uint64(len(data)),
			UncompressedSize64: uint64(len(data)),
		}
		fh.SetMode(0o644)
		w, err := zw.CreateRaw(fh)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
