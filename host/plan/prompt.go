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

// RenderPrompt renders a planner prompt. It is deterministic: the same
// data renders byte for byte the same text (a golden test pins it).
func RenderPrompt(d PromptData) string {
	var sb strings.Builder
	if d.Depth == 0 {
		sb.WriteString("You are the root planner of a bounded recursive language-model runtime.\n")
	} else {
		fmt.Fprintf(&sb, "You are a child planner at recursion depth %d of a bounded recursive language-model runtime.\n", d.Depth)
	}
	sb.WriteString("Answer with exactly one plan, in either the Prolog term syntax plan([...]) or the JSON syntax {\"steps\":[...]}, and nothing else.\n")
	sb.WriteString("The context is opaque: you see only its metadata below, and reach its content only through context steps on input(context). Never invent content from the metadata.\n\n")
	sb.WriteString(grammar)
	sb.WriteString("\n\n")
	fmt.Fprintf(&sb, "Goal: %s\n", d.Query)
	fmt.Fprintf(&sb, "Context metadata: %s\n", d.Metadata.Describe())
	fmt.Fprintf(&sb, "Capabilities: [%s]\n", strings.Join(capStrings(d.Capabilities), ", "))
	fmt.Fprintf(&sb, "Child capabilities (for rlm steps): [%s]\n", strings.Join(capStrings(d.ChildCapabilities), ", "))
	if len(d.Tools) == 0 {
		sb.WriteString("Tools: none\n")
	} else {
		sb.WriteString("Tools:\n")
		for _, t := range d.Tools {
			fmt.Fprintf(&sb, "  %s", t.Name)
			if t.Description != "" {
				fmt.Fprintf(&sb, ": %s", t.Description)
			}
			if t.Schema != "" {
				fmt.Fprintf(&sb, "\n    args schema: %s", t.Schema)
			}
			sb.WriteString("\n")
		}
	}
	b := d.Budget
	fmt.Fprintf(&sb, "Budget for everything (planner calls included): %d steps, %d model calls, %d tool calls, %d context operations, recursion depth %d, %d output bytes, %d tokens.\n",
		b.MaxIterations, b.MaxModelCalls, b.MaxToolCalls, b.MaxContextOps, b.MaxRecursionDepth, b.MaxOutputBytes, b.MaxTotalTokens)
	sb.WriteString("Every step needs its capability: context(Action), model(Provider), tool(Name), rlm, parallel, retry, checkpoint; final needs none. Recursion is optional.\n")
	if d.Instruction != "" {
		sb.WriteString("\n")
		sb.WriteString(d.Instruction)
		sb.WriteString("\n")
	}
	if d.Feedback != "" {
		fmt.Fprintf(&sb, "\nYour previous answer was rejected: %s\nAnswer again with one corrected plan.\n", d.Feedback)
	}
	return sb.String()
}
