package plan

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Term-syntax plans reach this package as raw term trees, never as Prolog
// terms: a [TermReader] (the host's, over its Prolog reader) turns planner
// text into one, and the host converts the plan terms its trusted Prolog
// handlers build the same way. [FromTerm] walks the tree into the AST.

// Term is a node of a raw term tree, one of:
//
//	Atom       an atom; [] is the empty list (and the empty string)
//	int64      an integer
//	float64    a float
//	string     text: a non-empty list of one-character atoms, held compactly
//	[]any      a non-empty proper list of Terms (one-character atoms too)
//	Compound   any other compound, of Terms; '.'/2 for a list that is not proper
//	Var        a variable (only a handler-built term can hold one)
//	Elided     what a builder left out at a limit
type Term = any

// Var is a variable of a raw term. FromTerm rejects it (detail
// non_ground_recursive_plan): a plan is data.
type Var struct{}

// Elided stands in a raw term for a subterm its builder did not convert
// because the term broke [MaxTermDepth] (Deep) or [MaxTermNodes]. It makes
// conversion total: a cyclic Prolog term converts to a finite tree that
// FromTerm rejects with detail recursive_cycle(cyclic_term) (Deep) or
// plan_too_large.
type Elided struct{ Deep bool }

// Limits of a raw term tree, which a builder converting from another
// representation enforces by putting an [Elided] in place of the rest:
// nesting (a list element is one level below its list) and nodes (atoms,
// numbers, texts, compounds and list cells; a node shared by a directed
// acyclic term counts each time it is reached).
const (
	MaxTermDepth = 1024
	MaxTermNodes = 100000
)

// ReadLimits bound a [TermReader]. A zero field means the reader's default.
type ReadLimits struct {
	MaxBytes int // bytes of text
	MaxDepth int // nesting of brackets and of the term
	MaxTerms int // subterms
}

// ReadError reports text a [TermReader] refuses: a syntax error, a limit, a
// variable, or more than one term. Offset is a byte offset in the text read;
// Msg is written for the text's author (a planner model reads it back).
type ReadError struct {
	Offset int
	Msg    string
}

func (e *ReadError) Error() string {
	return fmt.Sprintf("plan: read term at offset %d: %s", e.Offset, e.Msg)
}

// TermReader reads one ground term from untrusted text into a raw term
// tree, executing nothing: the standard operator table only, no variables,
// within lim, the final full stop optional. Errors should be [*ReadError]s,
// so that parse errors point into the planner's text. It must be safe for
// concurrent use. The host's is planterm.Reader.
type TermReader interface {
	ReadTerm(text string, lim ReadLimits) (Term, error)
}

// listCell splits a non-empty list node into its head and tail, as the
// '.'/2 cell it stands for.
func listCell(t Term) (head, tail Term, ok bool) {
	switch c := t.(type) {
	case []any:
		switch len(c) {
		case 0:
			return nil, nil, false
		case 1:
			return c[0], Atom("[]"), true
		}
		return c[0], c[1:], true
	case string:
		if c == "" {
			return nil, nil, false
		}
		r, size := utf8.DecodeRuneInString(c)
		if size == len(c) {
			return Atom(string(r)), Atom("[]"), true
		}
		return Atom(string(r)), c[size:], true
	}
	return nil, nil, false
}

