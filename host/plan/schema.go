package plan

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/rlmpl/rlmpl/tokenizer"
)

// Structured plan output: a JSON schema of the plans a planner may write,
// sent as the planner request's response_format when the provider
// constrains sampling with it (llama.cpp, vLLM, Ollama, OpenAI structured
// outputs). A small local model then cannot write anything but a plan of
// this shape; validation still judges every plan.
//
// The schema is narrower than the grammar, on purpose: only the steps the
// capabilities allow, providers and tools as enums, bounded strings, lists
// and step counts, expressions two levels deep, nested plans as deep as the
// recursion budget allows (at most two levels), and no object
// expressions (an object with a "ref" key would read as a reference). A
// planner with no step that binds a name writes exactly one final step
// whose value names no variable, so every plan of the schema validates.

// maxSchemaNesting bounds the nested plans the schema unrolls.
const maxSchemaNesting = 2

// SchemaFormat returns the response format that asks for a plan matching
// [Schema].
func SchemaFormat(caps []Capability, providers, tools []string, b Budget) *tokenizer.ResponseFormat {
	return &tokenizer.ResponseFormat{Type: "json_schema", JSONSchema: &tokenizer.JSONSchema{Name: "plan", Schema: Schema(caps, providers, tools, b)}}
}

// Schema returns the JSON schema (draft 2020-12 subset that grammar
// converters accept) of the JSON plans a planner with caps may write, with
// model steps naming providers and tool steps naming tools (each kept only
// when caps grant it). Its encoding is deterministic.
func Schema(caps []Capability, providers, tools []string, b Budget) json.RawMessage {
	g := schemaGen{caps: caps, maxSteps: max(1, min(b.MaxIterations, 16)), defs: map[string]any{}}
	for _, p := range providers {
		if hasCap(caps, Capability{Kind: "model", Name: p}) {
			g.providers = append(g.providers, p)
		}
	}
	for _, t := range tools {
		if hasCap(caps, Capability{Kind: "tool", Name: t}) {
			g.tools = append(g.tools, t)
		}
	}
	slices.Sort(g.providers)
	slices.Sort(g.tools)
	depth := min(b.MaxRecursionDepth, maxSchemaNesting)
	g.expressions()
	for d := depth; d >= 0; d-- {
		g.plan(d, d < depth)
	}
	out, err := json.Marshal(map[string]any{"$ref": "#/$defs/plan_0", "$defs": g.defs})
	if err != nil {
		panic(err) // maps of strings, numbers and slices always encode
	}
	return out
}

