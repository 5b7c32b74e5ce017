// Package handle holds opaque context handles: large values (a text, a
// list of terms, a conversation behind an adapter) that a planner model
// inspects through bounded operations — peek, slice, search, partition, map,
// reduce — instead of reading them whole.
//
// Every operation is bounded by [Limits] validated before any work:
// MaxResults items, MaxBytes for the whole returned value (see [Size] for the
// canonical measure) and TimeLimit. A result's Truncated flag is true only
// when the limits actually left something out of what the request asked for.
// Text is never cut inside a UTF-8 sequence.
//
// Handles are versioned refs (Id, Version); a deleted handle leaves a
// tombstone so later use is [KindStaleHandle], not [KindUnknownHandle].
// Tombstones and traces are bounded rings (Options.Tombstones,
// Options.TraceEvents), so a long-lived session does not grow without bound.
//
// A [Registry] is safe for concurrent use.
package handle

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Ref identifies one version of a context: context_handle(ID, Version).
type Ref struct {
	ID      string
	Version int
}

func (r Ref) String() string { return fmt.Sprintf("context_handle(%s,%d)", r.ID, r.Version) }

// Limits bound one operation. Zero fields take the defaults.
type Limits struct {
	MaxResults int           // items in the result; zero means 32
	MaxBytes   int           // bytes of the whole result ([Size]); zero means 16384
	TimeLimit  time.Duration // wall time; zero means 250ms
}

// DefaultLimits are the limits of an operation that sets none.
var DefaultLimits = Limits{MaxResults: 32, MaxBytes: 16384, TimeLimit: 250 * time.Millisecond}

// withDefaults fills zero fields and rejects negative ones.
func (l Limits) withDefaults() (Limits, error) {
	switch {
	case l.MaxResults < 0:
		return l, errorf(OpOptions, KindInvalidLimit, "max_results must be > 0", F("limit", "max_results"), F("value", l.MaxResults))
	case l.MaxBytes < 0:
		return l, errorf(OpOptions, KindInvalidLimit, "max_bytes must be > 0", F("limit", "max_bytes"), F("value", l.MaxBytes))
	case l.TimeLimit < 0:
		return l, errorf(OpOptions, KindInvalidLimit, "time_limit must be > 0", F("limit", "time_limit"), F("value", l.TimeLimit.Seconds()))
	}
	if l.MaxResults == 0 {
		l.MaxResults = DefaultLimits.MaxResults
	}
	if l.MaxBytes == 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	if l.TimeLimit == 0 {
		l.TimeLimit = DefaultLimits.TimeLimit
	}
	return l, nil
}

// Item is one element of a terms context or of an adapter's result. Text is
// its canonical rendering: what a model reads, what search matches and what
// counts against MaxBytes. Value is the caller's own representation (a
// Prolog term, a message view), carried opaquely.
type Item struct {
	Text  string
	Value any
}

// Match is a search hit: the item's (or line's) 0-based index and value
// (a string for text contexts, an [Item] otherwise).
type Match struct {
	Index int
	Value any
}

// Part is one chunk of a partition: its index, the start offset and length
// (characters of a text, items of a list) and its value (a string, a list of
// line strings, or []Item).
type Part struct {
	Index, Start, Length int
	Value                any
}

// Size is the canonical byte measure of a result value that MaxBytes
// bounds: UTF-8 bytes of strings and of an Item's Text, summed over slices;
// a Match or Part counts its value; an integer counts its decimal digits.
func Size(v any) int {
	switch v := v.(type) {
	case string:
		return len(v)
	case Item:
		return len(v.Text)
	case Match:
		return Size(v.Value)
	case Part:
		return Size(v.Value)
	case []string:
		n := 0
		for _, s := range v {
			n += len(s)
		}
		return n
	case []Item:
		n := 0
		for _, it := range v {
			n += len(it.Text)
		}
		return n
	case []Match:
		n := 0
		for _, m := range v {
			n += Size(m.Value)
		}
		return n
	case []Part:
		n := 0
		for _, p := range v {
			n += Size(p.Value)
		}
		return n
	case int:
		return len(fmt.Sprint(v))
	case int64:
		return len(fmt.Sprint(v))
	case Metadata:
		return v.size()
	}
	return len(fmt.Sprint(v))
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// runeSlice returns the characters [start, start+length) of s.
func runeSlice(s string, start, length int) string {
	i := 0
	b := 0
	for b < len(s) && i < start {
		_, n := utf8.DecodeRuneInString(s[b:])
		b += n
		i++
	}
	e := b
	for e < len(s) && i < start+length {
		_, n := utf8.DecodeRuneInString(s[e:])
		e += n
		i++
	}
	return s[b:e]
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
