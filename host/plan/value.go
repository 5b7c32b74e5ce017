package plan

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rlmpl/rlmpl/host/handle"
)

// Plan values are Go values: nil, bool, int64, float64, string, [Atom],
// []any, map[string]any (an object), [Record] and [Compound] (from term
// literals), and the host's own results: handle.Ref (the context input),
// handle.Metadata, handle.Item, handle.Match, handle.Part and slices of
// them, []string, and [ModelResult]. Tools may return any of these. The
// Prolog layer converts them to and from terms (host/planterm); this
// package never sees a Prolog term.
//
// The output-byte budget measures a value by its canonical JSON encoding
// (see [Size]), independent of any Prolog printer.

// Atom is an atom: a name, as opposed to text (a string).
type Atom string

// Record is a record term Tag([key(Value), ...]), the stand-in for the
// upstream system's dicts: error records, term literals of that shape.
type Record struct {
	Tag    string
	Fields []Field
}

// Get returns the value of the first field named key.
func (r Record) Get(key string) (any, bool) {
	for _, f := range r.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// Compound is any other compound term Functor(Args...). Its arguments are
// plan values or, in a raw term (see [Term]), raw terms.
type Compound struct {
	Functor string
	Args    []any
}

// Size returns the canonical size of v in bytes: the length of its
// canonical JSON encoding ([Encode]).
func Size(v any) int {
	e := encoder{count: true}
	e.value(v, 0)
	return e.n
}

// Encode returns the canonical JSON encoding of v: objects with keys
// sorted, no insignificant space, strings with only the escapes JSON
// requires, host values as documented on [Size]'s mapping (a Match is
// {"index":I,"value":V}, a Part {"index","length","start","value"}, an Item
// its text, a Ref "context_handle(Id,V)", a ModelResult
// {"model","reasoning","text"}, an atom a string, a record {"Tag":{fields}},
// a compound {"Functor":[args]}).
func Encode(v any) string {
	var e encoder
	e.value(v, 0)
	return string(e.buf)
}

type encoder struct {
	count bool
	n     int
	buf   []byte
	limit int // when > 0, stop appending past limit bytes (summaries)
}

func (e *encoder) raw(s string) {
	if e.count {
		e.n += len(s)
		return
	}
	if e.limit > 0 && len(e.buf) > e.limit {
		return
	}
	e.buf = append(e.buf, s...)
}

func (e *encoder) byte(c byte) {
	if e.count {
		e.n++
		return
	}
	if e.limit > 0 && len(e.buf) > e.limit {
		return
	}
	e.buf = append(e.buf, c)
}

const hexDigits = "0123456789abcdef"

func (e *encoder) str(s string) {
	e.byte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || n != 1 {
				i += n - 1
				continue
			}
			e.raw(s[start:i])
			e.raw(`\ufffd`)
			start = i + 1
			continue
		}
		e.raw(s[start:i])
		switch c {
		case '"':
			e.raw(`\"`)
		case '\\':
			e.raw(`\\`)
		case '\n':
			e.raw(`\n`)
		case '\t':
			e.raw(`\t`)
		case '\r':
			e.raw(`\r`)
		default:
			e.raw(`\u00`)
			e.byte(hexDigits[c>>4])
			e.byte(hexDigits[c&0xf])
		}
		start = i + 1
	}
	e.raw(s[start:])
	e.byte('"')
}

func (e *encoder) int(n int64) {
	if e.count {
		e.n += intLen(n)
		return
	}
	e.buf = strconv.AppendInt(e.buf, n, 10)
}

func intLen(n int64) int {
	l := 1
	if n < 0 {
		l++
		if n == math.MinInt64 {
			return 20
		}
		n = -n
	}
	for n >= 10 {
		n /= 10
		l++
	}
	return l
}

// maxEncodeDepth stops runaway nesting (a tool returning a deep value).
const maxEncodeDepth = 256

