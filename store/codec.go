package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
	"unicode/utf8"
)

// Record encoding. Every value the store writes (except the fixed 8-byte
// integers of the index and meta keys) starts with a two-byte header:
//
//	version (1) | record kind
//
// followed by the kind's fields in a fixed order: unsigned integers as
// uvarints, signed ones as zig-zag varints, strings as a uvarint length and
// the bytes. Decoders check every length against what remains, reject
// trailing bytes, and report a corrupt value as [ErrCorrupt] and a value of
// a newer version as [ErrVersion]; they never panic (FuzzRecordDecode).
//
// Adding a field means a new version: decoders keep reading every older
// version, and the writer always writes the newest. The versions:
//
//	1  the first format
//	2  message records: an image part's alt text after its detail, and
//	   after the message body the caller's time (a presence byte, then
//	   unix nanoseconds), session and metadata
const recordVersion = 2

type recordKind byte

const (
	recConversation recordKind = 1
	recHead         recordKind = 2
	recMessage      recordKind = 3
	recDoc          recordKind = 4
)

func (k recordKind) String() string {
	switch k {
	case recConversation:
		return "conversation"
	case recHead:
		return "head"
	case recMessage:
		return "message"
	case recDoc:
		return "document"
	}
	return fmt.Sprintf("kind(%d)", byte(k))
}

// encoder appends fields to a byte slice.
type encoder struct{ b []byte }

func newEncoder(kind recordKind, sizeHint int) *encoder {
	e := &encoder{b: make([]byte, 0, 2+sizeHint)}
	e.b = append(e.b, recordVersion, byte(kind))
	return e
}

func (e *encoder) uint(v uint64)   { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)     { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) byte(v byte)     { e.b = append(e.b, v) }
func (e *encoder) string(s string) { e.uint(uint64(len(s))); e.b = append(e.b, s...) }

// decoder reads fields; the first failure sticks and is reported by done.
type decoder struct {
	b       []byte
	kind    recordKind
	version byte
	err     error
}

func newDecoder(b []byte, want recordKind) *decoder {
	d := &decoder{b: b, kind: want}
	switch {
	case len(b) < 2:
		d.err = corrupt("%v record: %d bytes, too short", want, len(b))
	case b[0] == 0:
		d.err = corrupt("%v record: version 0", want)
	case b[0] > recordVersion:
		d.err = fmt.Errorf("%w: %v record version %d (this build reads up to %d)", ErrVersion, want, b[0], recordVersion)
	case recordKind(b[1]) != want:
		d.err = corrupt("%v record: kind is %v", want, recordKind(b[1]))
	default:
		d.b, d.version = b[2:], b[0]
	}
	return d
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = corrupt("%v record: bad %s", d.kind, what)
	}
}

func (d *decoder) uint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int(what string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte(what string) byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail(what)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// count reads a length that must fit in what remains (each element takes at
// least min bytes), so a corrupt count cannot cause a huge allocation.
func (d *decoder) count(what string, min int) int {
	n := d.uint(what)
	if d.err == nil && n > uint64(len(d.b)/min) {
		d.fail(what)
		return 0
	}
	return int(n)
}

func (d *decoder) string(what string) string {
	n := d.count(what, 1)
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	if !utf8.ValidString(s) {
		d.fail(what + " (not UTF-8)")
	}
	return s
}

// kvs reads a metadata list (nil when empty).
func (d *decoder) kvs(what string) []KV {
	n := d.count(what+" count", 2)
	if n == 0 || d.err != nil {
		return nil
	}
	out := make([]KV, n)
	for i := range out {
		out[i].Key = d.string(what + " key")
		out[i].Value = []byte(d.string(what + " value"))
	}
	return out
}

func (e *encoder) kvs(md []KV) {
	e.uint(uint64(len(md)))
	for _, kv := range md {
		e.string(kv.Key)
		e.string(string(kv.Value))
	}
}

func (d *decoder) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = corrupt("%v record: %d trailing bytes", d.kind, len(d.b))
	}
	return d.err
}

// conversationRec is the stored form of a conversation.
type conversationRec struct {
	num       uint64
	createdAt int64 // unix nanoseconds
	metadata  []KV
}

func encodeConversation(r conversationRec) []byte {
	e := newEncoder(recConversation, 16+32*len(r.metadata))
	e.uint(r.num)
	e.int(r.createdAt)
	e.kvs(r.metadata)
	return e.b
}

func decodeConversation(b []byte) (conversationRec, error) {
	d := newDecoder(b, recConversation)
	var r conversationRec
	r.num = d.uint("num")
	r.createdAt = d.int("created_at")
	r.metadata = d.kvs("metadata")
	return r, d.done()
}

// headRec is the per-conversation counter record, rewritten by each append:
// the next sequence comes from here (never from a scan) and so do [Stats].
type headRec struct {
	lastSeq      int64
	byRole       [numRoles]int64 // index by Role; [0] unused
	contentBytes int64
	firstAt      int64 // unix nanoseconds of seq 1 (0 when empty)
	lastAt       int64 // unix nanoseconds of lastSeq
}

func encodeHead(h headRec) []byte {
	e := newEncoder(recHead, 48)
	e.int(h.lastSeq)
	for r := RoleSystem; r <= RoleTool; r++ {
		e.int(h.byRole[r])
	}
	e.int(h.contentBytes)
	e.int(h.firstAt)
	e.int(h.lastAt)
	return e.b
}

