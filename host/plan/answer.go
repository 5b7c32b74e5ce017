package plan

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// AnswerScanner reads a planner's answer as it streams and passes on the
// text of a direct answer — a plan whose first step is final with a
// literal string, {"steps":[{"op":"final","value":"..."}]} or
// plan([final(literal("..."))]) — decoded, as it arrives. Since final is
// the last step, such a plan is that one step: its text is the
// completion's value unless the plan is rejected. Any other answer (steps
// before final, a computed value, prose that does not lead to the plan)
// passes nothing on, and the value comes whole when the plan has run.
//
// An AnswerScanner is not safe for concurrent use: one serves one call.
type AnswerScanner struct {
	emit  func(text string)
	state int    // scanning for the opening, in the string, or done
	term  bool   // the string is a term's "..." (else JSON's)
	buf   string // the text not consumed yet
}

const (
	answerOpening = iota
	answerString
	answerDone
)

// maxOpening is how far past the start of the plan its first step's
// opening may run; beyond it the answer is not a direct one.
const maxOpening = 256

var (
	jsonOpening = regexp.MustCompile(`^\{\s*"steps"\s*:\s*\[\s*\{\s*"op"\s*:\s*"final"\s*,\s*"value"\s*:\s*"`)
	termOpening = regexp.MustCompile(`^plan\(\s*\[\s*final\(\s*literal\(\s*"`)
)

// NewAnswerScanner returns a scanner that calls emit with each piece of a
// direct answer's text.
func NewAnswerScanner(emit func(text string)) *AnswerScanner {
	return &AnswerScanner{emit: emit}
}

// Write takes the next piece of the planner's answer.
func (s *AnswerScanner) Write(chunk string) {
	if s.state == answerDone {
		return
	}
	s.buf += chunk
	if s.state == answerOpening && !s.open() {
		return
	}
	text, rest, end := decodeString(s.buf, s.term)
	s.buf = rest
	if end {
		s.state, s.buf = answerDone, ""
	}
	if text != "" {
		s.emit(text)
	}
}

// open looks for the opening of a direct answer at the start of the plan
// (its first '{' or "plan("): true once the string has begun.
func (s *AnswerScanner) open() bool {
	i, j := strings.IndexByte(s.buf, '{'), strings.Index(s.buf, "plan(")
	if i < 0 && j < 0 {
		return false // prose before the plan, or nothing yet
	}
	re := jsonOpening
	if i < 0 || (j >= 0 && j < i) {
		i, re, s.term = j, termOpening, true
	}
	if m := re.FindStringIndex(s.buf[i:]); m != nil {
		s.state, s.buf = answerString, s.buf[i+m[1]:]
		return true
	}
	if len(s.buf)-i > maxOpening {
		s.state, s.buf = answerDone, "" // another kind of plan
	}
	return false
}

// decodeString decodes the body of a string literal up to its closing
// quote (end) or to the last complete character; rest is what could not be
// decoded yet (an escape or a quote cut by the chunk's end). Term strings
// take Prolog's escapes and a doubled quote; JSON strings take JSON's.
func decodeString(b string, term bool) (text, rest string, end bool) {
	var sb strings.Builder
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"' && term:
			if i+1 == len(b) {
				return sb.String(), b[i:], false // "" or the end: the next chunk says
			}
			if b[i+1] != '"' {
				return sb.String(), "", true
			}
			sb.WriteByte('"')
			i += 2
		case c == '"':
			return sb.String(), "", true
		case c == '\\':
			r, n, ok := unescape(b[i:], term)
			if n == 0 {
				return sb.String(), b[i:], false
			}
			if ok {
				sb.WriteString(r)
			}
			i += n
		default:
			_, n := utf8.DecodeRuneInString(b[i:])
			if !utf8.FullRuneInString(b[i:]) {
				return sb.String(), b[i:], false
			}
			sb.WriteString(b[i : i+n])
			i += n
		}
	}
	return sb.String(), "", false
}

// The one-character escapes of each syntax.
var (
	jsonEscapes = map[byte]string{'n': "\n", 't': "\t", 'r': "\r", 'b': "\b", 'f': "\f", '\\': "\\", '"': "\"", '/': "/"}
	termEscapes = map[byte]string{'n': "\n", 't': "\t", 'r': "\r", 'b': "\b", 'f': "\f", 'v': "\v", 'a': "\a", 'e': "\x1b", 's': " ",
		'\\': "\\", '"': "\"", '\'': "'", '`': "`"}
)

// unescape decodes the escape at the start of b: its text, its length (0
// when b ends before the escape does) and whether it stands for text (a
// term's line continuation does not).
func unescape(b string, term bool) (string, int, bool) {
	if len(b) < 2 {
		return "", 0, false
	}
	simple := jsonEscapes
	if term {
		simple = termEscapes
	}
	switch c := b[1]; {
	case term && c == '\n':
		return "", 2, false
	case term && (c == 'x' || c >= '0' && c <= '7'):
		end := strings.IndexByte(b[2:], '\\')
		if end < 0 {
			return "", 0, false
		}
		digits, base := b[2:2+end], 16
		if c != 'x' {
			digits, base = b[1:2+end], 8
		}
		n, err := strconv.ParseUint(digits, base, 32)
		if err != nil || !utf8.ValidRune(rune(n)) {
			return "", 3 + end, false
		}
		return string(rune(n)), 3 + end, true
	case !term && c == 'u':
		r, n, ok := jsonRune(b)
		return r, n, ok
	default:
		if s, ok := simple[c]; ok {
			return s, 2, true
		}
		return "", 2, false
	}
}

// jsonRune decodes \uXXXX at the start of b, with a surrogate pair's
// second half when there is one.
func jsonRune(b string) (string, int, bool) {
	if len(b) < 6 {
		return "", 0, false
	}
	r1, err := strconv.ParseUint(b[2:6], 16, 16)
	if err != nil {
		return "", 6, false
	}
	if !utf16.IsSurrogate(rune(r1)) {
		return string(rune(r1)), 6, true
	}
	if len(b) < 12 {
		return "", 0, false
	}
	r2, err := strconv.ParseUint(b[8:12], 16, 16)
	if b[6:8] != `\u` || err != nil {
		return string(utf8.RuneError), 6, true
	}
	return string(utf16.DecodeRune(rune(r1), rune(r2))), 12, true
}