func (e *encoder) value(v any, depth int) {
	if depth > maxEncodeDepth {
		e.raw(`"…"`)
		return
	}
	d := depth + 1
	switch v := v.(type) {
	case nil:
		e.raw("null")
	case bool:
		if v {
			e.raw("true")
		} else {
			e.raw("false")
		}
	case int:
		e.int(int64(v))
	case int64:
		e.int(v)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			e.raw("null")
			return
		}
		e.raw(strconv.FormatFloat(v, 'g', -1, 64))
	case string:
		e.str(v)
	case Atom:
		e.str(string(v))
	case []any:
		encodeList(e, v, d)
	case []string:
		e.byte('[')
		for i, x := range v {
			if i > 0 {
				e.byte(',')
			}
			e.str(x)
		}
		e.byte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		e.byte('{')
		for i, k := range keys {
			if i > 0 {
				e.byte(',')
			}
			e.str(k)
			e.byte(':')
			e.value(v[k], d)
		}
		e.byte('}')
	case handle.Ref:
		e.str(v.String())
	case handle.Item:
		e.str(v.Text)
	case []handle.Item:
		e.byte('[')
		for i, x := range v {
			if i > 0 {
				e.byte(',')
			}
			e.str(x.Text)
		}
		e.byte(']')
	case handle.Match:
		e.raw(`{"index":`)
		e.int(int64(v.Index))
		e.raw(`,"value":`)
		e.value(v.Value, d)
		e.byte('}')
	case []handle.Match:
		encodeList(e, v, d)
	case handle.Part:
		e.raw(`{"index":`)
		e.int(int64(v.Index))
		e.raw(`,"length":`)
		e.int(int64(v.Length))
		e.raw(`,"start":`)
		e.int(int64(v.Start))
		e.raw(`,"value":`)
		e.value(v.Value, d)
		e.byte('}')
	case []handle.Part:
		encodeList(e, v, d)
	case handle.Metadata:
		e.str(v.Describe())
	case ModelResult:
		e.raw(`{"model":`)
		e.str(v.Model)
		e.raw(`,"reasoning":`)
		e.str(v.Reasoning)
		e.raw(`,"text":`)
		e.str(v.Text)
		e.byte('}')
	case Record:
		e.byte('{')
		e.str(v.Tag)
		e.raw(":{")
		for i, f := range v.Fields {
			if i > 0 {
				e.byte(',')
			}
			e.str(f.Key)
			e.byte(':')
			e.value(f.Value, d)
		}
		e.raw("}}")
	case Compound:
		e.byte('{')
		e.str(v.Functor)
		e.raw(":[")
		for i, a := range v.Args {
			if i > 0 {
				e.byte(',')
			}
			e.value(a, d)
		}
		e.raw("]}")
	default:
		e.str(fmt.Sprint(v))
	}
}

