package store

import (
	"encoding/binary"
)

// Key layout. Every key starts with a one-byte kind; integers are 8-byte
// big-endian (signed ones with the sign bit flipped), so bytewise order is
// numeric order and one conversation's messages form one contiguous,
// seq-ordered range. Conversations get a dense internal number (num) at
// creation so that message keys are short and fixed-width whatever the
// length of the caller's id.
//
//	kindMeta   'M' name                      → meta value (next conversation number, index generation)
//	kindConv   'c' id                        → conversation record (num, created_at, metadata)
//	kindNum    'n' num                       → id
//	kindList   'l' created_at id             → num; List order is created_at, then id
//	kindHead   'h' num                       → head record: last seq and the Stats counters
//	kindMsg    'm' num seq                   → message record
//	           'm' num seq 't' encoding      → token count of that message (uvarint)
//	kindRole   'o' num role seq              → (empty); the role(R) selector's index
//	kindIdem   'i' num key                   → seq appended under idempotency key
//	kindMark   'w' num                       → index watermark: last seq indexed in the full-text index
//	kindDoc    'd' num len(coll) coll len(key)16 key version → document (receipt, warm artifact)
//
// A variable-length string is only ever the last component of a key, so
// raw bytes keep order and no escaping is needed. Changing a kind byte or an
// encoding is a format change: bump the record version and migrate.
const (
	kindMeta byte = 'M'
	kindConv byte = 'c'
	kindNum  byte = 'n'
	kindList byte = 'l'
	kindHead byte = 'h'
	kindMsg  byte = 'm'
	kindRole byte = 'o'
	kindIdem byte = 'i'
	kindMark byte = 'w'
	kindDoc  byte = 'd'

	tokenTag byte = 't' // after 'm' num seq: a token-count key
)

// Meta key names.
const (
	metaNextConv = "next_conv"
	metaIndexGen = "index_gen"
)

func metaKey(name string) []byte { return append([]byte{kindMeta}, name...) }

func convKey(id string) []byte { return append([]byte{kindConv}, id...) }

func numKey(num uint64) []byte { return be64(append(make([]byte, 0, 9), kindNum), num) }

func listKey(createdAt int64, id string) []byte {
	k := make([]byte, 0, 9+len(id))
	k = append(k, kindList)
	k = be64(k, orderedInt(createdAt))
	return append(k, id...)
}

func headKey(num uint64) []byte { return be64(append(make([]byte, 0, 9), kindHead), num) }

func markKey(num uint64) []byte { return be64(append(make([]byte, 0, 9), kindMark), num) }

// msgPrefix is the prefix of every message key of conversation num.
func msgPrefix(num uint64) []byte { return be64(append(make([]byte, 0, 17), kindMsg), num) }

func msgKey(num uint64, seq int64) []byte { return be64(msgPrefix(num), uint64(seq)) }

func tokenKey(num uint64, seq int64, encoding string) []byte {
	k := append(msgKey(num, seq), tokenTag)
	return append(k, encoding...)
}

func roleKey(num uint64, role Role, seq int64) []byte {
	k := make([]byte, 0, 18)
	k = append(k, kindRole)
	k = be64(k, num)
	k = append(k, byte(role))
	return be64(k, uint64(seq))
}

func idemKey(num uint64, key string) []byte {
	k := be64(append(make([]byte, 0, 9+len(key)), kindIdem), num)
	return append(k, key...)
}

// parseMsgKey splits a key of msgPrefix(num): seq, and the token encoding
// when the key is a token-count key (tok reports which).
func parseMsgKey(k []byte) (seq int64, encoding string, tok bool, ok bool) {
	if len(k) < 17 || k[0] != kindMsg {
		return 0, "", false, false
	}
	seq = int64(binary.BigEndian.Uint64(k[9:17]))
	switch {
	case len(k) == 17:
		return seq, "", false, true
	case k[17] == tokenTag:
		return seq, string(k[18:]), true, true
	}
	return 0, "", false, false
}

func parseListKey(k []byte) (createdAt int64, id string, ok bool) {
	if len(k) < 9 || k[0] != kindList {
		return 0, "", false
	}
	return unorderedInt(binary.BigEndian.Uint64(k[1:9])), string(k[9:]), true
}

func parseNumKey(k []byte) (uint64, bool) {
	if len(k) != 9 {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[1:]), true
}

func parseRoleKey(k []byte) (int64, bool) {
	if len(k) != 18 || k[0] != kindRole {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(k[10:])), true
}

// prefixEnd returns the smallest key greater than every key with prefix p
// (nil if there is none: p is all 0xFF).
func prefixEnd(p []byte) []byte {
	e := append([]byte(nil), p...)
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] < 0xFF {
			e[i]++
			return e[:i+1]
		}
	}
	return nil
}

func be64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }

// orderedInt maps int64 to uint64 preserving order (math.MinInt64 → 0,
// -1 → 1<<63-1, 0 → 1<<63); unorderedInt inverts it.
func orderedInt(v int64) uint64 { return uint64(v) ^ 1<<63 }

func unorderedInt(u uint64) int64 { return int64(u ^ 1<<63) }
