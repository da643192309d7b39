package catalog

import "hash/maphash"

// nameIndex finds a name among a list of names, as a map from name to
// position would, in 4 bytes a slot instead of a map's key, value and
// control bytes: the scan state indexes every folder and file of a
// library with one, for as long as the catalog runs. It is open
// addressing with linear probing over a power of two of slots, at least
// 1.5 times the names, each 0 for empty or 1 + the name's position. The
// names stay in the caller's list; name(i) returns the i-th.
type nameIndex struct {
	slots []uint32
	seed  maphash.Seed
}

// newNameIndex indexes n names, fewer than 2³²-1; of a name given twice
// the first stands.
func newNameIndex(n int, name func(int) string) nameIndex {
	x := nameIndex{seed: maphash.MakeSeed()}
	size := 2
	for size < n+n/2 {
		size <<= 1
	}
	x.slots = make([]uint32, size)
	mask := uint64(size - 1)
	for i := range n {
		key := name(i)
		h := maphash.String(x.seed, key) & mask
		for ; x.slots[h] != 0; h = (h + 1) & mask {
			if name(int(x.slots[h]-1)) == key {
				break
			}
		}
		if x.slots[h] == 0 {
			x.slots[h] = uint32(i + 1)
		}
	}
	return x
}

// find returns the position of key among the names x was made of.
func (x *nameIndex) find(key string, name func(int) string) (int, bool) {
	if len(x.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(x.slots) - 1)
	for h := maphash.String(x.seed, key) & mask; ; h = (h + 1) & mask {
		slot := x.slots[h]
		if slot == 0 {
			return 0, false
		}
		if name(int(slot-1)) == key {
			return int(slot - 1), true
		}
	}
}

// fileIndex is what a scan learned of a library's files, found by name
// below the library root: 8 bytes a file and the index's few, where a map
// took about 48.
type fileIndex struct {
	files []*found
	index nameIndex
}

func newFileIndex(files []*found) *fileIndex {
	x := &fileIndex{files: files}
	x.index = newNameIndex(len(files), x.name)
	return x
}

func (x *fileIndex) name(i int) string { return x.files[i].name }

// find returns the file name, or nil.
func (x *fileIndex) find(name string) *found {
	if x == nil {
		return nil
	}
	if i, ok := x.index.find(name, x.name); ok {
		return x.files[i]
	}
	return nil
}

// all returns every file.
func (x *fileIndex) all() []*found {
	if x == nil {
		return nil
	}
	return x.files
}
