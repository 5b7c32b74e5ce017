package plan

import (
	"errors"
	"fmt"
	"strings"
)

// ParseTerm extracts and reads a term plan, plan([Step, ...]), from
// planner text (alone, in prose, or in a markdown fence). The term is read
// by r: standard operators only, no variables, bounded size, never
// executed. A nil r cannot read the term syntax: the error asks for JSON.
// Errors are [*ParseError] located in text.
func ParseTerm(text string, r TermReader) (*Plan, error) {
	if len(text) > MaxPlanBytes {
		return nil, parseErr(PhaseParse, "term", text, 0, D("text_too_large", len(text), MaxPlanBytes),
			fmt.Sprintf("the answer is %d bytes; a plan must fit in %d", len(text), MaxPlanBytes))
	}
	start := termStart(text)
	if start < 0 {
		return nil, parseErr(PhaseParse, "term", text, 0, D("no_plan_term"), "no plan([...]) term found")
	}
	end, ok := parenEnd(text, start+len("plan"))
	if !ok {
		return nil, parseErr(PhaseParse, "term", text, start, D("invalid_term", "unbalanced parentheses"),
			"plan( starts here but its parentheses never balance (is the answer cut off?)")
	}
	if r == nil {
		return nil, parseErr(PhaseParse, "term", text, start, D("term_syntax_unavailable"),
			`the term syntax cannot be read here; answer with a JSON plan {"steps":[...]}`)
	}
	t, err := r.ReadTerm(text[start:end], ReadLimits{MaxBytes: MaxPlanBytes, MaxDepth: 4 * maxPlanNesting})
	if err != nil {
		var re *ReadError
		if errors.As(err, &re) {
			return nil, parseErr(PhaseParse, "term", text, start+re.Offset, D("invalid_term", re.Msg), "invalid term: "+re.Msg)
		}
		return nil, parseErr(PhaseParse, "term", text, start, D("invalid_term", err.Error()), err.Error())
	}
	p, err := FromTerm(t)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			// Locate normalize errors at the plan term.
			return nil, parseErr(pe.Phase, "term", text, start, pe.Detail, pe.Msg)
		}
		return nil, err
	}
	return p, nil
}

// termStart returns the offset of the first "plan(" that starts a word, or
// -1.
func termStart(text string) int {
	for off := 0; ; {
		i := strings.Index(text[off:], "plan(")
		if i < 0 {
			return -1
		}
		i += off
		if i == 0 || !isIdent(text[i-1]) {
			return i
		}
		off = i + 1
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// parenEnd returns the offset after the ')' that closes the '(' at
// text[i], skipping brackets inside quotes.
func parenEnd(text string, i int) (int, bool) {
	depth := 0
	for j := i; j < len(text); j++ {
		switch c := text[j]; c {
		case '\'', '"', '`':
			if c == '\'' && j > 0 && text[j-1] == '0' && (j < 2 || !isIdent(text[j-2])) {
				j++ // 0'c
				if j < len(text) && text[j] == '\\' {
					j++
				}
				continue
			}
			for j++; j < len(text); j++ {
				if text[j] == '\\' {
					j = skipEscape(text, j)
					continue
				}
				if text[j] == c {
					if j+1 < len(text) && text[j+1] == c { // doubled quote
						j++
						continue
					}
					break
				}
			}
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return j + 1, c == ')'
			}
		}
	}
	return 0, false
}

// skipEscape returns the index of the last byte of the escape sequence
// starting with the backslash at text[j]: \c, or \xHEX\ and \OCTAL\.
func skipEscape(text string, j int) int {
	k := j + 1
	if k < len(text) && (text[k] == 'x' || text[k] >= '0' && text[k] <= '7') {
		for m := k + 1; m < len(text) && m < k+12; m++ {
			if text[m] == '\\' {
				return m
			}
			if !isHex(text[m]) {
				break
			}
		}
	}
	return k
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
