package store

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"time"
)

// Record is one stored message with its place in the conversation.
type Record struct {
	Conversation string
	Seq          int64 // dense from 1
	CreatedAt    time.Time
	Message      Message
	// TokenCounts maps an encoding name to the content's token count under
	// it, for the counts recorded so far ([AppendOptions.TokenCounts],
	// [DB.SetTokenCount]); nil when there are none. The map is the
	// caller's.
	TokenCounts    map[string]int
	IdempotencyKey string // empty when appended without one
}

// AppendOptions are the options of [DB.Append]. The zero value is valid.
type AppendOptions struct {
	// IdempotencyKey makes the append retry-safe: a later Append to the same
	// conversation with the same key returns the original Record and writes
	// nothing. Empty means none.
	IdempotencyKey string
	// TokenCounts are content token counts per encoding, recorded with the
	// message (see [DB.SetTokenCount] for counts computed later).
	TokenCounts map[string]int
	// Docs, when set, gives document versions written in the same
	// transaction as the message, from the record about to be written (a
	// turn's receipt names its assistant message): both are durable, or
	// neither. A retry under IdempotencyKey writes none.
	Docs func(Record) ([]DocPut, error)
}

func checkTokenCounts(tc map[string]int) error {
	for enc, n := range tc {
		if err := checkID("token_counts.encoding", enc); err != nil {
			return err
		}
		if n < 0 {
			return invalid("token_counts."+enc, "must be >= 0 (got %d)", n)
		}
	}
	return nil
}

// Append normalizes m and appends it to conversation conv as the next
// sequence. It returns the stored Record. It returns an error wrapping
// [ErrNotFound] for an unknown conversation, [ErrInvalid] (a
// *[ValidationError] naming the field) for a bad message or option — and
// then writes nothing — and [ErrIdempotencyMismatch] when opts'
// IdempotencyKey was used before for a different message.
//
// Appends to one conversation are serialized; their sequences are dense,
// without gaps or duplicates. With a synced store the record is durable
// when Append returns. The cost is O(1) in the conversation's length.
func (db *DB) Append(conv string, m Message, opts AppendOptions) (Record, error) {
	nm, err := m.Normalize()
	if err != nil {
		return Record{}, err
	}
	if opts.IdempotencyKey != "" {
		if err := checkID("idempotency_key", opts.IdempotencyKey); err != nil {
			return Record{}, err
		}
	}
	if err := checkTokenCounts(opts.TokenCounts); err != nil {
		return Record{}, err
	}
	if err := db.enter(); err != nil {
		return Record{}, err
	}
	defer db.leave()
	cs, err := db.conv(conv)
	if err != nil {
		return Record{}, err
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var rec Record
	var fresh bool
	err = db.kv.Update(func(t kvTxn) error {
		fresh = false
		if opts.IdempotencyKey != "" {
			b, err := t.Get(idemKey(cs.num, opts.IdempotencyKey))
			switch {
			case err == nil:
				seq, err := decodeU64(b, "idempotency record")
				if err != nil {
					return err
				}
				if rec, err = readRecord(t, cs, int64(seq)); err != nil {
					return err
				}
				if !bytes.Equal(messageBody(rec.Message), messageBody(nm)) {
					return fmt.Errorf("%w: key %q is seq %d of conversation %q", ErrIdempotencyMismatch, opts.IdempotencyKey, seq, conv)
				}
				return nil
			case !errors.Is(err, errKeyNotFound):
				return err
			}
		}
		h, err := getHead(t, cs.num)
		if err != nil {
			return err
		}
		r, err := db.writeMessage(t, cs, &h, nm, opts)
		if err != nil {
			return err
		}
		if opts.Docs != nil {
			docs, err := opts.Docs(r)
			if err != nil {
				return err
			}
			for _, d := range docs {
				if err := d.validate(); err != nil {
					return err
				}
				if _, err := db.putDoc(t, cs, d); err != nil {
					return err
				}
			}
		}
		if err := t.Set(headKey(cs.num), encodeHead(h)); err != nil {
			return err
		}
		rec, fresh = r, true
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrIdempotencyMismatch) {
			return Record{}, err
		}
		return Record{}, fmt.Errorf("store: append to %q: %w", conv, err)
	}
	if fresh {
		cs.head.Store(rec.Seq)
		db.appended(cs)
	}
	return rec, nil
}

// writeMessage writes the next message of cs in t and advances h (which
// the caller writes back).
func (db *DB) writeMessage(t kvTxn, cs *convState, h *headRec, m Message, opts AppendOptions) (Record, error) {
	seq := h.lastSeq + 1
	now := db.now()
	if err := t.Set(msgKey(cs.num, seq), encodeMessage(messageRec{createdAt: now, idemKey: opts.IdempotencyKey, msg: m})); err != nil {
		return Record{}, err
	}
	if err := t.Set(roleKey(cs.num, m.Role, seq), nil); err != nil {
		return Record{}, err
	}
	if opts.IdempotencyKey != "" {
		if err := t.Set(idemKey(cs.num, opts.IdempotencyKey), encodeU64(uint64(seq))); err != nil {
			return Record{}, err
		}
	}
	var counts map[string]int
	if len(opts.TokenCounts) > 0 {
		counts = make(map[string]int, len(opts.TokenCounts))
		for _, enc := range sortedKeys(opts.TokenCounts) {
			n := opts.TokenCounts[enc]
			if err := t.Set(tokenKey(cs.num, seq, enc), encodeCount(n)); err != nil {
				return Record{}, err
			}
			counts[enc] = n
		}
	}
	h.lastSeq = seq
	h.byRole[m.Role]++
	h.contentBytes += int64(len(m.Content.PlainText()))
	if h.firstAt == 0 {
		h.firstAt = now
	}
	h.lastAt = now
	return Record{Conversation: cs.id, Seq: seq, CreatedAt: timeOf(now), Message: m, TokenCounts: counts, IdempotencyKey: opts.IdempotencyKey}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// SetTokenCount records that message seq of conv has n content tokens
// under encoding, so a count computed at first use persists. A count is
// settable once: setting the same value again is a no-op, a different one
// returns [ErrTokenCountMismatch]. It returns [ErrNotFound] for an unknown
// conversation or message and [ErrInvalid] for a bad encoding or n < 0.
func (db *DB) SetTokenCount(conv string, seq int64, encoding string, n int) error {
	if err := checkID("encoding", encoding); err != nil {
		return err
	}
	if n < 0 {
		return invalid("count", "must be >= 0 (got %d)", n)
	}
	if seq < 1 {
		return invalid("seq", "must be >= 1 (got %d)", seq)
	}
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	cs, err := db.conv(conv)
	if err != nil {
		return err
	}
	err = db.kv.Update(func(t kvTxn) error {
		if _, err := t.Get(msgKey(cs.num, seq)); errors.Is(err, errKeyNotFound) {
			return notFound("message %d of conversation %q", seq, conv)
		} else if err != nil {
			return err
		}
		k := tokenKey(cs.num, seq, encoding)
		b, err := t.Get(k)
		switch {
		case err == nil:
			old, err := decodeCount(b)
			if err != nil {
				return err
			}
			if old != n {
				return fmt.Errorf("%w: %s count of message %d of %q is %d, not %d", ErrTokenCountMismatch, encoding, seq, conv, old, n)
			}
			return nil
		case !errors.Is(err, errKeyNotFound):
			return err
		}
		return t.Set(k, encodeCount(n))
	})
	if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrTokenCountMismatch) {
		return fmt.Errorf("store: set token count: %w", err)
	}
	return err
}
