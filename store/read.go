package store

import (
	"errors"
	"fmt"
	"time"
)

// readRecord reads message seq of cs with its token counts.
func readRecord(t kvTxn, cs *convState, seq int64) (Record, error) {
	var rec Record
	found := false
	err := readRange(t, cs, seq, seq, false, func(r Record) bool {
		rec, found = r, true
		return false
	})
	if err == nil && !found {
		err = notFound("message %d of conversation %q", seq, cs.id)
	}
	return rec, err
}

// getMessage reads message seq of cs without its token counts: one point
// read, cheaper than an iteration (found is false past the last).
func getMessage(t kvTxn, cs *convState, seq int64) (rec Record, found bool, err error) {
	b, err := t.Get(msgKey(cs.num, seq))
	if errors.Is(err, errKeyNotFound) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	r, err := decodeMessage(b)
	if err != nil {
		return Record{}, false, fmt.Errorf("message %d of %q: %w", seq, cs.id, err)
	}
	return r.record(cs.id, seq), true, nil
}

// readTokenCounts reads the token counts of message seq of cs (nil when
// none).
func readTokenCounts(t kvTxn, cs *convState, seq int64) (map[string]int, error) {
	var counts map[string]int
	lo := append(msgKey(cs.num, seq), tokenTag)
	err := t.Iterate(lo, prefixEnd(lo), false, func(k, v []byte) (bool, error) {
		_, enc, tok, ok := parseMsgKey(k)
		if !ok || !tok {
			return false, corrupt("token count key %x", k)
		}
		n, err := decodeCount(v)
		if counts == nil {
			counts = map[string]int{}
		}
		counts[enc] = n
		return err == nil, err
	})
	return counts, err
}

// readRange calls fn for the records lo..hi (inclusive) of cs, ascending or
// descending, until fn returns false. Its cost is O(records visited).
func readRange(t kvTxn, cs *convState, lo, hi int64, reverse bool, fn func(Record) bool) error {
	if lo < 1 {
		lo = 1
	}
	if hi < lo {
		return nil
	}
	var (
		cur    Record
		have   bool // forward: cur holds a message not yet emitted
		counts map[string]int
	)
	end := msgPrefix(cs.num)
	if hi == int64(^uint64(0)>>1) {
		end = prefixEnd(end)
	} else {
		end = msgKey(cs.num, hi+1)
	}
	stopped := false
	err := t.Iterate(msgKey(cs.num, lo), end, reverse, func(k, v []byte) (bool, error) {
		seq, enc, tok, ok := parseMsgKey(k)
		if !ok {
			return false, corrupt("message key %x", k)
		}
		if tok {
			n, err := decodeCount(v)
			if err != nil {
				return false, err
			}
			if !reverse {
				if !have || cur.Seq != seq {
					return false, corrupt("token count of missing message %d of %q", seq, cs.id)
				}
				if cur.TokenCounts == nil {
					cur.TokenCounts = map[string]int{}
				}
				cur.TokenCounts[enc] = n
				return true, nil
			}
			if counts == nil {
				counts = map[string]int{}
			}
			counts[enc] = n
			return true, nil
		}
		r, err := decodeMessage(v)
		if err != nil {
			return false, fmt.Errorf("message %d of %q: %w", seq, cs.id, err)
		}
		rec := r.record(cs.id, seq)
		if reverse {
			rec.TokenCounts, counts = counts, nil
			if !fn(rec) {
				stopped = true
				return false, nil
			}
			return true, nil
		}
		if have && !fn(cur) {
			stopped = true
			return false, nil
		}
		cur, have = rec, true
		return true, nil
	})
	if err != nil || stopped {
		return err
	}
	if have {
		fn(cur)
	}
	return nil
}

// Message returns message seq of conversation conv. It returns an error
// wrapping [ErrNotFound] for an unknown conversation or sequence and
// [ErrInvalid] for seq < 1.
func (db *DB) Message(conv string, seq int64) (Record, error) {
	if seq < 1 {
		return Record{}, invalid("seq", "must be >= 1 (got %d)", seq)
	}
	if err := db.enter(); err != nil {
		return Record{}, err
	}
	defer db.leave()
	cs, err := db.conv(conv)
	if err != nil {
		return Record{}, err
	}
	var rec Record
	err = db.kv.View(func(t kvTxn) error {
		var err error
		rec, err = readRecord(t, cs, seq)
		return err
	})
	return rec, wrapRead(err)
}

func wrapRead(err error) error {
	if err == nil || errors.Is(err, ErrNotFound) {
		return err
	}
	return fmt.Errorf("store: read: %w", err)
}

