package prolog

import (
	"fmt"
	"io"
	"strings"
	"sync"

	ichiban "github.com/ichiban/prolog"
	"github.com/ichiban/prolog/engine"
)

// ReadLimits bound [ReadTerm]. Zero fields take the defaults.
type ReadLimits struct {
	// MaxBytes bounds the text. Zero means 64 KiB.
	MaxBytes int
	// MaxDepth bounds the nesting of brackets in the text and of the term
	// read (a list element counts one level deeper than its list). Zero
	// means 64.
	MaxDepth int
	// MaxTerms bounds the number of subterms (atoms, numbers, compounds,
	// list cells). Zero means 100000.
	MaxTerms int
}

// DefaultReadLimits are the limits of a [ReadTerm] that sets none.
var DefaultReadLimits = ReadLimits{MaxBytes: 64 << 10, MaxDepth: 64, MaxTerms: 100000}

func (l ReadLimits) withDefaults() ReadLimits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultReadLimits.MaxBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultReadLimits.MaxDepth
	}
	if l.MaxTerms <= 0 {
		l.MaxTerms = DefaultReadLimits.MaxTerms
	}
	return l
}

// ReadError reports text that [ReadTerm] refuses: a syntax error, a limit,
// a variable or more than one term. Offset is the byte offset in the text
// given to ReadTerm, Pos the same place as line and column. Msg is written
// for the author of the text (a planner model reads it back).
type ReadError struct {
	Offset int
	Pos    Pos
	Msg    string
}

func (e *ReadError) Error() string { return fmt.Sprintf("prolog: read term: %s: %s", e.Pos, e.Msg) }

// readVM is a private VM that only ever parses: ichiban's standard operator
// table and double_quotes=chars, built once and never changed afterwards
// (no op/3 or set_prolog_flag/2 ever runs on it), so text read with it
// cannot depend on, or alter, any user interpreter. Parsers only read its
// operator map, so concurrent ReadTerm calls are safe.
var readVM = sync.OnceValue(func() *engine.VM {
	ip := ichiban.New(strings.NewReader(""), io.Discard)
	return &ip.VM
})

// ReadTerm reads one ground term from untrusted text (a model's answer)
// without executing anything: the standard operator table of a private VM
// (never the caller's), double_quotes=chars (a "string" reads as a compact
// chars list, [engine.CharList]), no variables (a variable is an error), at
// most lim.MaxBytes of text, lim.MaxDepth of nesting and lim.MaxTerms
// subterms. The final full stop is optional; text after the term is an
// error. Errors are [*ReadError]. ReadTerm is safe for concurrent use.
func ReadTerm(text string, lim ReadLimits) (engine.Term, error) {
	lim = lim.withDefaults()
	if len(text) > lim.MaxBytes {
		return nil, &ReadError{Offset: lim.MaxBytes, Pos: position(text, lim.MaxBytes),
			Msg: fmt.Sprintf("text is %d bytes, more than the limit of %d", len(text), lim.MaxBytes)}
	}
	body := strings.TrimRight(text, " \t\r\n")
	if strings.TrimSpace(body) == "" {
		return nil, &ReadError{Pos: Pos{1, 1}, Msg: "empty text: expected a term"}
	}
	// NB: ichiban's parser recurses without bound on some texts that end
	// inside a term, so it must always see a full stop (scan checks it).
	if !strings.HasSuffix(body, ".") || strings.HasSuffix(body, "..") || len(body) > 1 && isSymbolChar(body[len(body)-2]) {
		body += "\n." // a newline first: the text may end in a % comment
	}
	if off, ok := bracketDepthExceeded(body, lim.MaxDepth); ok {
		return nil, &ReadError{Offset: off, Pos: position(text, off), Msg: fmt.Sprintf("nesting deeper than the limit of %d", lim.MaxDepth)}
	}
	src, err := scan(body)
	if err != nil {
		return nil, readErrorOf(text, err)
	}
	if len(src.clauses) != 1 {
		off := 0
		if len(src.clauses) > 1 {
			off = src.origOffset(src.clauses[1].start)
		}
		return nil, &ReadError{Offset: off, Pos: position(text, off), Msg: "expected exactly one term; found text after the term's full stop"}
	}
	r := &countingReader{s: src.text}
	p := engine.NewParser(readVM(), r)
	t, err := p.Term()
	if err != nil {
		off := src.origOffset(tokenStart(r.s, r.off, err))
		return nil, &ReadError{Offset: off, Pos: position(text, off), Msg: err.Error()}
	}
	if len(p.Vars) > 0 {
		name := p.Vars[0].Name.String()
		off := max(0, strings.Index(text, name))
		return nil, &ReadError{Offset: off, Pos: position(text, off),
			Msg: fmt.Sprintf("variables are not allowed (found %s); write data only: atoms, numbers, \"strings\", lists and compounds", name)}
	}
	if msg := checkTerm(t, lim); msg != "" {
		return nil, &ReadError{Pos: Pos{1, 1}, Msg: msg}
	}
	return t, nil
}

