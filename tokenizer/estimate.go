package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// EstimatorVersion identifies the estimator's rule; it is part of
// [BasisEstimator] so that recorded estimates say which rule made them.
const EstimatorVersion = "v1"

// EstimatorSafetyPercent is the margin the estimator adds on top of its raw
// figure.
const EstimatorSafetyPercent = 10

// Estimate returns a conservative token count for text when the model's
// tokenizer is unknown: an upper estimate for byte-level BPE tokenizers of
// the o200k/cl100k kind, never derived from a guess about which tokenizer
// the model uses. The result is labelled [Estimated] with basis
// [BasisEstimator] and SafetyPercent [EstimatorSafetyPercent].
//
// The rule (version v1) walks the text once, after the same invalid-UTF-8
// replacement as [Encoding.Count], and charges:
//
//   - a run of ASCII letters: 1/3 token per letter plus 3/4 per change of
//     case after the second letter, at least 1 (random and camel-case text
//     splits into short tokens; a word's leading space is free);
//   - a run of ASCII digits: ceil(n/3) (both encodings split numbers into
//     groups of at most 3 digits);
//   - a run of ASCII punctuation or symbols: 1 + 3/4 per further character;
//   - whitespace: a single space before a letter or symbol is free (BPE
//     glues it to what follows; not so before a digit); any other run
//     costs 1 per \r or \n plus 1/4 per other whitespace character, at
//     least 1;
//   - any other character, one by one, by its UTF-8 length: 2 bytes 1 (2 for
//     a combining mark); 3 bytes 3/2 for a letter or mark (CJK, kana,
//     Hangul, Indic, Thai), 2 otherwise (symbols, CJK punctuation, ZWJ);
//     4 bytes 3 (emoji, flags, tags, rare CJK).
//
// The total is raised by EstimatorSafetyPercent, rounded up, and capped at
// the UTF-8 length of the text (no byte-level BPE token is shorter than one
// byte, so that cap is itself a hard upper bound). A test over the committed
// corpus (prose, code, CJK and other scripts, emoji ZWJ sequences, CRLF,
// literal special tokens, long runs, base64) checks, file by file and line
// by line, that the estimate is never below the exact o200k_base or
// cl100k_base count. Expect 1.2–2.3× the exact count: about 1.8× on English
// prose and code, 1.4× on CJK for cl100k_base, 2.3× for o200k_base.
func Estimate(text string) Count {
	return Count{
		Tokens:        estimate(sanitize(text)),
		Method:        Estimated,
		Basis:         BasisEstimator,
		SafetyPercent: EstimatorSafetyPercent,
	}
}

// estimate implements the rule of [Estimate] on valid UTF-8.
func estimate(s string) int {
	if s == "" {
		return 0
	}
	var q int // quarter tokens
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isASCIILetter(c):
			// 1/3 token per letter plus 3/4 per change of case after the
			// second letter (random or camel case splits into short
			// tokens; "Hello" and "HELLO" do not); counted in twelfths.
			j, twelfths := i+1, 4
			for j < len(s) && isASCIILetter(s[j]) {
				twelfths += 4
				if j > i+1 && (s[j] <= 'Z') != (s[j-1] <= 'Z') {
					twelfths += 9
				}
				j++
			}
			q += max(4, (twelfths+2)/3)
			i = j
		case '0' <= c && c <= '9':
			j := i + 1
			for j < len(s) && '0' <= s[j] && s[j] <= '9' {
				j++
			}
			q += 4 * ((j - i + 2) / 3)
			i = j
		case c == ' ' && i+1 < len(s) && !isSpace(s[i+1]) && !('0' <= s[i+1] && s[i+1] <= '9'):
			i++ // a single space before a word or symbol: free (not before a digit)
		case c < utf8.RuneSelf && isSpace(c):
			j, breaks, other := i, 0, 0
			for j < len(s) && isSpace(s[j]) {
				if s[j] == '\n' || s[j] == '\r' {
					breaks++
				} else {
					other++
				}
				j++
			}
			q += max(4, 4*breaks+other)
			i = j
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf && !isASCIILetter(s[j]) &&
				!('0' <= s[j] && s[j] <= '9') && !isSpace(s[j]) {
				j++
			}
			q += 4 + 3*(j-i-1)
			i = j
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case n == 2 && unicode.IsMark(r):
				q += 8 // combining marks split into bytes
			case n == 2:
				q += 4
			case n == 3 && (unicode.IsLetter(r) || unicode.IsMark(r)):
				q += 6
			case n == 3:
				q += 8
			default:
				q += 12
			}
			i += n
		}
	}
	est := (q*(100+EstimatorSafetyPercent) + 399) / 400
	return min(est, len(s))
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
