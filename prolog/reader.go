package prolog

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Pos is a position in Prolog source text: 1-based line and column, the
// column counted in runes.
type Pos struct {
	Line, Col int
}

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// SyntaxError reports Prolog text that the reader cannot parse. ichiban's
// parser reports no position at all, so the host's reader locates the clause
// and the token where parsing stopped.
type SyntaxError struct {
	File string // "" when the text did not come from a file
	Pos  Pos
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.File == "" {
		return fmt.Sprintf("syntax error: %s: %s", e.Pos, e.Msg)
	}
	return fmt.Sprintf("%s:%s: syntax error: %s", e.File, e.Pos, e.Msg)
}

// clauseSpan is one clause of a source text: its bytes in the escaped text,
// and where it starts in the original.
type clauseSpan struct {
	start, end int // byte offsets in the escaped text
}

// source is Prolog text prepared for ichiban: non-ASCII runes inside quoted
// atoms rewritten as \xHEX\ escapes (ichiban's lexer rejects most of them),
// split into clauses, with a map back to original positions.
type source struct {
	text    string
	clauses []clauseSpan
	spans   []span // where the escaped text's bytes come from, in order
	src     string
	end     int // offset in src where scanning stopped
}

// isSymbolChar reports whether r is an ISO symbol char, which glues onto a
// following '.' so that "=.." is not an end token.
func isSymbolChar(r byte) bool {
	return strings.IndexByte(`+-*/\^<>=~:.?@#&$`, r) >= 0
}

func isLayout(r byte) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v'
}

// scan prepares src. It fails on unterminated quotes, block comments and
// clauses, which would otherwise surface from ichiban as a bare "EOF".
func scan(src string) (*source, error) { return scanClauses(src, -1) }

// span maps a run of the escaped text back to the original: escaped byte
// esc+k is original byte orig+k, or orig for every k when the run stands
// for other text (a comment, an escape).
type span struct {
	esc, orig int32
	flat      bool
}

// scanClauses is scan that stops after max clauses (max < 0: all); end is
// then the offset in src just after the last one's full stop.
func scanClauses(src string, max int) (*source, error) {
	var (
		b       strings.Builder
		s       = &source{src: src}
		inStart = -1 // escaped offset where the current clause started
	)
	b.Grow(len(src))
	emit := func(from int, text string) {
		esc := int32(b.Len())
		same := from+len(text) <= len(src) && src[from:from+len(text)] == text
		if n := len(s.spans); n == 0 || !same || s.spans[n-1].flat || s.spans[n-1].orig+esc-s.spans[n-1].esc != int32(from) {
			s.spans = append(s.spans, span{esc: esc, orig: int32(from), flat: !same})
		}
		b.WriteString(text)
	}
	startClause := func() {
		if inStart < 0 {
			inStart = b.Len()
		}
	}
	endClause := func() {
		s.clauses = append(s.clauses, clauseSpan{start: inStart, end: b.Len()})
		inStart = -1
	}
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '%':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				j = len(src) - i
			}
			emit(i, " ") // the lexer need not read comments again
			i += j
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return nil, &SyntaxError{Pos: position(src, i), Msg: "unterminated block comment"}
			}
			emit(i, " ")
			i += j + 4
		case c == '\'' || c == '"' || c == '`':
			startClause()
			// 0'c is a character code, not a quote.
			if c == '\'' && i > 0 && src[i-1] == '0' && (i < 2 || !isAlnum(src[i-2])) {
				j := i + 1
				switch {
				case j < len(src) && src[j] == '\\':
					j += 2
				case j+1 < len(src) && src[j] == '\'' && src[j+1] == '\'':
					j += 2
				case j < len(src):
					_, n := utf8.DecodeRuneInString(src[j:])
					j += n
				}
				j = min(j, len(src))
				emit(i, src[i:j])
				i = j
				continue
			}
			var parts []emitted
			j, err := scanQuoted(src, i, c == '\'', func(from int, text string) { parts = append(parts, emitted{from, text}) })
			if err != nil {
				return nil, err
			}
			wrap := c == '\'' && operandEnds(src, j)
			if wrap {
				emit(i, "(")
			}
			for _, p := range parts {
				emit(p.from, p.text)
			}
			if wrap {
				emit(j-1, ")")
			}
			i = j
		case c == '.' && (i+1 == len(src) || isLayout(src[i+1]) || src[i+1] == '%') &&
			(i == 0 || !isSymbolChar(src[i-1])):
			startClause()
			emit(i, ".")
			i++
			endClause()
			if len(s.clauses) == max {
				s.end = i
				s.text = b.String()
				return s, nil
			}
		case isLayout(c):
			emit(i, src[i:i+1])
			i++
		default:
			startClause()
			_, n := utf8.DecodeRuneInString(src[i:])
			emit(i, src[i:i+n])
			i += n
		}
	}
	if inStart >= 0 {
		// NB: besides being an error, ichiban's parser recurses without
		// bound on some texts that end inside a term ("[*"), killing the
		// process: it never sees a text that does not end with a full stop.
		s.text = b.String()
		return nil, &SyntaxError{Pos: position(src, s.origOffset(inStart)), Msg: "end of file in clause (missing full stop)"}
	}
	s.text = b.String()
	s.end = len(src)
	return s, nil
}

// NextClause splits text after the full stop that ends its first clause
// (quotes, 0'c and comments taken into account), for a reader that gets
// Prolog text piece by piece, such as a top level reading lines. It returns
// ok=false when text does not hold a complete clause yet: more input may
// complete it.
func NextClause(text string) (clause, rest string, ok bool) {
	s, err := scanClauses(text, 1)
	if err != nil || len(s.clauses) == 0 {
		return "", text, false
	}
	return text[:s.end], text[s.end:], true
}

