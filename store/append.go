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
	// Time is when the message was said, as the caller gave it
	// ([AppendOptions.Time]); zero when none was given, and then
	// [Record.When] is CreatedAt.
	Time time.Time
	// Session names the session the message belongs to (a sitting, a
	// chat window, a day: the caller decides); empty when none was given.
	Session string
	// Metadata is the caller's metadata of the message, in the order
	// given, values compact JSON; nil when none. The slice is the caller's.
	Metadata []KV
	Message  Message
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
	// Time is when the message was said, if that is not when it is
	// appended (an imported transcript, a message relayed late). Zero
	// means none: [Record.When] is then the append time. Searches filter
	// and rank by [Record.When].
	Time time.Time
	// Session names the session the message belongs to; empty means none.
	// Ranked search lifts a hit's neighbours only within its session and
	// can be restricted to one session ([SearchOptions.Session]). At most
	// 1024 bytes of UTF-8.
	Session string
	// Metadata is stored with the message and returned in its [Record]:
	// unique keys, JSON values, at most 64 KiB encoded. It is not searched.
	Metadata []KV
	// Before are messages written right before this one in the same
	// transaction, at the sequences before its own (a turn's tool calls
	// and results with its answer): all are durable, or none. They share
	// Time and Session and have no key of their own: a retry under
	// IdempotencyKey writes none of them again.
	Before []Prior
}

// Prior is a message of [AppendOptions].Before, with its content token
// counts per encoding.
type Prior struct {
	Message     Message
	TokenCounts map[string]int
}

// When returns when the message was said: r.Time, or r.CreatedAt when the
// caller gave no time.
func (r Record) When() time.Time {
	if r.Time.IsZero() {
		return r.CreatedAt
	}
	return r.Time
}

// maxMessageMetadataBytes bounds one message's encoded metadata.
const maxMessageMetadataBytes = 64 << 10

