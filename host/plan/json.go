package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxPlanBytes bounds planner text: longer text is a parse error before
// any scanning.
const MaxPlanBytes = 64 << 10

// maxCandidates bounds how many '{' positions the extractor tries.
const maxCandidates = 64

// ParseJSON extracts and reads a JSON plan, {"steps":[...]}, from planner
// text: the object may stand alone or sit inside prose or a markdown fence.
// The extractor scans each '{' with a balanced-brace scanner that knows
// JSON strings, and takes the first balanced object that decodes and has a
// "steps" key (prose with braces before or after the plan is fine). Errors
// are [*ParseError]: phase parse for no object or bad JSON, normalize for
// an object that breaks the grammar.
func ParseJSON(text string) (*Plan, error) {
	if len(text) > MaxPlanBytes {
		return nil, parseErr(PhaseParse, "json", text, 0, D("text_too_large", len(text), MaxPlanBytes),
			fmt.Sprintf("the answer is %d bytes; a plan must fit in %d", len(text), MaxPlanBytes))
	}
	obj, off, perr := extractJSON(text)
	if perr != nil {
		return nil, perr
	}
	n := &jsonNorm{text: text, off: off}
	p, err := n.plan(obj, "$")
	if err != nil {
		return nil, err
	}
	return p, nil
}

// extractJSON finds the plan object in text and decodes it.
func extractJSON(text string) (map[string]any, int, *ParseError) {
	var first *ParseError
	tried := 0
	for i := 0; i < len(text) && tried < maxCandidates; i++ {
		if text[i] != '{' {
			continue
		}
		tried++
		end, ok := balancedEnd(text, i)
		if !ok {
			if first == nil {
				first = parseErr(PhaseParse, "json", text, i, D("invalid_json", "unbalanced braces"),
					"a JSON object starts here but its braces never balance (is the answer cut off?)")
			}
			continue
		}
		v, err := decodeJSON(text[i:end])
		if err != nil {
			if first == nil {
				off := i
				var se *json.SyntaxError
				if errors.As(err, &se) {
					off += int(se.Offset) - 1
				}
				first = parseErr(PhaseParse, "json", text, off, D("invalid_json", err.Error()), "invalid JSON: "+err.Error())
			}
			continue
		}
		obj, isObj := v.(map[string]any)
		if !isObj {
			continue
		}
		if _, ok := obj["steps"]; !ok {
			if first == nil {
				first = parseErr(PhaseNormalize, "json", text, i, D("missing_field", Atom("steps")),
					`the JSON object has no "steps" key; a plan is {"steps":[...]}`)
			}
			continue
		}
		return obj, i, nil
	}
	if first != nil {
		return nil, 0, first
	}
	return nil, 0, parseErr(PhaseParse, "json", text, 0, D("no_json_object"), `no JSON object found; answer with one plan object {"steps":[...]}`)
}

// balancedEnd returns the offset after the '}' closing the object that
// starts at text[i], skipping braces inside JSON strings.
func balancedEnd(text string, i int) (int, bool) {
	depth := 0
	for j := i; j < len(text); j++ {
		switch text[j] {
		case '"':
			for j++; j < len(text) && text[j] != '"'; j++ {
				if text[j] == '\\' {
					j++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1, text[j] == '}'
			}
		}
	}
	return 0, false
}

func decodeJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func parseErr(phase Phase, syntax, text string, off int, d *Detail, msg string) *ParseError {
	off = max(0, min(off, len(text)))
	line := 1 + strings.Count(text[:off], "\n")
	bol := strings.LastIndexByte(text[:off], '\n') + 1
	return &ParseError{Phase: phase, Syntax: syntax, Offset: off, Line: line, Col: 1 + utf8.RuneCountInString(text[bol:off]), Detail: d, Msg: msg}
}

// jsonNorm normalizes a decoded JSON plan into the AST. Decoded objects
// carry no positions, so errors name the JSON path ($.steps[2].action) and
// are located at the plan object.
type jsonNorm struct {
	text  string
	off   int
	depth int
}

const maxPlanNesting = 32

func (n *jsonNorm) fail(path string, d *Detail, format string, args ...any) *ParseError {
	return parseErr(PhaseNormalize, "json", n.text, n.off, d, path+": "+fmt.Sprintf(format, args...))
}

func (n *jsonNorm) plan(v any, path string) (*Plan, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, n.fail(path, D("invalid_plan", summarize(v, 80)), `a plan must be an object {"steps":[...]}`)
	}
	n.depth++
	defer func() { n.depth-- }()
	if n.depth > maxPlanNesting {
		return nil, n.fail(path, D("plan_too_deep", maxPlanNesting), "plans nest deeper than %d levels", maxPlanNesting)
	}
	raw, ok := obj["steps"]
	if !ok {
		return nil, n.fail(path, D("missing_field", Atom("steps")), `missing "steps"`)
	}
	arr, ok := raw.([]any)
	if !ok {
		return nil, n.fail(path+".steps", D("invalid_list", Atom("steps"), summarize(raw, 80)), `"steps" must be an array of step objects`)
	}
	p := &Plan{Steps: make([]Step, 0, len(arr))}
	for i, s := range arr {
		st, err := n.step(s, fmt.Sprintf("%s.steps[%d]", path, i))
		if err != nil {
			return nil, err
		}
		p.Steps = append(p.Steps, st)
	}
	return p, nil
}