type schemaGen struct {
	caps             []Capability
	providers, tools []string
	maxSteps         int
	defs             map[string]any
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/$defs/" + name} }

func object(props map[string]any) map[string]any {
	req := make([]string, 0, len(props))
	for k := range props {
		req = append(req, k)
	}
	slices.Sort(req)
	return map[string]any{"type": "object", "properties": props, "required": req, "additionalProperties": false}
}

func constant(v string) map[string]any { return map[string]any{"const": v} }

func enum(vs ...string) map[string]any { return map[string]any{"enum": vs} }

var (
	nameSchema = map[string]any{"type": "string", "pattern": "^[a-z][a-z0-9_]{0,31}$"}
	textSchema = map[string]any{"type": "string", "minLength": 1, "maxLength": 256}
	count      = map[string]any{"type": "integer", "minimum": 0, "maximum": 100000}
	size       = map[string]any{"type": "integer", "minimum": 1, "maximum": 100000}
)

// expressions defines expr (literal, input, var, field of those, a list of
// those) and expr_novar (literal, input, a list of those).
func (g *schemaGen) expressions() {
	literal := map[string]any{"anyOf": []any{textSchema, map[string]any{"type": "integer"}, map[string]any{"type": "boolean"}, map[string]any{"type": "null"}}}
	input := object(map[string]any{"ref": constant("input"), "name": enum("context", "query")})
	variable := object(map[string]any{"ref": constant("var"), "name": nameSchema})
	g.defs["atom"] = map[string]any{"anyOf": []any{literal, input, variable}}
	g.defs["atom_novar"] = map[string]any{"anyOf": []any{literal, input}}
	g.defs["expr"] = map[string]any{"anyOf": []any{ref("atom"),
		object(map[string]any{"ref": constant("field"), "value": ref("atom"), "key": nameSchema}),
		map[string]any{"type": "array", "items": ref("atom"), "maxItems": 8}}}
	g.defs["expr_novar"] = map[string]any{"anyOf": []any{ref("atom_novar"),
		map[string]any{"type": "array", "items": ref("atom_novar"), "maxItems": 8}}}
}

// plan defines plan_d and its steps; nested plans (rlm, parallel, retry)
// refer to plan_{d+1} when nested is true.
func (g *schemaGen) plan(d int, nested bool) {
	var steps []any
	step := func(op string, props map[string]any) {
		props["op"] = constant(op)
		steps = append(steps, object(props))
	}
	var actions []any
	for _, a := range []struct {
		name string
		s    map[string]any
	}{
		{"map", map[string]any{"transform": enum("identity", "length", "lowercase", "uppercase")}},
		{"partition", map[string]any{"strategy": object(map[string]any{"type": enum("fixed", "lines"), "size": size})}},
		{"peek", map[string]any{"selector": map[string]any{"anyOf": []any{constant("metadata"),
			object(map[string]any{"type": enum("head", "tail"), "count": size}),
			object(map[string]any{"type": constant("item"), "index": count})}}}},
		{"reduce", map[string]any{"reducer": enum("byte_count", "count")}},
		{"search", map[string]any{"pattern": textSchema}},
		{"slice", map[string]any{"start": count, "length": size}},
	} {
		if hasCap(g.caps, Capability{Kind: "context", Name: a.name}) {
			a.s["type"] = constant(a.name)
			actions = append(actions, object(a.s))
		}
	}
	if len(actions) > 0 {
		step("context", map[string]any{"handle": ref("atom"), "action": map[string]any{"anyOf": actions}, "bind": nameSchema})
	}
	if len(g.providers) > 0 {
		step("model", map[string]any{"provider": enum(g.providers...), "prompt": ref("expr"), "bind": nameSchema})
	}
	if len(g.tools) > 0 {
		step("tool", map[string]any{"name": enum(g.tools...), "args": ref("expr"), "bind": nameSchema})
	}
	next := ref(fmt.Sprintf("plan_%d", d+1))
	if hasCap(g.caps, Capability{Kind: "rlm"}) {
		step("rlm", map[string]any{"query": ref("expr"), "bind": nameSchema})
		if nested {
			step("rlm", map[string]any{"plan": next, "bind": nameSchema})
		}
	}
	if nested && hasCap(g.caps, Capability{Kind: "parallel"}) {
		step("parallel", map[string]any{"plans": map[string]any{"type": "array", "items": next, "minItems": 1, "maxItems": 4}, "bind": nameSchema})
	}
	if nested && hasCap(g.caps, Capability{Kind: "retry"}) {
		step("retry", map[string]any{"attempts": map[string]any{"type": "integer", "minimum": 1, "maximum": 3}, "plan": next, "bind": nameSchema})
	}
	binds := len(steps) > 0
	if hasCap(g.caps, Capability{Kind: "checkpoint"}) {
		step("checkpoint", map[string]any{"label": nameSchema})
	}
	steps = append(steps, nil) // the final step, below
	value, most := ref("expr"), g.maxSteps
	if !binds {
		// Nothing binds a name: a variable would be unbound, so the one
		// step is final and its value names none.
		value, most, steps = ref("expr_novar"), 1, steps[len(steps)-1:]
	}
	steps[len(steps)-1] = object(map[string]any{"op": constant("final"), "value": value})
	g.defs[fmt.Sprintf("step_%d", d)] = map[string]any{"anyOf": steps}
	g.defs[fmt.Sprintf("plan_%d", d)] = object(map[string]any{"steps": map[string]any{
		"type": "array", "items": ref(fmt.Sprintf("step_%d", d)), "minItems": 1, "maxItems": most}})
}