// normalize validates o and returns it with its metadata normalized
// (compact JSON values). It writes nothing.
func (o AppendOptions) normalize() (AppendOptions, error) {
	if o.IdempotencyKey != "" {
		if err := checkID("idempotency_key", o.IdempotencyKey); err != nil {
			return o, err
		}
	}
	if err := checkTokenCounts(o.TokenCounts); err != nil {
		return o, err
	}
	if o.Session != "" {
		if err := checkID("session", o.Session); err != nil {
			return o, err
		}
	}
	if !o.Time.IsZero() {
		if y := o.Time.Year(); y < 1678 || y > 2261 {
			return o, invalid("time", "must be between the years 1678 and 2261 (got %v)", o.Time)
		}
	}
	if len(o.Metadata) == 0 {
		o.Metadata = nil
	} else {
		md, err := normalizeMetadata(o.Metadata, maxMessageMetadataBytes)
		if err != nil {
			return o, err
		}
		o.Metadata = md
	}
	return o, nil
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
	if opts, err = opts.normalize(); err != nil {
		return Record{}, err
	}
	before := make([]Prior, len(opts.Before))
	for i, p := range opts.Before {
		if p.Message, err = p.Message.Normalize(); err != nil {
			return Record{}, err
		}
		if err := checkTokenCounts(p.TokenCounts); err != nil {
			return Record{}, err
		}
		before[i] = p
	}
	if err := db.enter(); err != nil {
		return Record{}, err
	}
	defer db.leave()
	cs, err := db.conv(conv)
	if err != nil {
		return Record{}, err
	}
	defer db.lockWrites(cs)()
	var rec Record
	var fresh bool
	err = db.kv.Update(func(t kvTxn) error {
		fresh = false
		prev, found, err := db.earlier(t, cs, nm, opts)
		if found || err != nil {
			rec = prev
			return err
		}
		h, err := getHead(t, cs.num)
		if err != nil {
			return err
		}
		for _, p := range before {
			po := AppendOptions{TokenCounts: p.TokenCounts, Time: opts.Time, Session: opts.Session}
			if _, err := db.writeMessage(t, cs, &h, p.Message, po); err != nil {
				return err
			}
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
		cs.advance(rec.Seq)
		db.search.appended(cs)
		db.watch.changed(cs.num)
	}
	return rec, nil
}

// earlier finds the message an append under opts.IdempotencyKey already
// wrote: found, or an error wrapping [ErrIdempotencyMismatch] when the key
// names other content.
func (db *DB) earlier(t kvTxn, cs *convState, m Message, opts AppendOptions) (rec Record, found bool, err error) {
	if opts.IdempotencyKey == "" {
		return Record{}, false, nil
	}
	b, err := t.Get(idemKey(cs.num, opts.IdempotencyKey))
	if errors.Is(err, errKeyNotFound) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	seq, err := decodeU64(b, "idempotency record")
	if err != nil {
		return Record{}, false, err
	}
	if rec, err = readRecord(t, cs, int64(seq)); err != nil {
		return Record{}, false, err
	}
	if !bytes.Equal(envelopeBody(rec.Time, rec.Session, rec.Metadata, rec.Message), envelopeBody(opts.Time, opts.Session, opts.Metadata, m)) {
		return Record{}, false, fmt.Errorf("%w: key %q is seq %d of conversation %q", ErrIdempotencyMismatch, opts.IdempotencyKey, seq, cs.id)
	}
	return rec, true, nil
}

// writeMessage writes the next message of cs in t and advances h (which
// the caller writes back).
func (db *DB) writeMessage(t kvTxn, cs *convState, h *headRec, m Message, opts AppendOptions) (Record, error) {
	seq := h.lastSeq + 1
	now := db.now()
	rec := messageRec{createdAt: now, at: opts.Time, session: opts.Session, metadata: opts.Metadata, idemKey: opts.IdempotencyKey, msg: m}
	enc := encodeMessage(rec)
	if db.tooLarge != nil {
		if err := db.tooLarge(len(enc)); err != nil {
			return Record{}, err
		}
	}
	if err := t.Set(msgKey(cs.num, seq), enc); err != nil {
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
	r := rec.record(cs.id, seq)
	r.TokenCounts = counts
	if err := db.search.add(t, cs.num, r); err != nil {
		return Record{}, err
	}
	return r, nil
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

// Entry is one message of [DB.AppendAll] with its own options.
type Entry struct {
	Message Message
	Options AppendOptions
}

// MaxBatch is the most entries one [DB.AppendAll] takes: one transaction
// holds them all, and a store's transactions are bounded.
const MaxBatch = 10000

// AppendAll appends entries in order, in one transaction: all are
// durable when it returns, or none is written. It returns one record per
// entry; an entry whose idempotency key was written before (by an earlier
// call or an earlier entry) gets that record and writes nothing, and the
// same key with other content fails the whole batch with
// [ErrIdempotencyMismatch]. Entries take no Docs or Before. One sync
// serves the batch, so it costs O(len(entries)), not one sync each.
func (db *DB) AppendAll(conv string, entries []Entry) ([]Record, error) {
	if len(entries) > MaxBatch {
		return nil, invalid("entries", "a batch holds at most %d messages (this one has %d)", MaxBatch, len(entries))
	}
	norm := make([]Entry, len(entries))
	for i, e := range entries {
		if e.Options.Docs != nil || len(e.Options.Before) > 0 {
			return nil, invalid(fmt.Sprintf("entries[%d].options", i), "a batch entry takes no Docs or Before")
		}
		m, err := e.Message.Normalize()
		if err == nil {
			e.Options, err = e.Options.normalize()
		}
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		norm[i] = Entry{m, e.Options}
	}
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.leave()
	cs, err := db.conv(conv)
	if err != nil {
		return nil, err
	}
	defer db.lockWrites(cs)()
	recs := make([]Record, len(norm))
	var last int64
	var fresh bool
	err = db.kv.Update(func(t kvTxn) error {
		h, err := getHead(t, cs.num)
		if err != nil {
			return err
		}
		fresh = false
		for i, e := range norm {
			prev, found, err := db.earlier(t, cs, e.Message, e.Options)
			if err != nil {
				return fmt.Errorf("entry %d: %w", i+1, err)
			}
			if found {
				recs[i] = prev
				continue
			}
			if recs[i], err = db.writeMessage(t, cs, &h, e.Message, e.Options); err != nil {
				return fmt.Errorf("entry %d: %w", i+1, err)
			}
			fresh = true
		}
		last = h.lastSeq
		if !fresh {
			return nil
		}
		return t.Set(headKey(cs.num), encodeHead(h))
	})
	if err != nil {
		if errors.Is(err, ErrIdempotencyMismatch) {
			return nil, err
		}
		return nil, fmt.Errorf("store: append to %q: %w", conv, err)
	}
	if fresh {
		cs.advance(last)
		db.search.appended(cs)
	}
	return recs, nil
}