func (n *jsonNorm) step(v any, path string) (Step, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, n.fail(path, D("invalid_step", summarize(v, 80)), `a step must be an object with an "op" key`)
	}
	op, err := n.text1(obj, "op", path)
	if err != nil {
		return nil, err
	}
	switch op {
	case "context":
		h, err := n.exprField(obj, "handle", path)
		if err != nil {
			return nil, err
		}
		a, err := n.action(obj, path)
		if err != nil {
			return nil, err
		}
		b, err := n.text1(obj, "bind", path)
		if err != nil {
			return nil, err
		}
		return &ContextStep{Handle: h, Action: a, Bind: b}, nil
	case "model":
		prov, err := n.text1(obj, "provider", path)
		if err != nil {
			return nil, err
		}
		pr, err := n.exprField(obj, "prompt", path)
		if err != nil {
			return nil, err
		}
		opts := map[string]any{}
		if raw, ok := obj["options"]; ok && raw != nil {
			m, ok := raw.(map[string]any)
			if !ok {
				return nil, n.fail(path+".options", D("invalid_dict", Atom("options"), summarize(raw, 80)), `"options" must be an object`)
			}
			for k, x := range m {
				if !validName(k) || k == "" {
					return nil, n.fail(path+".options", D("invalid_dict", Atom("options"), k), "option names must be non-empty names")
				}
				opts[k] = jsonValue(x)
			}
		}
		b, err := n.text1(obj, "bind", path)
		if err != nil {
			return nil, err
		}
		return &ModelStep{Provider: prov, Prompt: pr, Options: opts, Bind: b}, nil
	case "rlm":
		st := &RLMStep{}
		if raw, ok := obj["plan"]; ok {
			if st.Plan, err = n.plan(raw, path+".plan"); err != nil {
				return nil, err
			}
		} else if _, ok := obj["query"]; ok {
			if st.Query, err = n.exprField(obj, "query", path); err != nil {
				return nil, err
			}
			if _, ok := obj["context"]; ok {
				if st.Context, err = n.exprField(obj, "context", path); err != nil {
					return nil, err
				}
			}
		} else {
			return nil, n.fail(path, D("missing_field", Atom("plan")), `an rlm step needs "plan" (a nested plan) or "query" (a child goal)`)
		}
		if st.Bind, err = n.text1(obj, "bind", path); err != nil {
			return nil, err
		}
		return st, nil
	case "tool":
		name, err := n.text1(obj, "name", path)
		if err != nil {
			return nil, err
		}
		var args Expr = Literal{}
		if _, ok := obj["args"]; ok {
			if args, err = n.exprField(obj, "args", path); err != nil {
				return nil, err
			}
		}
		b, err := n.text1(obj, "bind", path)
		if err != nil {
			return nil, err
		}
		return &ToolStep{Name: name, Args: args, Bind: b}, nil
	case "spawn_agent":
		caps, ok := obj["capabilities"].([]any)
		if !ok {
			return nil, n.fail(path+".capabilities", D("invalid_list", Atom("capabilities"), summarize(obj["capabilities"], 80)), `"capabilities" must be an array`)
		}
		b, err := n.text1(obj, "bind", path)
		if err != nil {
			return nil, err
		}
		args := map[string]any{"spec": jsonValue(obj["spec"]), "capabilities": jsonValue(caps)}
		return &ToolStep{Name: "spawn_agent", Args: Literal{Value: args}, Bind: b}, nil
	case "parallel":
		raw, ok := obj["plans"].([]any)
		if !ok {
			return nil, n.fail(path+".plans", D("invalid_list", Atom("plans"), summarize(obj["plans"], 80)), `"plans" must be an array of plans`)
		}
		st := &ParallelStep{}
		for i, r := range raw {
			p, err := n.plan(r, fmt.Sprintf("%s.plans[%d]", path, i))
			if err != nil {
				return nil, err
			}
			st.Plans = append(st.Plans, p)
		}
		if st.Bind, err = n.text1(obj, "bind", path); err != nil {
			return nil, err
		}
		return st, nil
	case "retry":
		k, err := n.int1(obj, "attempts", path)
		if err != nil {
			return nil, err
		}
		raw, ok := obj["plan"]
		if !ok {
			return nil, n.fail(path, D("missing_field", Atom("plan")), `missing "plan"`)
		}
		p, err := n.plan(raw, path+".plan")
		if err != nil {
			return nil, err
		}
		b, err := n.text1(obj, "bind", path)
		if err != nil {
			return nil, err
		}
		return &RetryStep{Attempts: k, Plan: p, Bind: b}, nil
	case "respond":
		prov, err := n.text1(obj, "provider", path)
		if err != nil {
			return nil, err
		}
		b, err := n.text1(obj, "bind", path)
		if err != nil {
			return nil, err
		}
		return &RespondStep{Provider: prov, Bind: b}, nil
	case "checkpoint":
		l, err := n.text1(obj, "label", path)
		if err != nil {
			if pe, ok := err.(*ParseError); ok {
				pe.Detail = D("invalid_checkpoint_label", summarize(obj["label"], 80))
			}
			return nil, err
		}
		return &CheckpointStep{Label: l}, nil
	case "final":
		if _, ok := obj["value"]; !ok {
			return nil, n.fail(path, D("missing_field", Atom("value")), `missing "value"`)
		}
		e, err := n.expr(obj["value"], path+".value")
		if err != nil {
			return nil, err
		}
		return &FinalStep{Value: e}, nil
	}
	return nil, n.fail(path+".op", D("unknown_operator", op),
		"unknown op %q; ops are context, model, rlm, tool, parallel, retry, checkpoint, final", op)
}