// renderValue renders v for messages: atoms bare, everything else as
// canonical JSON, cut at 200 bytes.
func renderValue(v any) string {
	switch v := v.(type) {
	case Atom:
		return string(v)
	case Compound:
		if v.Functor == "/" && len(v.Args) == 2 {
			return renderValue(v.Args[0]) + "/" + renderValue(v.Args[1])
		}
		parts := make([]string, len(v.Args))
		for i, a := range v.Args {
			parts[i] = renderValue(a)
		}
		return v.Functor + "(" + strings.Join(parts, ",") + ")"
	case Record:
		parts := make([]string, len(v.Fields))
		for i, f := range v.Fields {
			parts[i] = f.Key + "(" + renderValue(f.Value) + ")"
		}
		return v.Tag + "([" + strings.Join(parts, ",") + "])"
	case []any:
		parts := make([]string, len(v))
		for i, a := range v {
			parts[i] = renderValue(a)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return summarize(v, 200)
}

// summarize is the canonical JSON of v cut at n bytes (on a rune boundary).
func summarize(v any, n int) string {
	e := encoder{limit: n + 4}
	e.value(v, 0)
	s := string(e.buf)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// fieldOf returns v's field key (see [FieldOf]).
func fieldOf(v any, key string) (any, bool) {
	switch v := v.(type) {
	case map[string]any:
		x, ok := v[key]
		return x, ok
	case Record:
		return v.Get(key)
	case ModelResult:
		switch key {
		case "text":
			return v.Text, true
		case "reasoning":
			return v.Reasoning, true
		case "model":
			return v.Model, true
		}
	case handle.Match:
		switch key {
		case "index":
			return int64(v.Index), true
		case "value":
			return v.Value, true
		}
	case handle.Part:
		switch key {
		case "index":
			return int64(v.Index), true
		case "start":
			return int64(v.Start), true
		case "length":
			return int64(v.Length), true
		case "value":
			return v.Value, true
		}
	case handle.Item:
		switch key {
		case "text":
			return v.Text, true
		case "value":
			return v.Value, true
		}
	case handle.Metadata:
		switch key {
		case "kind":
			return v.Kind, true
		case "backend":
			return v.Backend, true
		case "bytes":
			return v.Bytes, true
		case "items":
			return v.Items, true
		case "version":
			return int64(v.Version), true
		}
	}
	return nil, false
}

// textOf returns v as prompt text: a string, an atom, an Item's text, a
// model result's text.
func textOf(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case Atom:
		return string(v), true
	case handle.Item:
		return v.Text, true
	case ModelResult:
		return v.Text, true
	}
	return "", false
}

// TermValue converts a plan value to the values that have a term form
// (host/planterm makes the term), for the Prolog layer: text stays a string,
// nil is the atom null, a bool the atom true or false, a map the record
// json([k(V), ...]) with keys sorted, a handle.Ref context_handle(Id, V), a
// Match match([index(I), value(V)]), a Part part([index, length, start,
// value]), an Item its own Value when it has one (else its text), Metadata
// context_metadata([...]) and a ModelResult model_response([model, reasoning,
// text]).
func TermValue(v any) any {
	rec := func(tag string, fs ...Field) Record { return Record{Tag: tag, Fields: fs} }
	f := func(k string, v any) Field { return Field{Key: k, Value: v} }
	switch v := v.(type) {
	case nil:
		return Atom("null")
	case bool:
		if v {
			return Atom("true")
		}
		return Atom("false")
	case int:
		return int64(v)
	case []any:
		return termValues(v)
	case []string:
		return termValues(v)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		fs := make([]Field, len(keys))
		for i, k := range keys {
			fs[i] = f(k, TermValue(v[k]))
		}
		return rec("json", fs...)
	case handle.Ref:
		return Compound{Functor: "context_handle", Args: []any{Atom(v.ID), int64(v.Version)}}
	case handle.Item:
		if v.Value != nil {
			return v.Value
		}
		return v.Text
	case []handle.Item:
		return termValues(v)
	case handle.Match:
		return rec("match", f("index", int64(v.Index)), f("value", TermValue(v.Value)))
	case []handle.Match:
		return termValues(v)
	case handle.Part:
		return rec("part", f("index", int64(v.Index)), f("length", int64(v.Length)), f("start", int64(v.Start)), f("value", TermValue(v.Value)))
	case []handle.Part:
		return termValues(v)
	case handle.Metadata:
		return rec("context_metadata", f("backend", Atom(v.Backend)), f("bytes", v.Bytes), f("items", v.Items),
			f("kind", Atom(v.Kind)), f("version", int64(v.Version)))
	case ModelResult:
		return rec("model_response", f("model", v.Model), f("reasoning", v.Reasoning), f("text", v.Text))
	}
	return v
}

// encodeList encodes a slice of plan values as a JSON array.
func encodeList[T any](e *encoder, v []T, d int) {
	e.byte('[')
	for i, x := range v {
		if i > 0 {
			e.byte(',')
		}
		e.value(x, d)
	}
	e.byte(']')
}

// termValues applies TermValue to each element.
func termValues[T any](v []T) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = TermValue(x)
	}
	return out
}
