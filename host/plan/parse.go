package plan

import "errors"

// ParseText reads a plan from planner text in either syntax. It tries the
// syntax whose plan appears first in the text (a '{' for JSON, a plan( for
// the term syntax), then the other; when both fail it returns the first
// syntax's [*ParseError], which is the one worth feeding back.
func ParseText(text string) (*Plan, error) {
	first, second := ParseJSON, ParseTerm
	if !looksLikeJSON(text) {
		first, second = ParseTerm, ParseJSON
	}
	p, err := first(text)
	if err == nil {
		return p, nil
	}
	var pe *ParseError
	if errors.As(err, &pe) && pe.Phase == PhaseNormalize {
		return nil, err // the text had a plan of this syntax, just a bad one
	}
	if p2, err2 := second(text); err2 == nil {
		return p2, nil
	} else if errors.As(err2, &pe) && pe.Phase == PhaseNormalize {
		return nil, err2
	}
	return nil, err
}
