package plan

import "errors"

// ParseText reads a plan from planner text in either syntax, the term
// syntax with r (see [ParseTerm]). It tries the syntax whose plan appears
// first in the text (a '{' for JSON, a plan( for the term syntax), then the
// other, and returns the first plan read. When
// both fail it returns the error worth feeding back: a normalize error (the
// text held a plan of that syntax, just a bad one) before a parse error,
// the first syntax's before the second's.
func ParseText(text string, r TermReader) (*Plan, error) {
	term := func(text string) (*Plan, error) { return ParseTerm(text, r) }
	first, second := ParseJSON, term
	if !looksLikeJSON(text) {
		first, second = term, ParseJSON
	}
	p, err1 := first(text)
	if err1 == nil {
		return p, nil
	}
	p, err2 := second(text)
	if err2 == nil {
		return p, nil
	}
	for _, err := range []error{err1, err2} {
		var pe *ParseError
		if errors.As(err, &pe) && pe.Phase == PhaseNormalize {
			return nil, err
		}
	}
	return nil, err1
}
