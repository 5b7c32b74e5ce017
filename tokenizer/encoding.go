package tokenizer

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Encoding is one byte-level BPE vocabulary: a split pattern, mergeable
// ranks and special tokens. It comes from a [Registry] (the built-in
// encodings) or from [NewEncoding] (a ranks file supplied by the caller).
//
// An Encoding is immutable and safe for concurrent use. A built-in
// encoding loads its vocabulary on first use (see [Registry.Encoding]); no
// method does I/O.
//
// # Text handling
//
// Encode and Count never produce special tokens: text such as
// "<|endoftext|>" is tokenized as ordinary text (tiktoken's
// encode_ordinary). That is the safe reading of user and model text, and it
// is what a provider does with message content.
//
// Invalid UTF-8 is replaced before tokenizing: each byte that is not part
// of a valid UTF-8 sequence becomes U+FFFD, exactly as [encoding/json] does
// when the host marshals a request. The count is therefore the count of the
// text the provider receives. Valid UTF-8 is tokenized unchanged, so for it
// Decode(Encode(s)) == s.
type Encoding struct {
	name string

	once  sync.Once
	load  func() codec // nil after loading
	codec codec

	special   map[string]int // name → id
	specialID map[int]string // id → text it decodes to

	framing *Framing // the chat format of EncodingSpec.ChatFormat, nil for none
}

// codec is the tokenizing engine behind an Encoding: [bpe], over an
// embedded table for the built-in encodings, over the ranks NewEncoding
// read for the others.
// Inputs are valid UTF-8 (Encoding sanitizes them first).
type codec interface {
	count(text string) int
	encode(dst []int, text string) []int
	// decode appends the bytes of the ordinary (non-special) tokens ids to
	// dst; it returns the first id it does not know and ok == false.
	decode(dst []byte, ids []int) (out []byte, bad int, ok bool)
}

// newEncoding returns an Encoding whose codec is built by load on first use.
// specials lists name/id pairs in definition order; when two names share an
// id, the later one is what the id decodes to (as in tiktoken).
func newEncoding(name string, load func() codec, specials []special) *Encoding {
	e := &Encoding{
		name:      name,
		load:      load,
		special:   make(map[string]int, len(specials)),
		specialID: make(map[int]string, len(specials)),
	}
	for _, s := range specials {
		e.special[s.name] = s.id
		e.specialID[s.id] = s.name
	}
	return e
}

type special struct {
	name string
	id   int
}

// ready loads the codec once. It is cheap after the first call (one atomic
// load).
func (e *Encoding) ready() codec {
	e.once.Do(func() {
		e.codec = e.load()
		e.load = nil
	})
	return e.codec
}

// Name returns the encoding's name, e.g. "o200k_base".
func (e *Encoding) Name() string { return e.name }

// Count returns the number of tokens Encode would return for text, without
// building the slice.
func (e *Encoding) Count(text string) int {
	return e.ready().count(sanitize(text))
}

// Encode returns the token IDs of text, special-token text included as
// ordinary text. The caller owns the returned slice.
func (e *Encoding) Encode(text string) []int {
	return e.ready().encode(nil, sanitize(text))
}

// Decode returns the text of ids: the concatenated bytes of the tokens,
// with each special token's ID rendered as its text (e.g. "<|start|>").
// The result is not necessarily valid UTF-8, because a token may hold part
// of a multi-byte character; decoding a sequence split anywhere and
// concatenating the parts gives the same bytes. It returns an error
// wrapping [ErrInvalidToken] for an ID the encoding does not have.
func (e *Encoding) Decode(ids []int) (string, error) {
	c := e.ready()
	out := make([]byte, 0, len(ids)*4)
	for len(ids) > 0 {
		// Ordinary IDs up to the next special one go to the codec in one call.
		n := 0
		for n < len(ids) {
			if _, ok := e.specialID[ids[n]]; ok {
				break
			}
			n++
		}
		var bad int
		var ok bool
		if out, bad, ok = c.decode(out, ids[:n]); !ok {
			return "", fmt.Errorf("%w: %d in %s", ErrInvalidToken, bad, e.name)
		}
		if n < len(ids) {
			out = append(out, e.specialID[ids[n]]...)
			n++
		}
		ids = ids[n:]
	}
	return string(out), nil
}

// SpecialToken returns the ID of the special token name (e.g.
// "<|endoftext|>") and whether the encoding has it.
func (e *Encoding) SpecialToken(name string) (int, bool) {
	id, ok := e.special[name]
	return id, ok
}

// SpecialTokens returns the encoding's special-token names, sorted.
// The caller owns the returned slice.
func (e *Encoding) SpecialTokens() []string {
	names := make([]string, 0, len(e.special))
	for n := range e.special {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// sanitize replaces each byte of s that is not part of a valid UTF-8
// sequence with U+FFFD, as encoding/json does. Valid input is returned
// unchanged and without allocating.
func sanitize(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