func readErrorOf(text string, err error) error {
	if se, ok := err.(*SyntaxError); ok {
		return &ReadError{Offset: offsetOf(text, se.Pos), Pos: se.Pos, Msg: se.Msg}
	}
	return &ReadError{Pos: Pos{1, 1}, Msg: err.Error()}
}

// offsetOf converts a line and rune column back to a byte offset of text.
func offsetOf(text string, p Pos) int {
	off := 0
	for line := 1; line < p.Line; line++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	for col := 1; col < p.Col && off < len(text); col++ {
		_, n := decodeRune(text[off:])
		off += n
	}
	return min(off, len(text))
}

func decodeRune(s string) (rune, int) {
	for i, r := range s {
		if i == 0 {
			return r, len(string(r))
		}
	}
	return 0, 1
}

// bracketDepthExceeded scans for (, [ and { outside quotes and comments and
// reports the offset where their nesting first exceeds max, so the parser's
// recursion stays bounded before it starts.
func bracketDepthExceeded(s string, limit int) (int, bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"', '`':
			if c == '\'' && i > 0 && s[i-1] == '0' {
				i++ // 0'c
				continue
			}
			for j := i + 1; j < len(s); j++ {
				if s[j] == '\\' {
					j = skipEscape(s, j)
					i = j
					continue
				}
				if s[j] == c {
					i = j
					break
				}
				i = j
			}
		case '%':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case '(', '[', '{':
			depth++
			if depth > limit {
				return i, true
			}
		case ')', ']', '}':
			depth--
		}
	}
	return 0, false
}

// skipEscape returns the index of the last byte of the escape sequence
// starting with the backslash at s[j]: \c, or \xHEX\ and \OCTAL\.
func skipEscape(s string, j int) int {
	k := j + 1
	if k < len(s) && (s[k] == 'x' || s[k] >= '0' && s[k] <= '7') {
		for m := k + 1; m < len(s) && m < k+12; m++ {
			if s[m] == '\\' {
				return m
			}
			c := s[m]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				break
			}
		}
	}
	return k
}

// checkTerm walks t iteratively and reports a limit it breaks ("" if none).
func checkTerm(t engine.Term, lim ReadLimits) string {
	type item struct {
		t     engine.Term
		depth int
	}
	stack := []item{{t, 1}}
	n := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n++
		if n > lim.MaxTerms {
			return fmt.Sprintf("more than %d subterms", lim.MaxTerms)
		}
		if it.depth > lim.MaxDepth {
			return fmt.Sprintf("term nested deeper than the limit of %d", lim.MaxDepth)
		}
		switch c := it.t.(type) {
		case engine.Variable:
			return "variables are not allowed"
		case engine.Compound:
			if _, text := c.(fmt.Stringer); text && c.Functor() == atomDot {
				continue // a "string": one compact chars list
			}
			if c.Functor() == atomDot && c.Arity() == 2 {
				// A list's tail is at the list's own depth.
				stack = append(stack, item{c.Arg(0), it.depth + 1}, item{c.Arg(1), it.depth})
				continue
			}
			for i := c.Arity() - 1; i >= 0; i-- {
				stack = append(stack, item{c.Arg(i), it.depth + 1})
			}
		}
	}
	return ""
}
