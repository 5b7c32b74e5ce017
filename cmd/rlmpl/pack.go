package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
)

// runPack implements `rlmpl pack`: the context a conversation would send,
// as a readable table (or the exact request as JSON).
func runPack(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pack", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("store", defaultStoreDir(), "store directory")
	conv := fs.String("conv", "", "conversation id (required)")
	model := fs.String("model", "", "count with this model's tokenizer (default: the estimator)")
	policy := map[string]*int64{}
	for _, f := range []struct{ flag, key, help string }{
		{"max-context", "max_context_tokens", "operator cap"}, {"provider-window", "provider_context_tokens", "the model's window"},
		{"reserve", "reserve_output_tokens", "output reserve"}, {"safety", "safety_margin_tokens", "safety margin"},
		{"min-recent", "min_recent_turns", "mandatory recent messages"}, {"max-candidates", "max_candidates", "older candidates"},
	} {
		policy[f.key] = fs.Int64(f.flag, -1, f.help+" (default: the policy's)")
	}
	explain := fs.Bool("explain", false, "also print every ledger stage")
	asJSON := fs.Bool("json", false, "print the exact rendered request as JSON")
	noBoundary := fs.Bool("no-boundary", false, "leave out the cold-history boundary")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *conv == "" {
		fmt.Fprintln(stderr, "rlmpl pack: --conv is required")
		return 2
	}
	isOK, rec, code := outcome(ctx, "pack", nil, func(ip *prolog.Interpreter) string {
		var pol []string
		for _, k := range []string{"max_candidates", "max_context_tokens", "min_recent_turns", "provider_context_tokens", "reserve_output_tokens", "safety_margin_tokens"} {
			if v := *policy[k]; v >= 0 {
				pol = append(pol, fmt.Sprintf("%s(%d)", k, v))
			}
		}
		opts := []string{"policy([" + strings.Join(pol, ",") + "])", fmt.Sprintf("cold_history_boundary(%t)", !*noBoundary)}
		if *model != "" {
			opts = append(opts, "token_options([model("+ip.WriteQ(engine.NewAtom(*model), nil)+")])")
		}
		return fmt.Sprintf(`conversation_store_open(persist(%s), ok(S)), conversation_open(S, %s, OC),
			( OC = ok(C) -> conversation_context_pack(C, [%s], Out) ; Out = OC )`,
			ip.WriteQ(prolog.Chars(*dir), nil), ip.WriteQ(engine.NewAtom(*conv), nil), strings.Join(opts, ", "))
	}, stderr)
	if code != 0 {
		return code
	}
	if !isOK {
		return reportError("pack", rec, stderr)
	}
	if *asJSON {
		reqv, _ := rec.Get("request")
		var msgs []map[string]string
		for _, m := range reqv.([]any) {
			mr, _ := m.(prolog.Record)
			role, _ := mr.Get("role")
			content, _ := mr.Get("content")
			msgs = append(msgs, map[string]string{"role": fmt.Sprint(role), "content": valueText(content)})
		}
		b, _ := json.MarshalIndent(map[string]any{"messages": msgs}, "", "  ")
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	printPack(rec, *explain, stdout)
	return 0
}

func printPack(rec prolog.Record, explain bool, stdout io.Writer) {
	get := func(r prolog.Record, k string) any { v, _ := r.Get(k); return v }
	led, _ := get(rec, "ledger").(prolog.Record)
	sol, _ := get(rec, "solver").(prolog.Record)
	bnd, _ := get(rec, "cold_history_boundary").(prolog.Record)
	fmt.Fprintf(stdout, "conversation %v: %v tokens of %v (%v), remaining %v; solver %v in %v ms\n",
		get(rec, "conversation_id"), get(led, "total_tokens"), get(led, "limit"), get(led, "method"),
		get(led, "remaining_tokens"), get(sol, "status"), get(sol, "elapsed_ms"))
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "unit\tkind\ttokens\tutility")
	for _, s := range get(rec, "selected").([]any) {
		sr, _ := s.(prolog.Record)
		fmt.Fprintf(tw, "%v\t%v\t%v\t%v\n", get(sr, "id"), get(sr, "kind"), get(sr, "tokens"), get(sr, "utility"))
	}
	tw.Flush()
	if get(bnd, "active") == prolog.Atom("true") {
		var gaps []string
		for _, r := range get(bnd, "omitted_ranges").([]any) {
			rc, _ := r.(prolog.Compound)
			gaps = append(gaps, fmt.Sprintf("%v..%v", rc.Args[0], rc.Args[1]))
		}
		if len(gaps) == 0 {
			gaps = []string{"nothing"}
		}
		fmt.Fprintf(stdout, "left out (searchable through the cold-history handle): %s\n", strings.Join(gaps, ", "))
	}
	if explain {
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "stage\tkind\tcharged\tcumulative\tmethod")
		for _, s := range get(led, "stages").([]any) {
			sr, _ := s.(prolog.Record)
			fmt.Fprintf(tw, "%v\t%v\t%v\t%v\t%v\n", get(sr, "name"), get(sr, "kind"), get(sr, "charged_tokens"), get(sr, "cumulative_tokens"), get(sr, "method"))
		}
		tw.Flush()
	}
}
