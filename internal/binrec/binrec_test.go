package binrec

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

var errDamaged = errors.New("damaged")

// What a Writer writes a Reader reads back, checksum included; any change
// to the bytes, or a cut, is refused.
func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	e := NewWriter(&buf)
	e.Uint(math.MaxUint64)
	e.Int(math.MinInt64)
	e.Str("héllo")
	e.Flush()
	e.Buf = append(e.Buf, 1, 2, 3)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	d, err := Open(data, errDamaged)
	if err != nil {
		t.Fatal(err)
	}
	if u, i, s, b := d.Uint(), d.Int(), d.Str(), d.Take(3); u != math.MaxUint64 || i != math.MinInt64 || s != "héllo" || !bytes.Equal(b, []byte{1, 2, 3}) || d.Err() != nil || d.Left() != 0 {
		t.Errorf("read back %d %d %q %v, err %v, %d left", u, i, s, b, d.Err(), d.Left())
	}
	if !bytes.Equal(Seal(data[:len(data)-4]), data) {
		t.Error("Seal does not end a record as a Writer does")
	}
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 1
		if _, err := Open(bad, errDamaged); err != errDamaged {
			t.Errorf("byte %d flipped: Open = %v", i, err)
		}
	}
	if _, err := Open(data[:3], errDamaged); err != errDamaged {
		t.Errorf("cut record: Open = %v", err)
	}
}

// A length the rest cannot hold fails the reader, which then stays failed
// and hands out nothing of the record.
func TestBounds(t *testing.T) {
	d, err := Open(Seal([]byte{100, 'a', 'b'}), errDamaged)
	if err != nil {
		t.Fatal(err)
	}
	if n := d.Count(1); n != 0 || d.Err() != errDamaged {
		t.Errorf("Count past the end = %d, err %v", n, d.Err())
	}
	if b := d.Take(2); len(b) != 2 || b[0] != 0 || d.Left() != 0 {
		t.Errorf("Take after a failure = %v, %d left", b, d.Left())
	}
	if b := d.Take(1 << 20); b != nil {
		t.Errorf("a large Take after a failure allocated %d bytes", len(b))
	}
	d, _ = Open(Seal([]byte{4, 0, 0, 0, 0, 0, 0, 0}), errDamaged)
	if n := d.Count(2); n != 0 || d.Err() == nil {
		t.Errorf("4 elements of 2 bytes in 7: Count = %d, err %v", n, d.Err())
	}
}
