package plan

import (
	"testing"
)

// fuzzPolicy grants everything, so that validation exercises every rule.
func fuzzPolicy() Policy {
	caps := MustCapabilities("rlm", "parallel", "retry", "checkpoint", "context(peek)", "context(slice)", "context(search)",
		"context(partition)", "context(map)", "context(reduce)", "tool(count_items)", "model(openrouter)")
	b := DefaultBudget()
	b.MaxRecursionDepth = 3
	return Policy{Capabilities: caps, ChildCapabilities: caps, Budget: b, Providers: []string{"openrouter"}, Tools: []string{"count_items"}}
}

// checkAccepted is the property both fuzzers share: an accepted plan
// renders canonically, the rendering reads back, a second round trip is a
// fixed point, and validation gives the same verdict for both. (The first
// round trip may turn literal("") into literal([]): with double_quotes=chars
// the empty string and the empty list are the same term.)
func checkAccepted(t *testing.T, p *Plan) {
	s := p.String()
	q, err := ParseTerm(s, TermsForTest)
	if err != nil {
		t.Fatalf("the rendering of an accepted plan does not parse: %v\n%s", err, s)
	}
	r, err := ParseTerm(q.String(), TermsForTest)
	if err != nil || r.String() != q.String() {
		t.Fatalf("round trip is not a fixed point (%v):\n%s\n%s\n%s", err, s, q, r)
	}
	_, err1 := Validate(p, fuzzPolicy())
	_, err2 := Validate(q, fuzzPolicy())
	if (err1 == nil) != (err2 == nil) || kindOf(err1) != kindOf(err2) {
		t.Fatalf("validation differs after a round trip: %v vs %v", err1, err2)
	}
}

func FuzzParsePlanJSON(f *testing.F) {
	f.Add(verbatimJSON)
	f.Add("```json\n{\"steps\":[{\"op\":\"final\",\"value\":7}]}\n```")
	f.Add(`{"steps":[{"op":"parallel","plans":[{"steps":[{"op":"final","value":"a"}]}],"bind":"p"},{"op":"final","value":{"ref":"var","name":"p"}}]}`)
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseJSON(text)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %T is not a *ParseError: %v", err, err)
			}
			return
		}
		checkAccepted(t, p)
	})
}

func FuzzParsePlanTerm(f *testing.F) {
	f.Add(`plan([context(input(context), search("needle"), hits), final(var(hits))])`)
	f.Add(`plan([retry(2, plan([tool(count_items, list([literal(1)]), x), final(var(x))]), y), final(object([k-var(y)]))])`)
	f.Add("plan([final(literal('caf\u00e9'))])")
	f.Add("plan([*")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseTerm(text, TermsForTest)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %T is not a *ParseError: %v", err, err)
			}
			return
		}
		checkAccepted(t, p)
	})
}
