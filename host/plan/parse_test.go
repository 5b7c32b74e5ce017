package plan

import (
	"errors"
	"strings"
	"testing"
)

const verbatimJSON = `{"steps":[{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"search","pattern":"needle"},"bind":"hits"},{"op":"tool","name":"count_items","args":{"ref":"var","name":"hits"},"bind":"count"},{"op":"final","value":{"ref":"var","name":"count"}}]}`

func TestParseAccepted(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		// upstream §1.8.3 and rlm_plan_test 1, 2
		{"verbatim json", verbatimJSON,
			`plan([context(input(context), search("needle"), hits), tool(count_items, var(hits), count), final(var(count))])`},
		{"fenced json", "```json\n{\"steps\":[{\"op\":\"final\",\"value\":7}]}\n```", `plan([final(literal(7))])`},
		{"handler term", `plan([context(input(context), search("ancient-needle"), found), final(var(found))])`,
			`plan([context(input(context), search("ancient-needle"), found), final(var(found))])`},
		{"json in prose with braces", "Sure {not json} here is the plan: {\"steps\":[{\"op\":\"final\",\"value\":\"a } b\"}]} and {more}.",
			`plan([final(literal("a } b"))])`},
		{"json object expr", `{"steps":[{"op":"final","value":{"b":[1,2.5,true,null],"a":{"ref":"input","name":"query"}}}]}`,
			`plan([final(object([a-input(query), b-list([literal(1), literal(2.5), literal(true), literal(null)])]))])`},
		{"term in fence", "I will search.\n```prolog\nplan([context(input(context), peek(head(3)), h), final(field(var(h), text))]).\n```",
			`plan([context(input(context), peek(head(3)), h), final(field(var(h), text))])`},
		{"term all steps", `plan([checkpoint(start), parallel([plan([final(literal(alpha))]), plan([final(literal(beta))])], p), retry(2, plan([tool(t, list([var(p)]), x), final(var(x))]), y), model(openrouter, literal("hi"), [max_tokens(5)], m), rlm(query("sub goal"), c), rlm(plan([final(literal(1))]), d), final(object([k-var(y)]))])`,
			`plan([checkpoint("start"), parallel([plan([final(literal(alpha))]), plan([final(literal(beta))])], p), retry(2, plan([tool(t, list([var(p)]), x), final(var(x))]), y), model(openrouter, literal("hi"), [max_tokens(5)], m), rlm(query(literal("sub goal")), c), rlm(plan([final(literal(1))]), d), final(object([k-var(y)]))])`},
		{"json all actions", `{"steps":[{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"slice","start":1,"length":2},"bind":"a"},{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"peek","selector":{"type":"item","index":0}},"bind":"b"},{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"partition","strategy":{"type":"lines","size":2}},"bind":"c"},{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"map","transform":"lowercase"},"bind":"d"},{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"reduce","reducer":"count"},"bind":"e"},{"op":"rlm","query":"why","context":{"ref":"input","name":"context"},"bind":"f"},{"op":"final","value":{"ref":"var","name":"e"}}]}`,
			`plan([context(input(context), slice(1,2), a), context(input(context), peek(item(0)), b), context(input(context), partition(lines(2)), c), context(input(context), map(lowercase), d), context(input(context), reduce(count), e), rlm(query(literal("why"), input(context)), f), final(var(e))])`},
		{"non-ascii", `plan([final(literal("naïve — ok ✓"))])`, `plan([final(literal("naïve — ok ✓"))])`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseText(tc.text, TermsForTest)
			if err != nil {
				t.Fatalf("ParseText: %v", err)
			}
			if got := p.String(); got != tc.want {
				t.Fatalf("ParseText(%q)\n got %s\nwant %s", tc.text, got, tc.want)
			}
			// The canonical rendering reads back to itself.
			q, err := ParseTerm(p.String(), TermsForTest)
			if err != nil {
				t.Fatalf("ParseTerm(String()): %v", err)
			}
			if q.String() != p.String() {
				t.Fatalf("round trip:\n got %s\nwant %s", q.String(), p.String())
			}
		})
	}
}

func TestParseRejected(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		phase      Phase
		detail     string // prefix of the detail
	}{
		{"no plan", "I cannot help with that.", PhaseParse, "no_plan_term"},
		{"no json object", "not a typed plan {", PhaseParse, "invalid_json"},
		{"bad json", `{"steps":[{"op":"final","value":}]}`, PhaseParse, "invalid_json"},
		{"unknown json op", `{"steps":[{"op":"eval","code":"rm -rf /"},{"op":"final","value":1}]}`, PhaseNormalize, "unknown_operator"},
		{"unknown reference", `{"steps":[{"op":"final","value":{"ref":"env","name":"HOME"}}]}`, PhaseNormalize, "unknown_reference"},
		{"integer field", `{"steps":[{"op":"retry","attempts":"2","plan":{"steps":[]},"bind":"r"}]}`, PhaseNormalize, "invalid_integer_field"},
		{"bad selector", `{"steps":[{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"peek","selector":"all"},"bind":"r"}]}`, PhaseNormalize, "unknown_selector"},
		{"empty search", `{"steps":[{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"search","pattern":""},"bind":"r"}]}`, PhaseNormalize, "invalid_search_pattern"},
		{"raw call term", `plan([call(shell('id')), final(literal(done))])`, PhaseNormalize, "unknown_or_malformed_operation(call/1)"},
		{"term variable", `plan([final(var(X))])`, PhaseParse, "invalid_term"},
		{"term cut off", `plan([context(input(context), search("x"), r), final(`, PhaseParse, "invalid_term"},
		{"term unknown action", `plan([context(input(context), delete(all), r), final(var(r))])`, PhaseNormalize, "unknown_context_action"},
		{"term bad expr", `plan([final(shell(ls))])`, PhaseNormalize, "invalid_reference"},
		{"too large", strings.Repeat(" ", MaxPlanBytes+1) + "{}", PhaseParse, "text_too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseText(tc.text, TermsForTest)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseText = %v, %v; want a *ParseError", p, err)
			}
			if pe.Phase != tc.phase || !strings.HasPrefix(pe.Detail.String(), tc.detail) {
				t.Fatalf("ParseText error %s (detail %s), want phase %s detail %s", pe, pe.Detail, tc.phase, tc.detail)
			}
			if pe.Msg == "" {
				t.Fatal("empty message")
			}
			if e := pe.AsError(); e.Kind != KindInvalidPlan || !errors.Is(e, pe) {
				t.Fatalf("AsError = %v", e)
			}
		})
	}
}

func TestParseErrorPosition(t *testing.T) {
	text := "Here:\n```\nplan([\n  final(literal(1)) oops\n])\n```"
	_, err := ParseTerm(text, TermsForTest)
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatal(err)
	}
	if pe.Line != 4 {
		t.Fatalf("error at line %d col %d (%s), want line 4", pe.Line, pe.Col, pe.Msg)
	}
	_, err = ParseJSON("x\n{\"steps\": [1,]}")
	if !errors.As(err, &pe) || pe.Line != 2 {
		t.Fatalf("json error %v, want line 2", err)
	}
}

func TestParseTextFallsBack(t *testing.T) {
	// A stray "plan(" in prose before the JSON plan.
	p, err := ParseText(`I made a plan(ish): {"steps":[{"op":"final","value":1}]}`, TermsForTest)
	if err != nil || p.String() != `plan([final(literal(1))])` {
		t.Fatalf("ParseText = %v, %v", p, err)
	}
}