// Messages returns the messages of conv that sel selects, ascending by
// seq; limit > 0 keeps the first limit of them (0 means all). The cost is
// O(result): every selector is a key range (role(R) has its own index), so
// recent(N) reads N records whatever the conversation's length. It returns
// [ErrNotFound] for an unknown conversation, [ErrInvalidSelector] or
// [ErrInvalidRange] for a bad selector and [ErrInvalid] for limit < 0.
func (db *DB) Messages(conv string, sel Selector, limit int) ([]Record, error) {
	if err := sel.Validate(); err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, invalid("limit", "must be >= 0 (got %d)", limit)
	}
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.leave()
	cs, err := db.conv(conv)
	if err != nil {
		return nil, err
	}
	var out []Record
	err = db.kv.View(func(t kvTxn) error {
		h, err := getHead(t, cs.num)
		if err != nil {
			return err
		}
		if sel.kind == selRole {
			return readRole(t, cs, sel.role, limit, func(r Record) { out = append(out, r) })
		}
		lo, hi := sel.bounds(h.lastSeq)
		if limit > 0 && hi-lo+1 > int64(limit) {
			hi = lo + int64(limit) - 1
		}
		if hi >= lo {
			out = make([]Record, 0, hi-lo+1)
		}
		return readRange(t, cs, lo, hi, false, func(r Record) bool {
			out = append(out, r)
			return true
		})
	})
	return out, wrapRead(err)
}

func readRole(t kvTxn, cs *convState, role Role, limit int, emit func(Record)) error {
	lo := roleKey(cs.num, role, 0)
	hi := prefixEnd(lo[:10])
	var seqs []int64
	err := t.Iterate(lo, hi, false, func(k, _ []byte) (bool, error) {
		seq, ok := parseRoleKey(k)
		if !ok {
			return false, corrupt("role key %x", k)
		}
		seqs = append(seqs, seq)
		return limit == 0 || len(seqs) < limit, nil
	})
	if err != nil {
		return err
	}
	for _, s := range seqs {
		r, err := readRecord(t, cs, s)
		if err != nil {
			return err
		}
		emit(r)
	}
	return nil
}

// Scan calls fn for messages from..to (inclusive; to 0 means the last) of
// conv in ascending order, or descending when reverse, until fn returns
// false. It reads one consistent snapshot and costs O(messages visited),
// so the newest K messages are Scan(conv, 1, 0, true, ...) stopped after
// K. It returns [ErrNotFound] for an unknown conversation and [ErrInvalid]
// for from < 1 or to < 0. fn must not call back into the DB for writes.
func (db *DB) Scan(conv string, from, to int64, reverse bool, fn func(Record) bool) error {
	if from < 1 {
		return invalid("from", "must be >= 1 (got %d)", from)
	}
	if to < 0 {
		return invalid("to", "must be >= 0 (got %d)", to)
	}
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	cs, err := db.conv(conv)
	if err != nil {
		return err
	}
	return wrapRead(db.kv.View(func(t kvTxn) error {
		h, err := getHead(t, cs.num)
		if err != nil {
			return err
		}
		if to == 0 || to > h.lastSeq {
			to = h.lastSeq
		}
		return readRange(t, cs, from, to, reverse, fn)
	}))
}

// Stats are a conversation's counters, kept on append (reading them is
// O(1)).
type Stats struct {
	Conversation string
	// Messages is the number of messages; sequences are dense, so it is
	// also the last sequence.
	Messages                      int64
	System, User, Assistant, Tool int64 // messages per role
	// ContentBytes is the total UTF-8 length of the messages' plain text
	// ([Content.PlainText]).
	ContentBytes    int64
	FirstAt, LastAt time.Time // created_at of the first and last message; zero when empty
}

// Stats returns the counters of conv, or an error wrapping [ErrNotFound].
func (db *DB) Stats(conv string) (Stats, error) {
	if err := db.enter(); err != nil {
		return Stats{}, err
	}
	defer db.leave()
	cs, err := db.conv(conv)
	if err != nil {
		return Stats{}, err
	}
	var h headRec
	err = db.kv.View(func(t kvTxn) error {
		var err error
		h, err = getHead(t, cs.num)
		return err
	})
	if err != nil {
		return Stats{}, wrapRead(err)
	}
	return Stats{
		Conversation: conv,
		Messages:     h.lastSeq,
		System:       h.byRole[RoleSystem],
		User:         h.byRole[RoleUser],
		Assistant:    h.byRole[RoleAssistant],
		Tool:         h.byRole[RoleTool],
		ContentBytes: h.contentBytes,
		FirstAt:      timeOf(h.firstAt),
		LastAt:       timeOf(h.lastAt),
	}, nil
}
