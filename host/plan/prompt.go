package plan

import (
	"fmt"
	"strings"

	"github.com/rlmpl/rlmpl/host/handle"
)

// PromptData is what a planner prompt states.
type PromptData struct {
	Query             string
	Metadata          handle.Metadata // rendered with Describe: never the payload
	Capabilities      []Capability
	ChildCapabilities []Capability
	Tools             []ToolSchema // sorted by name
	Budget            Budget
	Depth             int    // 0 for the root planner
	Instruction       string // appended verbatim
	Feedback          string // why the previous answer was rejected ("" on the first attempt)
	// Goal is what the Goal line says, when not the Query itself (a
	// managed turn's goal refers to the conversation it sends).
	Goal string
}

// grammar is the plan language as the planner reads it: both syntaxes
// and one worked example in each.
const grammar = `A plan is a list of steps run in order. Each step binds its result to a new name
(unique in its scope); later steps read it with var(Name). The last step, and only
the last, is final(Expr): its value is the answer.

Steps (term syntax | JSON syntax):
  context(Handle, Action, Bind)      | {"op":"context","handle":E,"action":A,"bind":"b"}
  model(Provider, Prompt, [Opt(V)], Bind)
                                     | {"op":"model","provider":"p","prompt":E,"options":{"max_tokens":N},"bind":"b"}
  tool(Name, Args, Bind)             | {"op":"tool","name":"n","args":E,"bind":"b"}
  rlm(query(Goal), Bind)             | {"op":"rlm","query":E,"bind":"b"}
      a child completion: a child planner answers Goal over input(context)
      (or over query(Goal, Handle)) with the child capabilities
  rlm(plan([Step, ...]), Bind)       | {"op":"rlm","plan":{"steps":[...]},"bind":"b"}
      a nested plan run as a child, with the child capabilities
  parallel([plan([...]), ...], Bind) | {"op":"parallel","plans":[{"steps":[...]},...],"bind":"b"}
      branches run concurrently; Bind is the list of their final values
  retry(N, plan([...]), Bind)        | {"op":"retry","attempts":N,"plan":{"steps":[...]},"bind":"b"}
  checkpoint(Label)                  | {"op":"checkpoint","label":"l"}
  final(Expr)                        | {"op":"final","value":E}

Context actions (term | JSON):
  search("text")        | {"type":"search","pattern":"text"}      matching lines or items
  slice(Start, Length)  | {"type":"slice","start":0,"length":100}
  peek(metadata)        | {"type":"peek","selector":"metadata"}
  peek(head(N)), peek(tail(N)), peek(item(I))
                        | {"type":"peek","selector":{"type":"head","count":N}} (tail: count, item: index)
  partition(fixed(N)), partition(lines(N))
                        | {"type":"partition","strategy":{"type":"fixed","size":N}}
  map(identity|lowercase|uppercase|length)  | {"type":"map","transform":"lowercase"}
  reduce(count|byte_count)                  | {"type":"reduce","reducer":"count"}

Expressions (term | JSON):
  input(context), input(query)  | {"ref":"input","name":"context"}
  var(Name)                     | {"ref":"var","name":"b"}
  field(Expr, Key)              | {"ref":"field","value":E,"key":"text"}
  literal(Value)                | a JSON string, number, true, false or null
  list([Expr, ...])             | [E, ...]
  object([key-Expr, ...])       | {"key":E, ...}
In the term syntax names are atoms (lower_case), text is "double quoted", and
variables (capitalised names) are not allowed.

Example: find the lines mentioning "needle" and answer with them.
  plan([context(input(context), search("needle"), hits), final(var(hits))])
  {"steps":[{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"search","pattern":"needle"},"bind":"hits"},{"op":"final","value":{"ref":"var","name":"hits"}}]}`

// PromptPart is one named part of a planner prompt. A managed turn sends
// the parts as separate messages so that each is a stage of its ledger and
// the stable ones form a cacheable prefix.
type PromptPart struct {
	Name string // instructions, plan_grammar, goal, capabilities, tool_schemas, budget, instruction, feedback
	Text string
}

// PromptParts splits a planner prompt into its parts, in the order of
// [RenderPrompt], which joins them: the instructions and the grammar (never
// change), the goal and the context metadata, the capabilities, the tools
// and the budget (fixed for a completion), the caller's instruction and, on
// a retry, the feedback. Empty parts are left out.
func PromptParts(d PromptData) []PromptPart {
	var intro strings.Builder
	if d.Depth == 0 {
		intro.WriteString("You are the root planner of a bounded recursive language-model runtime.\n")
	} else {
		fmt.Fprintf(&intro, "You are a child planner at recursion depth %d of a bounded recursive language-model runtime.\n", d.Depth)
	}
	intro.WriteString("Answer with exactly one plan, in either the Prolog term syntax plan([...]) or the JSON syntax {\"steps\":[...]}, and nothing else.\n")
	intro.WriteString("The context is opaque: you see only its metadata below, and reach its content only through context steps on input(context). Never invent content from the metadata.\n\n")
	caps := fmt.Sprintf("Capabilities: [%s]\nChild capabilities (for rlm steps): [%s]\n",
		strings.Join(capStrings(d.Capabilities), ", "), strings.Join(capStrings(d.ChildCapabilities), ", "))
	b := d.Budget
	budget := fmt.Sprintf("Budget for everything (planner calls included): %d steps, %d model calls, %d tool calls, %d context operations, recursion depth %d, %d output bytes, %d tokens.\n",
		b.MaxIterations, b.MaxModelCalls, b.MaxToolCalls, b.MaxContextOps, b.MaxRecursionDepth, b.MaxOutputBytes, b.MaxTotalTokens) +
		"Every step needs its capability: context(Action), model(Provider), tool(Name), rlm, parallel, retry, checkpoint; final needs none. Recursion is optional.\n"
	var tools strings.Builder
	if len(d.Tools) == 0 {
		tools.WriteString("Tools: none\n")
	} else {
		tools.WriteString("Tools:\n")
		for _, t := range d.Tools {
			fmt.Fprintf(&tools, "  %s", t.Name)
			if t.Description != "" {
				fmt.Fprintf(&tools, ": %s", t.Description)
			}
			if t.Schema != "" {
				fmt.Fprintf(&tools, "\n    args schema: %s", t.Schema)
			}
			tools.WriteString("\n")
		}
	}
	goal := d.Goal
	if goal == "" {
		goal = d.Query
	}
	parts := []PromptPart{
		{"instructions", intro.String()},
		{"plan_grammar", grammar + "\n\n"},
		{"goal", fmt.Sprintf("Goal: %s\nContext metadata: %s\n", goal, d.Metadata.Describe())},
		{"capabilities", caps},
		{"tool_schemas", tools.String()},
		{"budget", budget},
	}
	if d.Instruction != "" {
		parts = append(parts, PromptPart{"instruction", "\n" + d.Instruction + "\n"})
	}
	if d.Feedback != "" {
		parts = append(parts, PromptPart{"feedback", fmt.Sprintf("\nYour previous answer was rejected: %s\nAnswer again with one corrected plan.\n", d.Feedback)})
	}
	return parts
}

// RenderPrompt renders a planner prompt as one text: its parts joined. It
// is deterministic: the same data renders byte for byte the same text (a
// golden test pins it).
func RenderPrompt(d PromptData) string {
	var sb strings.Builder
	for _, p := range PromptParts(d) {
		sb.WriteString(p.Text)
	}
	return sb.String()
}
