package plan_test

import (
	"context"
	"fmt"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/planterm"
)

// staticPlanner answers every planner call with the same text.
type staticPlanner string

func (p staticPlanner) Plan(context.Context, plan.PlannerRequest) (plan.PlannerReply, error) {
	return plan.PlannerReply{Text: string(p)}, nil
}

func ExampleComplete() {
	reg := handle.New(nil)
	ref, meta, _ := reg.RegisterText("alpha\nneedle one\nneedle two\nomega", handle.Limits{})
	planner := staticPlanner("Here is my plan:\n```prolog\n" +
		`plan([context(input(context), search("needle"), hits), final(var(hits))]).` + "\n```")
	out, err := plan.Complete(context.Background(), plan.Input{
		Query:   "Which lines mention the needle?",
		Context: plan.ContextRef{Ref: ref, Metadata: meta},
	}, plan.Deps{Contexts: reg, Planner: planner, Terms: planterm.Reader{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.Encode(out.Value))
	fmt.Println(out.Used.Steps, out.Used.ContextOps, out.Usage.ModelCalls, out.Usage.TokensKnown)
	// Output:
	// [{"index":1,"value":"needle one"},{"index":2,"value":"needle two"}]
	// 2 1 1 false
}

func ExampleParseText() {
	for _, text := range []string{
		`plan([context(input(context), search("needle"), r), final(var(r))])`,
		"```json\n{\"steps\":[{\"op\":\"final\",\"value\":7}]}\n```",
		`plan([final(var(X))])`,
	} {
		p, err := plan.ParseText(text, planterm.Reader{})
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(p)
	}
	// Output:
	// plan([context(input(context), search("needle"), r), final(var(r))])
	// plan([final(literal(7))])
	// error: plan: term parse error at 1:17: invalid term: variables are not allowed (found X); write data only: atoms, numbers, "strings", lists and compounds
}