// text reads an atom, a number, a string, or a list of one-character
// atoms and character codes as text (Prolog's text conversion; [] is "").
func text(t Term) (string, bool) {
	switch v := t.(type) {
	case Atom:
		if v == "[]" {
			return "", true
		}
		return string(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case float64:
		return formatFloat(v), true
	case string:
		return v, true
	case []any:
		var sb strings.Builder
		for _, e := range v {
			switch e := e.(type) {
			case Atom:
				if utf8.RuneCountInString(string(e)) != 1 {
					return "", false
				}
				sb.WriteString(string(e))
			case int64:
				if e < 0 || e > utf8.MaxRune {
					return "", false
				}
				sb.WriteRune(rune(e))
			default:
				return "", false
			}
		}
		return sb.String(), true
	}
	return "", false
}

// isText reports whether t is a string: a non-empty list that reads as
// text.
func isText(t Term) bool {
	switch t.(type) {
	case string:
		return true
	case []any:
		_, ok := text(t)
		return ok
	}
	return false
}

// value converts a ground raw term to a plan value: [] is the empty list,
// a non-empty list of one-character atoms a string, a compound whose only
// argument is a list of one-argument compounds a [Record], any other
// compound a [Compound]. A list that is not proper is an error.
func value(t Term) (any, error) {
	switch v := t.(type) {
	case Atom:
		if v == "[]" {
			return []any{}, nil
		}
		return v, nil
	case int64, float64, string:
		return v, nil
	case []any:
		if s, ok := chars(v); ok {
			return s, nil
		}
		out := make([]any, len(v))
		for i, e := range v {
			x, err := value(e)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case Compound:
		if v.Functor == "." && len(v.Args) == 2 {
			return nil, fmt.Errorf("type_error(list,%s)", show(v))
		}
		if r, ok := recordOf(v); ok {
			for i, f := range r.Fields {
				x, err := value(f.Value)
				if err != nil {
					return nil, err
				}
				r.Fields[i].Value = x
			}
			return r, nil
		}
		args := make([]any, len(v.Args))
		for i, a := range v.Args {
			x, err := value(a)
			if err != nil {
				return nil, err
			}
			args[i] = x
		}
		return Compound{Functor: v.Functor, Args: args}, nil
	}
	return nil, fmt.Errorf("not a ground term: %s", show(t))
}

// chars reads a non-empty list of one-character atoms as text.
func chars(l []any) (string, bool) {
	if len(l) == 0 {
		return "", false
	}
	var sb strings.Builder
	for _, e := range l {
		a, ok := e.(Atom)
		if r, n := utf8.DecodeRuneInString(string(a)); !ok || n == 0 || n != len(a) || r == utf8.RuneError && n == 1 {
			return "", false
		}
		sb.WriteString(string(a))
	}
	return sb.String(), true
}

// recordOf reads Tag([key(V), ...]) (or Tag([])) as a record whose field
// values are still raw terms.
func recordOf(c Compound) (Record, bool) {
	if len(c.Args) != 1 {
		return Record{}, false
	}
	if c.Args[0] == Atom("[]") {
		return Record{Tag: c.Functor, Fields: []Field{}}, true
	}
	elems, ok := c.Args[0].([]any)
	if !ok {
		return Record{}, false
	}
	r := Record{Tag: c.Functor, Fields: make([]Field, len(elems))}
	for i, e := range elems {
		f, ok := e.(Compound)
		if !ok || len(f.Args) != 1 {
			return Record{}, false
		}
		r.Fields[i] = Field{Key: f.Functor, Value: f.Args[0]}
	}
	return r, true
}

// show renders a raw term for messages, as Prolog's write/1 does in
// canonical form (f(a,b), [a,b], -(1,2), a string as its characters), cut
// at 80 bytes.
func show(t Term) string {
	const n = 80
	w := termWriter{limit: n + 1}
	w.term(t)
	s := w.sb.String()
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// termWriter writes a raw term, stopping past limit bytes.
type termWriter struct {
	sb    strings.Builder
	limit int
}

func (w *termWriter) term(t Term) {
	if w.sb.Len() > w.limit {
		return
	}
	switch v := t.(type) {
	case Atom:
		w.sb.WriteString(string(v))
	case int64:
		w.sb.WriteString(strconv.FormatInt(v, 10))
	case float64:
		w.sb.WriteString(formatFloat(v))
	case Var:
		w.sb.WriteString("_")
	case Elided:
		w.sb.WriteString("…")
	case string, []any:
		w.sb.WriteByte('[')
		for i := 0; ; i++ {
			h, tail, _ := listCell(t)
			if i > 0 {
				w.sb.WriteByte(',')
			}
			w.term(h)
			if tail == Atom("[]") || w.sb.Len() > w.limit {
				break
			}
			t = tail
		}
		w.sb.WriteByte(']')
	case Compound:
		switch {
		case v.Functor == "." && len(v.Args) == 2:
			w.sb.WriteByte('[')
			w.term(v.Args[0])
			for tail := v.Args[1]; w.sb.Len() <= w.limit; {
				if c, ok := tail.(Compound); ok && c.Functor == "." && len(c.Args) == 2 {
					w.sb.WriteByte(',')
					w.term(c.Args[0])
					tail = c.Args[1]
					continue
				}
				w.sb.WriteByte('|')
				w.term(tail)
				break
			}
			w.sb.WriteByte(']')
		case v.Functor == "{}" && len(v.Args) == 1:
			w.sb.WriteByte('{')
			w.term(v.Args[0])
			w.sb.WriteByte('}')
		default:
			w.sb.WriteString(v.Functor)
			w.sb.WriteByte('(')
			for i, a := range v.Args {
				if i > 0 {
					w.sb.WriteByte(',')
				}
				w.term(a)
			}
			w.sb.WriteByte(')')
		}
	default:
		fmt.Fprint(&w.sb, v)
	}
}

// formatFloat writes a float as Prolog does: always with a fraction or an
// exponent marked as a float (1.0, 1.0e-10, 2.5e+10).
func formatFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	} else if i := strings.IndexAny(s, "eE"); i >= 0 && !strings.Contains(s[:i], ".") {
		s = s[:i] + ".0" + s[i:]
	}
	return s
}
