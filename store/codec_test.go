package store

import (
	"bytes"
	"cmp"
	"errors"
	"reflect"
	"testing"
	"time"
)

func sampleMessages() []Message {
	return []Message{
		user("hello"),
		{Role: RoleUser, Content: PartsContent(TextPart("look"), CaptionedImagePart("http://x/y.png", "low", "a dog on a beach"))},
		{Role: RoleSystem, Content: TextContent("")},
		{Role: RoleAssistant, Content: TextContent("x"), Name: "n", Reasoning: "r", ToolCalls: []ToolCall{{ID: "a", Name: "f", Arguments: `{"k":[1]}`}}},
		{Role: RoleAssistant, ToolCalls: []ToolCall{}},
		{Role: RoleTool, ToolCallID: "a", Content: PartsContent(TextPart("t"), ImagePart("u", "high"))},
		{Role: RoleUser, Content: PartsContent()},
	}
}

// sampleEnvelopes are message records with and without what the caller
// says about a message at append.
func sampleEnvelopes() []messageRec {
	at := time.Date(2023, 5, 8, 13, 56, 0, 7, time.UTC)
	var out []messageRec
	for i, m := range sampleMessages() {
		r := messageRec{createdAt: -12345, idemKey: "k", msg: m}
		switch i % 3 {
		case 1:
			r.at, r.session = at, "session 1"
		case 2:
			r.at, r.metadata = time.Unix(0, 0).UTC(), []KV{{"speaker", []byte(`"Caroline"`)}, {"n", []byte(`[1,2]`)}}
		}
		out = append(out, r)
	}
	return out
}

func TestRecordRoundTrip(t *testing.T) {
	for _, in := range sampleEnvelopes() {
		out, err := decodeMessage(encodeMessage(in))
		if err != nil {
			t.Fatalf("decode(%+v): %v", in, err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Errorf("round trip %+v → %+v", in, out)
		}
	}
	c := conversationRec{num: 7, createdAt: 99, metadata: []KV{{"a", []byte(`1`)}, {"b", []byte(`"x"`)}}}
	if got, err := decodeConversation(encodeConversation(c)); err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("conversation round trip = %+v, %v", got, err)
	}
	h := headRec{lastSeq: 3, byRole: [numRoles]int64{0, 1, 1, 1, 0}, contentBytes: 10, firstAt: 1, lastAt: 2}
	if got, err := decodeHead(encodeHead(h)); err != nil || got != h {
		t.Errorf("head round trip = %+v, %v", got, err)
	}
}

