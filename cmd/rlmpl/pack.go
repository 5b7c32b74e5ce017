package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/rlmpl/rlmpl/host/runtime"
)

// runPack implements `rlmpl pack`: the context a conversation would send,
// as a readable table (or the exact request as JSON).
func runPack(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pack", flag.ContinueOnError)
	state := fs.String("state", defaultStateDir(), "state directory (where stores live)")
	name := storeFlag(fs)
	conv := fs.String("conv", "", "conversation id (required)")
	model := fs.String("model", "", "count with this model's tokenizer (default: the estimator)")
	maxContext := intFlag[int64](fs, "max-context", 0, 0, "operator cap, in `tokens` (default: the policy's)")
	window := intFlag[int64](fs, "provider-window", 0, 0, "the model's window, in `tokens` (default: the policy's)")
	reserve := intFlag[int64](fs, "reserve", -1, 0, "output reserve, in `tokens` (default: the policy's, at most an eighth of --max-context)")
	safety := intFlag[int64](fs, "safety", -1, 0, "safety margin, in `tokens` (default: the policy's, at most 1/32 of --max-context)")
	minRecent := intFlag(fs, "min-recent", -1, 0, "mandatory recent `messages` (default: the policy's)")
	maxCandidates := intFlag(fs, "max-candidates", -1, 0, "older `candidates` (default: the policy's)")
	explain := fs.Bool("explain", false, "also print every ledger stage")
	asJSON := fs.Bool("json", false, "print the exact rendered request (the body a provider is sent) as one line of JSON")
	noBoundary := fs.Bool("no-boundary", false, "leave out the cold-history boundary")
	noWarm := fs.Bool("no-warm", false, "leave out the conversation's published warm summaries")
	if _, code, ok := parseCommand(fs, "pack --conv ID [flags]", args, stdout, stderr); !ok {
		return code
	}
	if code, ok := resolveStoreFlag(name, "pack", stderr); !ok {
		return code
	}
	if *conv == "" {
		fmt.Fprintln(stderr, "rlmpl pack: --conv is required")
		return 2
	}
	h, st, err := openStore(*state, *name, false)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl pack: %v\n", err)
		return 1
	}
	defer h.Close()
	d, err := h.Defaults(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl pack: %v\n", err)
		return 1
	}
	p := d.Policy
	capPolicy(&p, *maxContext)
	if *window > 0 {
		p.ProviderContextTokens = *window
	}
	if *reserve >= 0 {
		p.ReserveOutputTokens = *reserve
	}
	if *safety >= 0 {
		p.SafetyMarginTokens = *safety
	}
	if *minRecent >= 0 {
		p.MinRecentTurns = *minRecent
	}
	if *maxCandidates >= 0 {
		p.MaxCandidates = *maxCandidates
	}
	cv := st.Conversation(*conv)
	if _, err := cv.Info(); err != nil {
		fmt.Fprintf(stderr, "rlmpl pack: %v\n", err)
		return 1
	}
	po := d.PackOptions(runtime.ModePlanner)
	po.Policy, po.Model, po.Boundary = p, *model, !*noBoundary
	if !*noWarm {
		po.Warm = &runtime.WarmOptions{Policy: d.Warm}
	}
	cp, err := cv.Pack(ctx, po)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl pack: %v\n", err)
		return 1
	}
	if *asJSON {
		if err := printJSON(stdout, cp.Request); err != nil {
			fmt.Fprintf(stderr, "rlmpl pack: %v\n", err)
			return 1
		}
		return 0
	}
	printPack(*conv, cp, *explain, stdout)
	return 0
}

func printPack(conv string, cp runtime.Packed, explain bool, stdout io.Writer) {
	l := cp.Ledger
	fmt.Fprintf(stdout, "conversation %s: %d tokens of %d (%s), remaining %d; solver %s in %.1f ms\n",
		conv, l.Total, l.Limit, l.Method, l.Remaining, cp.Status, float64(cp.Stats.Elapsed.Microseconds())/1000)
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "unit\trepresentation\ttokens\tutility")
	for _, s := range cp.Selected {
		u := cp.Units[s.Unit]
		v := u.Variants[s.Variant]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", u.ID, v.Kind, v.Count.Tokens, v.Utility)
	}
	tw.Flush()
	if cp.Boundary.Active {
		gaps := []string{"nothing"}
		if len(cp.Boundary.Omitted) > 0 {
			gaps = gaps[:0]
			for _, r := range cp.Boundary.Omitted {
				gaps = append(gaps, fmt.Sprintf("%d..%d", r.From, r.To))
			}
		}
		fmt.Fprintf(stdout, "left out (searchable through the cold-history handle): %s\n", strings.Join(gaps, ", "))
		if cp.Boundary.Form > 1 {
			fmt.Fprintf(stdout, "the boundary's form %d was sent: its fuller forms did not fit\n", cp.Boundary.Form)
		}
	}
	for _, l := range cp.Boundary.LeftOut {
		fmt.Fprintf(stdout, "message %d left out: %s\n", l.Seq, l.Reason)
	}
	if w := cp.Warm; w.Configured && w.Available > 0 {
		fmt.Fprintf(stdout, "warm summaries: %d published, %d offered, %d stale\n", w.Available, w.Loaded, w.Stale)
	}
	if explain {
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "stage\tkind\trepresentation\tcharged\tcumulative\tmethod")
		for _, s := range l.Stages {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", s.Name, s.Kind, s.Representation, s.Charged, s.Cumulative, s.Count.Method)
		}
		tw.Flush()
	}
}
