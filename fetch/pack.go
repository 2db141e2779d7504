package main

import (
	"bytes"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// maxHashedForName bounds what checkPack inflates of an object it refuses,
// to name it by its id (beyond it, the object is named by its offset).
const maxHashedForName = 1 << 30

// checkPack reads the pack's object headers before go-git unpacks it (into
// memory, whole): an object whose size (a whole object's from its header, a
// delta's target size from the delta's own header) passes maxUnpackedBytes
// is refused before it is inflated into memory, and so are objects that
// together unpack to more than maxUnpackedBytes. Inflating to look costs
// time, never memory: every object is inflated into a hash or discarded.
func checkPack(pack []byte, limit int64) error {
	s := packfile.NewScanner(bytes.NewReader(pack))
	_, count, err := s.Header()
	if err != nil {
		return err
	}
	var total int64
	for i := uint32(0); i < count; i++ {
		oh, err := s.NextObjectHeader()
		if err != nil {
			return err
		}
		size := oh.Length
		if oh.Type.IsDelta() {
			if oh.Length > limit {
				return tooLarge(fmt.Sprintf("a delta at offset %d of the pack", oh.Offset), oh.Length, limit)
			}
			var head deltaHead
			if _, _, err := s.NextObject(&head); err != nil {
				return err
			}
			if size = head.targetSize(); size < 0 {
				return fmt.Errorf("the delta at offset %d of the pack has no header", oh.Offset)
			}
			if size > limit {
				return tooLarge(fmt.Sprintf("an object (a delta at offset %d of the pack)", oh.Offset), size, limit)
			}
		} else if size > limit {
			what := fmt.Sprintf("a %s at offset %d of the pack", oh.Type, oh.Offset)
			if size <= maxHashedForName {
				h := plumbing.NewHasher(oh.Type, size)
				if _, _, err := s.NextObject(h); err == nil {
					what = fmt.Sprintf("the %s %s", oh.Type, h.Sum())
				}
			}
			return tooLarge(what, size, limit)
		}
		if total += size; total > limit {
			return refused("the fetched objects unpack to more than %d bytes, the limit (maxUnpackedBytes, --source-max-unpacked); refused before they were unpacked", limit)
		}
	}
	return nil
}

func tooLarge(what string, size, limit int64) error {
	return refused("%s is %d bytes unpacked, more than the %d bytes allowed (maxUnpackedBytes, --source-max-unpacked); refused before it was unpacked", what, size, limit)
}

// deltaHead keeps the first bytes of a delta (its source and target sizes)
// and counts the rest away.
type deltaHead struct {
	buf [32]byte
	n   int
}

func (d *deltaHead) Write(p []byte) (int, error) {
	d.n += copy(d.buf[min(d.n, len(d.buf)):], p)
	return len(p), nil
}

// targetSize reads the second of the delta's two sizes (7 bits a byte, low first).
func (d *deltaHead) targetSize() int64 {
	b := d.buf[:min(d.n, len(d.buf))]
	var sizes [2]int64
	for i := range sizes {
		var shift uint
		for {
			if len(b) == 0 || shift > 56 {
				return -1
			}
			c := b[0]
			b = b[1:]
			sizes[i] |= int64(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				break
			}
		}
	}
	return sizes[1]
}