func (n *jsonNorm) text1(obj map[string]any, key, path string) (string, error) {
	raw, ok := obj[key]
	if !ok {
		return "", n.fail(path, D("missing_field", Atom(key)), "missing %q", key)
	}
	s, ok := raw.(string)
	if !ok || !validName(s) && key != "label" || s == "" {
		return "", n.fail(path+"."+key, D("invalid_text_field", Atom(key), summarize(raw, 80)), "%q must be a non-empty name", key)
	}
	return s, nil
}

// validName reports whether s can be a name (bind, tool, provider, key):
// at most 256 bytes of valid UTF-8 without control characters or U+FFFD
// (which the term reader cannot read back).
func validName(s string) bool {
	if len(s) > 256 || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return false
		}
	}
	return true
}

func (n *jsonNorm) int1(obj map[string]any, key, path string) (int, error) {
	raw, ok := obj[key]
	if !ok {
		return 0, n.fail(path, D("missing_field", Atom(key)), "missing %q", key)
	}
	num, ok := raw.(json.Number)
	i, err := num.Int64()
	if !ok || err != nil || i > 1<<31 || i < -(1<<31) {
		return 0, n.fail(path+"."+key, D("invalid_integer_field", Atom(key), summarize(raw, 80)), "%q must be an integer", key)
	}
	return int(i), nil
}

func (n *jsonNorm) exprField(obj map[string]any, key, path string) (Expr, error) {
	raw, ok := obj[key]
	if !ok {
		return nil, n.fail(path, D("missing_field", Atom(key)), "missing %q", key)
	}
	return n.expr(raw, path+"."+key)
}

