package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// Hand-written pre-tokenizers for the built-in patterns. Each is a
// function next(s, i) returning the end of the pre-token that starts at i
// (i < len(s)): exactly where regexp2 running the pattern ends the match
// it finds at i, which FuzzPretokenizer and TestPretokenizers check
// against the regexp. They decide each alternative in the pattern's order
// and replay its backtracking in closed form, classifying each rune once,
// so splitting costs no regexp, no allocation and no window. Encodings
// from NewEncoding keep the regexp.

// Rune classes, as regexp2 reads them: \p{L}, \p{N}, \s (unicode.IsSpace),
// and o200k's two letter sets: cUpper is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}],
// cLower is [\p{Ll}\p{Lm}\p{Lo}\p{M}]. A rune in none of cLetter, cNumber
// and cSpace is "other", [^\s\p{L}\p{N}].
const (
	cLetter uint8 = 1 << iota
	cNumber
	cSpace
	cUpper
	cLower
)

// asciiClass holds the classes of the ASCII runes.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = classify(r)
	}
	return t
}()

// classOf returns the classes of r; r < 0 (past the end) has none.
func classOf(r rune) uint8 {
	if uint32(r) < utf8.RuneSelf {
		return asciiClass[r]
	}
	if r < 0 {
		return 0
	}
	return classify(r)
}

func classify(r rune) uint8 {
	switch {
	case 0x4E00 <= r && r <= 0x9FFF, 0xAC00 <= r && r <= 0xD7A3, 0x3041 <= r && r <= 0x30FF && r != 0x30A0 && r != 0x30FB && (r < 0x3097 || r > 0x309C):
		// The CJK ideographs, Hangul syllables and kana (Lo or Lm, no
		// table searches): the bulk of CJK text.
		return cLetter | cUpper | cLower
	case unicode.IsLetter(r):
		switch {
		case unicode.Is(unicode.Lo, r), unicode.Is(unicode.Lm, r):
			return cLetter | cUpper | cLower
		case unicode.Is(unicode.Ll, r):
			return cLetter | cLower
		default: // Lu, Lt
			return cLetter | cUpper
		}
	case unicode.IsNumber(r):
		return cNumber
	case unicode.IsSpace(r):
		return cSpace
	case unicode.Is(unicode.M, r):
		return cUpper | cLower
	}
	return 0
}