func decodeHead(b []byte) (headRec, error) {
	d := newDecoder(b, recHead)
	var h headRec
	h.lastSeq = d.int("last_seq")
	for r := RoleSystem; r <= RoleTool; r++ {
		h.byRole[r] = d.int("role count")
	}
	h.contentBytes = d.int("content_bytes")
	h.firstAt = d.int("first_at")
	h.lastAt = d.int("last_at")
	if err := d.done(); err != nil {
		return headRec{}, err
	}
	if h.lastSeq < 0 {
		return headRec{}, corrupt("head record: last_seq %d", h.lastSeq)
	}
	return h, nil
}

// messageRec is the stored form of one appended message.
type messageRec struct {
	createdAt int64     // unix nanoseconds
	at        time.Time // the caller's time (AppendOptions.Time); zero when none
	session   string
	metadata  []KV
	idemKey   string
	msg       Message
}

// record is r as message seq of conversation conv (without token counts).
func (r messageRec) record(conv string, seq int64) Record {
	return Record{Conversation: conv, Seq: seq, CreatedAt: timeOf(r.createdAt), Time: r.at,
		Session: r.session, Metadata: r.metadata, Message: r.msg, IdempotencyKey: r.idemKey}
}

// Content forms in the message record.
const (
	formText  = 0
	formParts = 1
)

func encodeMessage(r messageRec) []byte {
	m := r.msg
	e := newEncoder(recMessage, 48+len(m.Content.Text)+len(r.idemKey)+len(r.session))
	e.int(r.createdAt)
	e.string(r.idemKey)
	appendEnvelope(e, r.at, r.session, r.metadata, m)
	return e.b
}

// appendEnvelope writes the message and what the caller said about it
// (time, session, metadata); idempotency compares these bytes, so they
// must be deterministic.
func appendEnvelope(e *encoder, at time.Time, session string, md []KV, m Message) {
	appendMessageBody(e, m)
	if at.IsZero() {
		e.byte(0)
	} else {
		e.byte(1)
		e.int(at.UnixNano())
	}
	e.string(session)
	e.kvs(md)
}

func envelopeBody(at time.Time, session string, md []KV, m Message) []byte {
	e := &encoder{}
	appendEnvelope(e, at, session, md, m)
	return e.b
}

// appendMessageBody writes the message itself.
func appendMessageBody(e *encoder, m Message) {
	e.byte(byte(m.Role))
	if m.Content.IsParts() {
		e.byte(formParts)
		e.uint(uint64(len(m.Content.Parts)))
		for _, p := range m.Content.Parts {
			e.byte(byte(p.Type))
			switch p.Type {
			case PartText:
				e.string(p.Text)
			default:
				e.string(p.URL)
				e.string(p.Detail)
				e.string(p.Alt)
			}
		}
	} else {
		e.byte(formText)
		e.string(m.Content.Text)
	}
	e.string(m.Name)
	e.string(m.ToolCallID)
	if m.ToolCalls == nil {
		e.uint(0)
	} else {
		e.uint(uint64(len(m.ToolCalls)) + 1) // 1 = present but empty
		for _, tc := range m.ToolCalls {
			e.string(tc.ID)
			e.string(tc.Name)
			e.string(tc.Arguments)
		}
	}
	e.string(m.Reasoning)
}

func decodeMessage(b []byte) (messageRec, error) {
	d := newDecoder(b, recMessage)
	var r messageRec
	r.createdAt = d.int("created_at")
	r.idemKey = d.string("idempotency_key")
	m := &r.msg
	m.Role = Role(d.byte("role"))
	if d.err == nil && !m.Role.Valid() {
		d.fail("role")
	}
	switch d.byte("content form") {
	case formText:
		m.Content.Text = d.string("content")
	case formParts:
		n := d.count("part count", 2)
		m.Content.Parts = make([]Part, n)
		for i := range m.Content.Parts {
			p := &m.Content.Parts[i]
			p.Type = PartType(d.byte("part type"))
			switch p.Type {
			case PartText:
				p.Text = d.string("part text")
			case PartImageURL:
				p.URL = d.string("part url")
				p.Detail = d.string("part detail")
				if d.version >= 2 {
					p.Alt = d.string("part alt")
				}
			default:
				d.fail("part type")
			}
		}
	default:
		d.fail("content form")
	}
	m.Name = d.string("name")
	m.ToolCallID = d.string("tool_call_id")
	if n := d.uint("tool call count"); n > 0 && d.err == nil {
		if n-1 > uint64(len(d.b)/3) {
			d.fail("tool call count")
		} else {
			m.ToolCalls = make([]ToolCall, n-1)
			for i := range m.ToolCalls {
				m.ToolCalls[i] = ToolCall{ID: d.string("tool call id"), Name: d.string("tool call name"), Arguments: d.string("tool call arguments")}
			}
		}
	}
	m.Reasoning = d.string("reasoning")
	if d.version >= 2 {
		switch d.byte("time presence") {
		case 0:
		case 1:
			r.at = time.Unix(0, d.int("time")).UTC()
		default:
			d.fail("time presence")
		}
		r.session = d.string("session")
		r.metadata = d.kvs("metadata")
	}
	if err := d.done(); err != nil {
		return messageRec{}, err
	}
	return r, nil
}

// u64 values (meta counters, idempotency seqs, watermarks) are 8 bytes
// big-endian.
func encodeU64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func decodeU64(b []byte, what string) (uint64, error) {
	if len(b) != 8 {
		return 0, corrupt("%s: %d bytes, want 8", what, len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

func encodeCount(n int) []byte { return binary.AppendUvarint(nil, uint64(n)) }

func decodeCount(b []byte) (int, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 || n != len(b) || v > math.MaxInt32 {
		return 0, corrupt("token count: bad value")
	}
	return int(v), nil
}