func (n *jsonNorm) expr(v any, path string) (Expr, error) {
	n.depth++
	defer func() { n.depth-- }()
	if n.depth > 2*maxPlanNesting {
		return nil, n.fail(path, D("expression_too_deep", 2*maxPlanNesting), "expressions nest too deeply")
	}
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["ref"]; ok {
			r, _ := ref.(string)
			switch r {
			case "input", "var":
				name, err := n.text1(v, "name", path)
				if err != nil {
					return nil, err
				}
				if r == "input" {
					return InputRef{Name: name}, nil
				}
				return VarRef{Name: name}, nil
			case "field":
				inner, err := n.exprField(v, "value", path)
				if err != nil {
					return nil, err
				}
				key, err := n.text1(v, "key", path)
				if err != nil {
					return nil, err
				}
				return FieldOf{Value: inner, Key: key}, nil
			}
			return nil, n.fail(path+".ref", D("unknown_reference", summarize(ref, 80)), `"ref" must be "input", "var" or "field"`)
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		obj := Object{Pairs: make([]Pair, 0, len(keys))}
		for _, k := range keys {
			if !validName(k) {
				return nil, n.fail(path, D("invalid_object_pair", k), "object keys must be names without control characters")
			}
			e, err := n.expr(v[k], path+"."+k)
			if err != nil {
				return nil, err
			}
			obj.Pairs = append(obj.Pairs, Pair{Key: k, Value: e})
		}
		return obj, nil
	case []any:
		l := List{Elems: make([]Expr, 0, len(v))}
		for i, x := range v {
			e, err := n.expr(x, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			l.Elems = append(l.Elems, e)
		}
		return l, nil
	}
	return Literal{Value: jsonValue(v)}, nil
}

// jsonValue converts a decoded JSON value to a plan value: numbers to
// int64 when integral, else float64.
func jsonValue(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = jsonValue(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = jsonValue(x)
		}
		return out
	}
	return v
}

func (n *jsonNorm) action(obj map[string]any, path string) (Action, error) {
	path += ".action"
	raw, ok := obj["action"]
	if !ok {
		return Action{}, n.fail(path, D("missing_field", Atom("action")), "missing \"action\"")
	}
	a, ok := raw.(map[string]any)
	if !ok {
		return Action{}, n.fail(path, D("invalid_context_action", summarize(raw, 80)), `"action" must be an object with a "type"`)
	}
	typ, _ := a["type"].(string)
	act := Action{Type: typ}
	var err error
	switch typ {
	case "search":
		p, ok := a["pattern"].(string)
		if !ok || p == "" {
			return act, n.fail(path+".pattern", D("invalid_search_pattern", summarize(a["pattern"], 80)), "search needs a non-empty \"pattern\" string")
		}
		act.Pattern = p
	case "slice":
		if act.Start, err = n.int1(a, "start", path); err != nil {
			return act, err
		}
		if act.Length, err = n.int1(a, "length", path); err != nil {
			return act, err
		}
	case "peek":
		switch sel := a["selector"].(type) {
		case string:
			if sel != "metadata" {
				return act, n.fail(path+".selector", D("unknown_selector", sel), `selector is "metadata" or {"type":"head"|"tail"|"item",...}`)
			}
			act.Selector = sel
		case map[string]any:
			st, _ := sel["type"].(string)
			switch st {
			case "head", "tail":
				act.N, err = n.int1(sel, "count", path+".selector")
			case "item":
				act.N, err = n.int1(sel, "index", path+".selector")
			default:
				return act, n.fail(path+".selector", D("unknown_selector", summarize(sel["type"], 80)), `selector type is head, tail or item`)
			}
			if err != nil {
				return act, err
			}
			act.Selector = st
		default:
			return act, n.fail(path+".selector", D("invalid_selector", summarize(a["selector"], 80)), `peek needs a "selector"`)
		}
	case "partition":
		s, ok := a["strategy"].(map[string]any)
		if !ok {
			return act, n.fail(path+".strategy", D("invalid_partition_strategy", summarize(a["strategy"], 80)), `partition needs a "strategy" object`)
		}
		st, _ := s["type"].(string)
		if !slices.Contains(partitions, st) {
			return act, n.fail(path+".strategy", D("unknown_partition_strategy", summarize(s["type"], 80)), `strategy type is "fixed" or "lines"`)
		}
		act.Partition = st
		if act.N, err = n.int1(s, "size", path+".strategy"); err != nil {
			return act, err
		}
	case "map":
		t, _ := a["transform"].(string)
		act.Transform = t
	case "reduce":
		r, _ := a["reducer"].(string)
		act.Reducer = r
	default:
		return act, n.fail(path+".type", D("unknown_context_action", summarize(a["type"], 80)),
			"action type is one of peek, slice, search, partition, map, reduce")
	}
	return act, nil
}

// looksLikeJSON reports whether text's first plan-ish token is a '{'
// rather than a term plan( … ).
func looksLikeJSON(text string) bool {
	j := strings.IndexByte(text, '{')
	t := termStart(text)
	switch {
	case j < 0:
		return false
	case t < 0:
		return true
	}
	return j < t
}