// runeAt decodes the rune at i, or returns -1 and 0 at the end of s.
func runeAt(s string, i int) (rune, int) {
	if i >= len(s) {
		return -1, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// scan returns the end of the run of runes with any of classes from i.
func scan(s string, i int, classes uint8) int {
	for i < len(s) {
		r, n := runeAt(s, i)
		if classOf(r)&classes == 0 {
			break
		}
		i += n
	}
	return i
}

// scanOther returns the end of the run of "other" runes from i.
func scanOther(s string, i int) int {
	for i < len(s) {
		r, n := runeAt(s, i)
		if classOf(r)&(cLetter|cNumber|cSpace) != 0 {
			break
		}
		i += n
	}
	return i
}

// isOther reports whether r is [^\s\p{L}\p{N}] (and not past the end).
func isOther(r rune) bool {
	return r >= 0 && classOf(r)&(cLetter|cNumber|cSpace) == 0
}

// canPrefix reports whether r is [^\r\n\p{L}\p{N}].
func canPrefix(r rune) bool {
	return r >= 0 && r != '\r' && r != '\n' && classOf(r)&(cLetter|cNumber) == 0
}

// contraction returns the length of 's|'t|'re|'ve|'m|'ll|'d at i, or 0;
// with fold, case-insensitively as (?i:…) matches: by Unicode simple case
// folding, so 's also matches 'S and 'ſ (U+017F).
func contraction(s string, i int, fold bool) int {
	if i >= len(s) || s[i] != '\'' {
		return 0
	}
	lower := func(j int) (byte, int) { // the folded byte at j and its width
		if j >= len(s) {
			return 0, 0
		}
		c := s[j]
		if fold {
			if 'A' <= c && c <= 'Z' {
				return c + 'a' - 'A', 1
			}
			if c == 0xC5 && j+1 < len(s) && s[j+1] == 0xBF { // ſ
				return 's', 2
			}
		}
		return c, 1
	}
	c1, n1 := lower(i + 1)
	switch c1 {
	case 's', 't', 'm', 'd':
		return 1 + n1
	case 'r', 'v':
		if c2, n2 := lower(i + 1 + n1); c2 == 'e' {
			return 1 + n1 + n2
		}
	case 'l':
		if c2, n2 := lower(i + 1 + n1); c2 == 'l' {
			return 1 + n1 + n2
		}
	}
	return 0
}

// spaceEnd ends a pre-token starting with whitespace at i: with lineBreaks,
// \s*[\r\n]+ first (through the last CR or LF of the run); then
// \s+(?!\S) (the run, less its last rune when a non-space follows and that
// leaves one); else \s+.
func spaceEnd(s string, i int, lineBreaks bool) int {
	j := scan(s, i, cSpace)
	if lineBreaks {
		for k := j - 1; k >= i; k-- {
			if s[k] == '\r' || s[k] == '\n' {
				return k + 1
			}
		}
	}
	if j == len(s) {
		return j
	}
	if _, n := utf8.DecodeLastRuneInString(s[i:j]); j-n > i {
		return j - n
	}
	return j
}

// nextR50k is PatternR50k:
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
func nextR50k(s string, i int) int {
	if n := contraction(s, i, false); n > 0 {
		return i + n
	}
	j := i
	if s[i] == ' ' {
		j++
	}
	r, _ := runeAt(s, j)
	switch c := classOf(r); {
	case c&cLetter != 0:
		return scan(s, j, cLetter)
	case c&cNumber != 0:
		return scan(s, j, cNumber)
	case isOther(r):
		return scanOther(s, j)
	}
	return spaceEnd(s, i, false)
}

// nextCl100k is PatternCl100k: (?i:'s|'t|'re|'ve|'m|'ll|'d)|
// [^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
// \s*[\r\n]+|\s+(?!\S)|\s+
func nextCl100k(s string, i int) int {
	if n := contraction(s, i, true); n > 0 {
		return i + n
	}
	r0, n0 := runeAt(s, i)
	c0 := classOf(r0)
	if c0&cLetter != 0 {
		return scan(s, i, cLetter)
	}
	r1, _ := runeAt(s, i+n0)
	if canPrefix(r0) && classOf(r1)&cLetter != 0 {
		return scan(s, i+n0, cLetter)
	}
	if c0&cNumber != 0 {
		return numbers(s, i)
	}
	if j := otherStart(s, i, r0, r1); j >= 0 {
		return scanBytes(s, scanOther(s, j), "\r\n")
	}
	return spaceEnd(s, i, true)
}

// nextO200k is PatternO200k:
// [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|…)?|
// [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|…)?|
// \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
func nextO200k(s string, i int) int {
	r0, n0 := runeAt(s, i)
	// The two word alternatives, each with its optional prefix first.
	for _, word := range [2]func(string, int) int{lowerWord, upperWord} {
		if canPrefix(r0) {
			if end := word(s, i+n0); end > 0 {
				return end
			}
		}
		if end := word(s, i); end > 0 {
			return end
		}
	}
	if classOf(r0)&cNumber != 0 {
		return numbers(s, i)
	}
	r1, _ := runeAt(s, i+n0)
	if j := otherStart(s, i, r0, r1); j >= 0 {
		return scanBytes(s, scanOther(s, j), "\r\n/")
	}
	return spaceEnd(s, i, true)
}

// lowerWord matches Upper*Lower+(?i:'s|…)? at p and returns its end, or 0.
// Backtracking gives Upper* back one rune at a time until Lower+ can start:
// Lower+ starts at the end of the Upper run if a Lower rune is there, else
// at the last rune of the run that is Lower too (Lm, Lo, M are both).
func lowerWord(s string, p int) int {
	q, lastLower := p, -1
	for q < len(s) {
		r, n := runeAt(s, q)
		c := classOf(r)
		if c&cUpper == 0 {
			break
		}
		if c&cLower != 0 {
			lastLower = q
		}
		q += n
	}
	k := lastLower
	if r, _ := runeAt(s, q); classOf(r)&cLower != 0 {
		k = q
	}
	if k < 0 {
		return 0
	}
	end := scan(s, k, cLower)
	return end + contraction(s, end, true)
}

// upperWord matches Upper+Lower*(?i:'s|…)? at p and returns its end, or 0.
func upperWord(s string, p int) int {
	q := scan(s, p, cUpper)
	if q == p {
		return 0
	}
	end := scan(s, q, cLower)
	return end + contraction(s, end, true)
}

// numbers is \p{N}{1,3} at i.
func numbers(s string, i int) int {
	for k := 0; k < 3; k++ {
		r, n := runeAt(s, i)
		if classOf(r)&cNumber == 0 {
			break
		}
		i += n
	}
	return i
}

// otherStart returns where ` ?[^\s\p{L}\p{N}]+` at i starts its run of
// other runes (r0, r1 are the runes at i and after it), or -1.
func otherStart(s string, i int, r0, r1 rune) int {
	switch {
	case isOther(r0):
		return i
	case r0 == ' ' && isOther(r1):
		return i + 1
	}
	return -1
}

// scanBytes returns the end of the run of bytes in set from i.
func scanBytes(s string, i int, set string) int {
	for i < len(s) && indexByte(set, s[i]) {
		i++
	}
	return i
}

func indexByte(set string, c byte) bool {
	for k := range len(set) {
		if set[k] == c {
			return true
		}
	}
	return false
}
