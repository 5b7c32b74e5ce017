package tokenizer

import (
	"encoding/binary"
	"errors"
	"math/bits"
)

// vocab is a byte-level BPE vocabulary as one flat, immutable table: the
// tokens' bytes in rank order, their offsets, and an open-addressing hash
// index from bytes to rank. Every part is a string, so a table embedded in
// the binary (the built-in encodings, tables/*.ranks) is used where it
// lies, without parsing, copying or heap: building an encoding from it
// costs microseconds, and every session of every host shares the same
// read-only pages. Lookups hash the piece's bytes and compare them in
// place: no Go map, no string header per lookup, no allocation.
//
// The serialized form (see marshalVocab in the tests, parseVocab here) is
// little-endian:
//
//	"rlmplvt1" u32:n u32:rankBits u32:slotBits
//	offs  (n+1)×u32   token r is data[offs[r]:offs[r+1]]; empty is a hole
//	slots 2^slotBits×u32   0 empty, else tag<<rankBits | rank+1
//	data  the tokens' bytes
type vocab struct {
	n        int    // ranks 0..n-1 (holes included)
	rankBits uint   // bits of a slot holding rank+1; the rest is a hash tag
	mask     uint64 // len(slots)-1, in slots
	slotBits uint
	offs     string // (n+1) little-endian uint32
	slots    string // 2^slotBits little-endian uint32
	data     string
}

const vocabMagic = "rlmplvt1"

// u32 reads the little-endian uint32 at index i of a table part.
func u32(s string, i int) uint32 {
	return load32(s[4*i : 4*i+4])
}

// token returns the bytes of rank r ("" for a hole).
func (v *vocab) token(r int) string {
	return v.data[u32(v.offs, r):u32(v.offs, r+1)]
}

// hashBytes is a fast 64-bit hash of a short byte string: whole 8-byte
// words, then the tail as at most two overlapping loads (no byte loop).
// It is part of the serialized tables: changing it means regenerating
// them (go generate ./tokenizer).
func hashBytes(s string) uint64 {
	h := uint64(len(s)) * 0x9E3779B97F4A7C15
	for len(s) > 8 {
		h = (h ^ load64(s)) * 0xBF58476D1CE4E5B9
		h ^= h >> 31
		s = s[8:]
	}
	var w uint64
	switch n := len(s); {
	case n == 8:
		w = load64(s)
	case n >= 4:
		w = uint64(load32(s)) | uint64(load32(s[n-4:]))<<32
	case n > 0:
		w = uint64(s[0]) | uint64(s[n/2])<<8 | uint64(s[n-1])<<16
	}
	h = (h ^ w) * 0x94D049BB133111EB
	return h ^ h>>29
}

func load32(s string) uint32 {
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func load64(s string) uint64 {
	return uint64(load32(s)) | uint64(load32(s[4:]))<<32
}

// rank returns the rank of piece, or noRank.
func (v *vocab) rank(piece string) int {
	h := hashBytes(piece)
	i := h >> (64 - v.slotBits) // the top bits pick the slot
	tag := uint32(h) >> v.rankBits
	rmask := uint32(1)<<v.rankBits - 1
	for {
		e := u32(v.slots, int(i))
		if e == 0 {
			return noRank
		}
		if e>>v.rankBits == tag {
			r := int(e&rmask) - 1
			if v.token(r) == piece {
				return r
			}
		}
		i = (i + 1) & v.mask
	}
}

// newVocab builds the table of tokens (rank → bytes, "" for a hole).
// Tokens must be distinct; readRanks checks that.
func newVocab(tokens []string) *vocab {
	n := len(tokens)
	rankBits := uint(bits.Len32(uint32(n))) // holds rank+1 ≤ n
	slotBits := uint(bits.Len(uint(2*n - 1)))
	size := 0
	for _, t := range tokens {
		size += len(t)
	}
	offs := make([]byte, 0, 4*(n+1))
	data := make([]byte, 0, size)
	for _, t := range tokens {
		offs = binary.LittleEndian.AppendUint32(offs, uint32(len(data)))
		data = append(data, t...)
	}
	offs = binary.LittleEndian.AppendUint32(offs, uint32(len(data)))
	slots := make([]byte, 4<<slotBits)
	mask := uint64(1)<<slotBits - 1
	for r, t := range tokens {
		if t == "" {
			continue
		}
		h := hashBytes(t)
		i := h >> (64 - slotBits)
		for binary.LittleEndian.Uint32(slots[4*i:]) != 0 {
			i = (i + 1) & mask
		}
		binary.LittleEndian.PutUint32(slots[4*i:], uint32(h)>>rankBits<<rankBits|uint32(r+1))
	}
	return &vocab{n: n, rankBits: rankBits, slotBits: slotBits, mask: mask,
		offs: string(offs), slots: string(slots), data: string(data)}
}

// parseVocab returns the table serialized in s, which it keeps and
// slices without copying.
func parseVocab(s string) (*vocab, error) {
	bad := errors.New("tokenizer: malformed vocabulary table")
	if len(s) < len(vocabMagic)+12 || s[:len(vocabMagic)] != vocabMagic {
		return nil, bad
	}
	s = s[len(vocabMagic):]
	n, rankBits, slotBits := int(u32(s, 0)), uint(u32(s, 1)), uint(u32(s, 2))
	s = s[12:]
	if rankBits > 32 || slotBits > 31 || len(s) < 4*(n+1)+4<<slotBits {
		return nil, bad
	}
	v := &vocab{n: n, rankBits: rankBits, slotBits: slotBits, mask: uint64(1)<<slotBits - 1}
	v.offs, s = s[:4*(n+1)], s[4*(n+1):]
	v.slots, v.data = s[:4<<slotBits], s[4<<slotBits:]
	if int(u32(v.offs, n)) != len(v.data) {
		return nil, bad
	}
	return v, nil
}