// encodeV1 writes r in record version 1, the format before message
// envelopes and image captions, as stores written by older builds hold it.
func encodeV1(r messageRec) []byte {
	e := &encoder{b: []byte{1, byte(recMessage)}}
	e.int(r.createdAt)
	e.string(r.idemKey)
	m := r.msg
	e.byte(byte(m.Role))
	if m.Content.IsParts() {
		e.byte(formParts)
		e.uint(uint64(len(m.Content.Parts)))
		for _, p := range m.Content.Parts {
			e.byte(byte(p.Type))
			if p.Type == PartText {
				e.string(p.Text)
			} else {
				e.string(p.URL)
				e.string(p.Detail)
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
		e.uint(uint64(len(m.ToolCalls)) + 1)
		for _, tc := range m.ToolCalls {
			e.string(tc.ID)
			e.string(tc.Name)
			e.string(tc.Arguments)
		}
	}
	e.string(m.Reasoning)
	return e.b
}

// TestRecordVersion1 reads messages as version 1 wrote them: no caption,
// no envelope.
func TestRecordVersion1(t *testing.T) {
	for _, m := range sampleMessages() {
		for i := range m.Content.Parts {
			m.Content.Parts[i].Alt = "" // version 1 has no captions
		}
		in := messageRec{createdAt: 42, idemKey: "k", msg: m}
		out, err := decodeMessage(encodeV1(in))
		if err != nil || !reflect.DeepEqual(in, out) {
			t.Errorf("version 1 %+v → %+v, %v", in, out, err)
		}
	}
}

func TestRecordDecodeErrors(t *testing.T) {
	good := encodeMessage(messageRec{msg: user("hello")})
	future := bytes.Clone(good)
	future[0] = recordVersion + 1
	wrongKind := bytes.Clone(good)
	wrongKind[1] = byte(recHead)
	for name, tc := range map[string]struct {
		b    []byte
		want error
	}{
		"empty":                {nil, ErrCorrupt},
		"version0":             {[]byte{0, 3}, ErrCorrupt},
		"future":               {future, ErrVersion},
		"wrong kind":           {wrongKind, ErrCorrupt},
		"truncated":            {good[:len(good)-2], ErrCorrupt},
		"trailing":             {append(bytes.Clone(good), 0), ErrCorrupt},
		"huge count":           {[]byte{1, 3, 0, 0, 1, 1, 0xff, 0xff, 0xff, 0xff, 0x0f}, ErrCorrupt},
		"bad time flag":        {append(good[:len(good)-3:len(good)-3], 2, 0, 0, 0), ErrCorrupt},
		"v1 trailing envelope": {append([]byte{1}, good[1:]...), ErrCorrupt},
	} {
		if _, err := decodeMessage(tc.b); !errors.Is(err, tc.want) {
			t.Errorf("%s: decodeMessage = %v, want %v", name, err, tc.want)
		}
	}
}

// FuzzRecordDecode feeds arbitrary bytes to every decoder: none may panic,
// and whatever decodes must re-encode to a value that decodes the same.
func FuzzRecordDecode(f *testing.F) {
	for _, r := range sampleEnvelopes() {
		f.Add(encodeMessage(r))
		f.Add(encodeV1(r))
	}
	f.Add(encodeConversation(conversationRec{num: 1, createdAt: 2, metadata: []KV{{"k", []byte("1")}}}))
	f.Add(encodeHead(headRec{lastSeq: 5}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := decodeMessage(b); err == nil {
			r2, err := decodeMessage(encodeMessage(r))
			if err != nil || !reflect.DeepEqual(r, r2) {
				t.Fatalf("message re-decode: %+v vs %+v (%v)", r, r2, err)
			}
		} else if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
			t.Fatalf("decodeMessage error %v is neither ErrCorrupt nor ErrVersion", err)
		}
		if c, err := decodeConversation(b); err == nil {
			c2, err := decodeConversation(encodeConversation(c))
			if err != nil || !reflect.DeepEqual(c, c2) {
				t.Fatalf("conversation re-decode: %+v vs %+v (%v)", c, c2, err)
			}
		}
		if h, err := decodeHead(b); err == nil {
			if h2, err := decodeHead(encodeHead(h)); err != nil || h != h2 {
				t.Fatalf("head re-decode: %+v vs %+v (%v)", h, h2, err)
			}
		}
		_, _ = decodeU64(b, "x")
		_, _ = decodeCount(b)
		_, _, _, _ = parseMsgKey(b)
		_, _, _ = parseListKey(b)
		_, _, _ = parseDocID(string(b))
	})
}

// FuzzKeyOrder checks that the key encodings preserve tuple order: bytewise
// comparison of two keys agrees with comparing what they encode.
func FuzzKeyOrder(f *testing.F) {
	f.Add(uint64(1), int64(1), uint64(1), int64(2), int64(-1), int64(0), "a", "ab")
	f.Add(uint64(255), int64(256), uint64(256), int64(1), int64(1<<40), int64(-1<<40), "b", "a\x00")
	f.Add(uint64(0), int64(0), uint64(1<<63), int64(1<<62), int64(-9223372036854775808), int64(9223372036854775807), "", "\xff")
	f.Fuzz(func(t *testing.T, n1 uint64, s1 int64, n2 uint64, s2 int64, c1, c2 int64, id1, id2 string) {
		if s1 < 0 || s2 < 0 {
			return // sequences are >= 1 (0 is the range start)
		}
		want := cmp.Or(cmp.Compare(n1, n2), cmp.Compare(s1, s2))
		if got := bytes.Compare(msgKey(n1, s1), msgKey(n2, s2)); got != want {
			t.Errorf("msgKey(%d,%d) vs (%d,%d): %d, want %d", n1, s1, n2, s2, got, want)
		}
		// Token-count keys sort right after their message and before the next.
		if n1 == n2 && s1 < s2 {
			tk := tokenKey(n1, s1, id1)
			if bytes.Compare(msgKey(n1, s1), tk) >= 0 || bytes.Compare(tk, msgKey(n2, s2)) >= 0 {
				t.Errorf("token key of %d/%d out of place", n1, s1)
			}
		}
		want = cmp.Or(cmp.Compare(c1, c2), cmp.Compare(id1, id2))
		if got := bytes.Compare(listKey(c1, id1), listKey(c2, id2)); got != want {
			t.Errorf("listKey(%d,%q) vs (%d,%q): %d, want %d", c1, id1, c2, id2, got, want)
		}
		if c, id, ok := parseListKey(listKey(c1, id1)); !ok || c != c1 || id != id1 {
			t.Errorf("parseListKey round trip (%d,%q) = (%d,%q,%v)", c1, id1, c, id, ok)
		}
		if seq, _, tok, ok := parseMsgKey(msgKey(n1, s1)); !ok || tok || seq != s1 {
			t.Errorf("parseMsgKey(msgKey(%d,%d)) = %d %v %v", n1, s1, seq, tok, ok)
		}
		if u := orderedInt(c1); unorderedInt(u) != c1 {
			t.Errorf("orderedInt(%d) does not invert", c1)
		}
		if num, seq, ok := parseDocID(docID(n1, s1)); !ok || num != n1 || seq != s1 {
			t.Errorf("docID(%d,%d) round trip = %d %d %v", n1, s1, num, seq, ok)
		}
	})
}

func TestPrefixEnd(t *testing.T) {
	for _, tc := range []struct{ in, want []byte }{
		{[]byte{1}, []byte{2}},
		{[]byte{1, 0xff}, []byte{2}},
		{[]byte{0xff, 0xff}, nil},
	} {
		if got := prefixEnd(tc.in); !bytes.Equal(got, tc.want) {
			t.Errorf("prefixEnd(%x) = %x, want %x", tc.in, got, tc.want)
		}
	}
}