// Blank reports whether text holds only layout and comments.
func Blank(text string) bool {
	s, err := scan(text)
	return err == nil && len(s.clauses) == 0
}

func isAlnum(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// emitted is one piece of escaped text and where it comes from.
type emitted struct {
	from int
	text string
}

// operandEnds reports whether the text after offset j closes an operand
// (',', ')', '|', ']', '}' or the clause's full stop). The reader
// brackets a quoted atom there: ichiban's parser takes a quoted atom that
// is a prefix operator ('-', '\+') as the operator and fails on what
// follows, where ISO and SWI-Prolog read the atom (X = '-', write(X)).
func operandEnds(src string, j int) bool {
	for j < len(src) && isLayout(src[j]) {
		j++
	}
	if j == len(src) {
		return false
	}
	switch c := src[j]; {
	case strings.IndexByte(",)|]}", c) >= 0:
		return true
	case c == '.':
		return j+1 == len(src) || isLayout(src[j+1]) || src[j+1] == '%'
	}
	return false
}

// scanQuoted copies the quoted item starting at src[i] and returns the index
// after its closing quote. In single-quoted atoms it escapes non-ASCII runes.
func scanQuoted(src string, i int, escape bool, emit func(int, string)) (int, error) {
	q := src[i]
	emit(i, src[i:i+1])
	j := i + 1
	for j < len(src) {
		c := src[j]
		switch {
		case c == '\\' && j+1 < len(src):
			n := escapeLen(src[j:])
			if r, ok := unicodeEscape(src[j : j+n]); ok {
				emit(j, fmt.Sprintf(`\x%X\`, r))
			} else {
				emit(j, src[j:j+n])
			}
			j += n
		case c == q && j+1 < len(src) && src[j+1] == q:
			emit(j, src[j:j+2])
			j += 2
		case c == q:
			emit(j, src[j:j+1])
			return j + 1, nil
		case c >= utf8.RuneSelf && escape:
			r, n := utf8.DecodeRuneInString(src[j:])
			if r == utf8.RuneError && n == 1 {
				emit(j, src[j:j+1]) // let the parser reject invalid UTF-8
			} else {
				emit(j, fmt.Sprintf(`\x%X\`, r))
			}
			j += n
		default:
			emit(j, src[j:j+1])
			j++
		}
	}
	return 0, &SyntaxError{Pos: position(src, i), Msg: fmt.Sprintf("unterminated quoted %s", quoteKind(q))}
}

// escapeLen returns the length of the escape sequence that starts with the
// backslash s[0]: \xHEX\ and \OCTAL\ run to their closing backslash (so
// that "\x41\" ends at its quote), \uXXXX and \UXXXXXXXX take their
// digits, any other escape is two bytes.
func escapeLen(s string) int {
	switch {
	case len(s) < 2:
		return len(s)
	case s[1] == 'u' || s[1] == 'U':
		n := 6
		if s[1] == 'U' {
			n = 10
		}
		if len(s) >= n && isHex(s[2:n]) {
			return n
		}
	case s[1] == 'x' || s[1] >= '0' && s[1] <= '7':
		return skipEscape(s, 0) + 1
	}
	return 2
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// unicodeEscape decodes SWI-Prolog's \uXXXX and \UXXXXXXXX escapes, which
// ichiban's lexer lacks; the reader hands them on as \xHEX\.
func unicodeEscape(esc string) (rune, bool) {
	if len(esc) < 6 || esc[1] != 'u' && esc[1] != 'U' {
		return 0, false
	}
	r, err := strconv.ParseUint(esc[2:], 16, 32)
	if err != nil || r > utf8.MaxRune || r >= 0xD800 && r < 0xE000 {
		return 0, false
	}
	return rune(r), true
}

func quoteKind(q byte) string {
	switch q {
	case '\'':
		return "atom"
	case '"':
		return "string"
	}
	return "back-quoted string"
}

// position converts a byte offset of src to a line and rune column.
func position(src string, off int) Pos {
	off = min(off, len(src))
	line := 1 + strings.Count(src[:off], "\n")
	bol := strings.LastIndexByte(src[:off], '\n') + 1
	return Pos{Line: line, Col: 1 + utf8.RuneCountInString(src[bol:off])}
}

// origPos maps an offset of the escaped text back to the original source.
func (s *source) origPos(off int) Pos {
	if len(s.spans) == 0 {
		return Pos{1, 1}
	}
	return position(s.src, s.origOffset(off))
}

// origOffset maps an offset of the escaped text back to a byte offset of
// the original source.
func (s *source) origOffset(off int) int {
	off = max(0, min(off, len(s.text)-1))
	i, found := slices.BinarySearchFunc(s.spans, int32(off), func(sp span, o int32) int { return cmp.Compare(sp.esc, o) })
	if !found {
		i--
	}
	if i < 0 {
		return 0
	}
	sp := s.spans[i]
	if sp.flat {
		return int(sp.orig)
	}
	return int(sp.orig) + off - int(sp.esc)
}

// countingReader is an io.RuneReader that remembers how far the parser read,
// which is where it found the unexpected token.
type countingReader struct {
	s   string
	off int
}

func (r *countingReader) ReadRune() (rune, int, error) {
	if r.off >= len(r.s) {
		return 0, 0, io.EOF
	}
	c, n := utf8.DecodeRuneInString(r.s[r.off:])
	r.off += n
	return c, n, nil
}
