package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rlmpl/rlmpl/host/runtime"
)

const receiptSynopsis = "receipt list|show TURN|diff TURN_A TURN_B|stats|chart --conv ID [--state DIR] [--store NAME] [--history] [--after SEQ] [--limit N] [--json] [-o FILE],\n       or rlmpl turn replay TURN --conv ID"

// runReceipt implements `rlmpl receipt list|show|diff` and `rlmpl turn
// replay`: what each managed turn saw, and the proof that it renders again.
func runReceipt(ctx context.Context, cmd string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	state := fs.String("state", defaultStateDir(), "state directory (where stores live)")
	name := storeFlag(fs)
	conv := fs.String("conv", "", "conversation id (required)")
	history := fs.Bool("history", false, "list: every run of each turn")
	after := fs.Int64("after", 0, "list: only the turns whose user message follows this sequence (the next page)")
	limit := fs.Int("limit", 0, "list: at most this many receipts (0: all)")
	asJSON := fs.Bool("json", false, "list, show: JSON Lines, one whole receipt per line (request recipes included); stats: one line per turn, then the total")
	outFile := fs.String("o", "", "chart: the SVG file to write (default: standard output)")
	pos, code, ok := parseCommand(fs, receiptSynopsis, args, stdout, stderr)
	if !ok {
		return code
	}
	if code, ok := resolveStoreFlag(name, cmd, stderr); !ok {
		return code
	}
	need := map[string]int{"receipt list": 0, "receipt show": 1, "receipt diff": 2, "receipt stats": 0, "receipt chart": 0, "turn replay": 1}
	if n, known := need[cmd]; !known || len(pos) != n || *conv == "" {
		fmt.Fprintf(stderr, "usage: rlmpl %s\n", receiptSynopsis)
		return 2
	}
	h, st, err := openStore(*state, *name, false)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl %s: %v\n", cmd, err)
		return 1
	}
	defer h.Close()
	cv := st.Conversation(*conv)
	switch cmd {
	case "receipt list":
		// A row (or a JSON line) per receipt as it is read: a page costs
		// what it holds.
		q := runtime.ReceiptQuery{After: *after, Limit: *limit, History: *history}
		if *asJSON {
			if err := cv.EachReceipt(q, func(r runtime.Receipt) error { return printJSON(stdout, r) }); err != nil {
				fmt.Fprintf(stderr, "rlmpl %s: %v\n", cmd, err)
				return 1
			}
			return 0
		}
		// The header waits for the first row: a conversation that does not
		// exist is an error alone. context is what the planner's request
		// sent (receipt stats' context column), reserved what its ledger
		// kept free beside it (output reserve, safety margin) under limit.
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		header := func() { fmt.Fprintln(tw, "turn\trun\tstatus\tmessages\tcontext\treserved\tlimit\tcount\tcalls") }
		rows := 0
		err := cv.EachReceipt(q, func(r runtime.Receipt) error {
			if rows++; rows == 1 {
				header()
			}
			sent, reserved, limit, method := "-", "-", "-", "-"
			if r.Context != nil {
				ts := r.Stats()
				sent, reserved, limit, method = fmt.Sprint(ts.ContextTokens), fmt.Sprint(ts.ReservedTokens), fmt.Sprint(ts.Limit), r.Context.Method
			}
			msgs := fmt.Sprint(r.UserSeq)
			if r.AssistantSeq > 0 {
				msgs += fmt.Sprintf("→%d", r.AssistantSeq)
			}
			run, status := fmt.Sprint(r.Version), r.Status
			if r.Version == 0 {
				run = "-" // not stored yet: running, or interrupted (the next turn stores it)
			}
			if r.Error != nil && r.Error.Kind == runtime.KindInterrupted {
				status = "interrupted"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", r.TurnID, run, status, msgs, sent, reserved, limit, method, len(r.Calls))
			return nil
		})
		if err == nil && rows == 0 {
			header()
		}
		tw.Flush()
		if err != nil {
			fmt.Fprintf(stderr, "rlmpl %s: %v\n", cmd, err)
			return 1
		}
	case "receipt show":
		r, err := cv.Receipt(pos[0])
		if err != nil {
			fmt.Fprintf(stderr, "rlmpl %s: %v\n", cmd, err)
			return 1
		}
		if *asJSON {
			if err := printJSON(stdout, r); err != nil {
				fmt.Fprintf(stderr, "rlmpl %s: %v\n", cmd, err)
				return 1
			}
		} else {
			printReceipt(r, stdout)
		}
	case "receipt diff":
		a, err1 := cv.Receipt(pos[0])
		b, err2 := cv.Receipt(pos[1])
		if err := firstErr(err1, err2); err != nil {
			fmt.Fprintf(stderr, "rlmpl %s: %v\n", cmd, err)
			return 1
		}
		diffReceipts(a, b, stdout)
	case "receipt stats":
		cs, err := cv.ReceiptStats(runtime.ReceiptQuery{After: *after, Limit: *limit, History: *history})
		if err != nil {
			fmt.Fprintf(stderr, "rlmpl %s: %v\n", cmd, err)
			return 1
		}
		if *asJSON {
			if err := printStatsJSON(cs, stdout); err != nil {
				fmt.Fprintf(stderr, "rlmpl %s: %v\n", cmd, err)
				return 1
			}
		} else {
			printStats(cs, stdout)
		}
	case "receipt chart":
		var rs []runtime.Receipt
		if err := cv.EachReceipt(runtime.ReceiptQuery{After: *after, Limit: *limit, History: *history}, func(r runtime.Receipt) error {
			for i := range r.Calls {
				r.Calls[i].Recipe = runtime.Recipe{} // the chart needs the ledger and the counts only
			}
			rs = append(rs, r)
			return nil
		}); err != nil {
			fmt.Fprintf(stderr, "rlmpl %s: %v\n", cmd, err)
			return 1
		}
		if err := writeChart(rs, *outFile, stdout); err != nil {
			fmt.Fprintf(stderr, "rlmpl %s: %v\n", cmd, err)
			return 1
		}
	case "turn replay":
		bodies, err := cv.Replay(ctx, pos[0])
		if err != nil {
			fmt.Fprintf(stderr, "rlmpl %s: %v\n", cmd, err)
			return 1
		}
		fmt.Fprintf(stdout, "turn %s: %d requests rendered again from the store, byte for byte (SHA-256 verified)\n", pos[0], len(bodies))
	}
	return 0
}

// printReceipt summarizes a receipt for people: the context's ledger
// total, each call's counts and hash, the trajectory, usage and timings
// (--json gives the whole record, recipes included).
func printReceipt(r runtime.Receipt, w io.Writer) {
	msgs := fmt.Sprint(r.UserSeq)
	if r.AssistantSeq > 0 {
		msgs += fmt.Sprintf("→%d", r.AssistantSeq)
	}
	fmt.Fprintf(w, "turn %s  run %d  %s  messages %s\n", r.TurnID, r.Attempt, r.Status, msgs)
	if r.Error != nil {
		fmt.Fprintf(w, "error: %s: %s\n", r.Error.Kind, r.Error.Message)
	}
	counter := r.Counter.Method
	if r.Counter.Encoding != "" {
		counter = r.Counter.Encoding + ", " + counter
	}
	if k := r.Counter.Calibration; k != nil {
		counter += fmt.Sprintf(" ×%.3f over %d calls, +%d%%", k.Ratio, k.Samples, k.SafetyPercent)
	}
	if c := r.Context; c != nil {
		fmt.Fprintf(w, "context: %d of %d tokens (%s; counter %s), %d units, solver %s", c.Total, c.Limit, c.Method, counter, len(c.Selected), c.Solver.Status)
		if c.Boundary.Active {
			fmt.Fprintf(w, ", history before %d behind the boundary", c.Boundary.ColdThrough+1)
		}
		switch c.Boundary.Window {
		case "kept":
			fmt.Fprint(w, ", stable window kept (extends the previous request)")
		case "moved":
			fmt.Fprint(w, ", stable window moved (the cacheable prefix breaks here)")
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "call	prompt tokens	provider's	request sha256")
	for _, c := range r.Calls {
		theirs := "-"
		if c.ProviderPromptTokens != nil {
			theirs = fmt.Sprintf("%d (%+d)", *c.ProviderPromptTokens, *c.Difference)
		}
		kind := c.Kind
		if c.Dialect != "" {
			kind += " (" + c.Dialect + ")"
		}
		if c.Error != "" { // an HTTP attempt that failed: its status (0 when no response came)
			kind = fmt.Sprintf("%s #%d failed (%d)", c.Kind, c.Attempt, c.Status)
		}
		fmt.Fprintf(tw, "%s\t%d %s\t%s\t%s\n", kind, c.LocalPromptTokens, c.Method, theirs, c.RequestSHA256)
	}
	tw.Flush()
	for _, c := range r.Calls {
		if c.Error != "" {
			fmt.Fprintf(w, "%s #%d ended: %s\n", c.Kind, c.Attempt, c.Error)
		}
	}
	for _, m := range r.MCP {
		fmt.Fprintf(w, "mcp %s: %s (definitions %d tokens, %s)\n", m.Server, strings.Join(m.Tools, ", "), m.DefinitionTokens, m.Method)
		for _, c := range m.Calls {
			status := c.Status
			if c.Error != "" {
				status += " (" + c.Error + ": " + c.Message + ")"
			}
			fmt.Fprintf(w, "  %s %s  %.0f ms\n", c.Tool, status, c.MS)
		}
	}
	var steps []string
	for _, s := range r.Trajectory {
		steps = append(steps, s.Op+" "+s.Status)
	}
	if len(steps) > 0 {
		fmt.Fprintf(w, "trajectory: %s\n", strings.Join(steps, ", "))
	}
	u := r.Usage
	fmt.Fprintf(w, "usage: %d model calls, %d prompt + %d completion tokens\n", u.ModelCalls, u.PromptTokens, u.CompletionTokens)
	printSpend(r, w)
	fmt.Fprintf(w, "time: %.0f ms (pack %.1f ms, completion %.0f ms)\n", r.Timings.TotalMS, r.Timings.PackMS, r.Timings.CompletionMS)
}

// writeChart writes the context chart of rs to path, or to stdout when
// path is empty.
func writeChart(rs []runtime.Receipt, path string, stdout io.Writer) error {
	if path == "" {
		return runtime.WriteContextChart(stdout, rs)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := runtime.WriteContextChart(f, rs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// statsLine is one JSON line of receipt stats: a turn, or the total.
type statsLine struct {
	Kind string `json:"kind"` // turn or total
	runtime.TurnStats
	Completed *int `json:"completed,omitempty"`
	Failed    *int `json:"failed,omitempty"`
}

func printStatsJSON(cs runtime.ConversationStats, w io.Writer) error {
	for _, ts := range cs.Turns {
		if err := printJSON(w, statsLine{Kind: "turn", TurnStats: ts}); err != nil {
			return err
		}
	}
	return printJSON(w, statsLine{Kind: "total", TurnStats: cs.Total, Completed: &cs.Completed, Failed: &cs.Failed})
}

// printStats prints a row per turn and the total, then the total's
// prompt tokens by stage.
func printStats(cs runtime.ConversationStats, w io.Writer) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "turn\tstatus\tsolver\tcontext\tprompt\tcached\tshare\toutput\tcost $\tms")
	row := func(ts runtime.TurnStats) {
		cost := fmt.Sprintf("%.6f", ts.CostUSD)
		if ts.UnpricedCalls > 0 {
			cost += fmt.Sprintf(" (%d unpriced)", ts.UnpricedCalls)
		}
		solver := ts.Solver
		if solver == "" {
			solver = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%.1f%%\t%d\t%s\t%.0f\n", ts.TurnID, ts.Status, solver, ts.ContextTokens,
			ts.PromptTokens, ts.CachedTokens, 100*ts.CachedShare, ts.OutputTokens, cost, ts.LatencyMS)
	}
	for _, ts := range cs.Turns {
		row(ts)
	}
	t := cs.Total
	t.Status = fmt.Sprintf("%d ok, %d failed", cs.Completed, cs.Failed)
	row(t)
	tw.Flush()
	if len(t.Stages) == 0 {
		return
	}
	fmt.Fprintf(w, "context tokens by stage, all turns (sent; %d more kept free for output and margin):\n", t.ReservedTokens)
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	for _, s := range t.Stages {
		fmt.Fprintf(tw, "  %s\t%d\t%.1f%%\t\n", s.Stage, s.Tokens, 100*float64(s.Tokens)/float64(max(1, t.ContextTokens)))
	}
	tw.Flush()
}

// printSpend prints, when the provider reported them, the prompt tokens
// it served from its cache (beside the prefix we predicted it could),
// and the turn's cost when any call has one.
func printSpend(r runtime.Receipt, w io.Writer) {
	if n, ok := r.CachedTokens(); ok {
		prompt := 0
		for _, c := range r.Calls {
			if c.ProviderPromptTokens != nil && c.CachedTokens != nil {
				prompt += *c.ProviderPromptTokens
			}
		}
		written := ""
		if m, ok := r.CacheWriteTokens(); ok {
			written = fmt.Sprintf(", %d written to it", m)
		}
		fmt.Fprintf(w, "cached: %d of %d prompt tokens served from the provider's cache%s (predicted cacheable prefix %d)\n", n, prompt, written, r.CachePrefixTokens)
	}
	priced := slices.ContainsFunc(r.Calls, func(c runtime.ReceiptCall) bool { return c.CostUSD != nil })
	if usd, unpriced := r.Cost(); priced {
		note := ""
		if unpriced > 0 {
			note = fmt.Sprintf(" (%d calls without a price)", unpriced)
		}
		fmt.Fprintf(w, "cost: $%.6f%s\n", usd, note)
	}
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// diffReceipts prints which units entered or left the context from turn a
// to turn b, and the token change of each ledger stage.
func diffReceipts(a, b runtime.Receipt, w io.Writer) {
	units := func(r runtime.Receipt) map[string]string {
		m := map[string]string{}
		if r.Context != nil {
			for _, u := range r.Context.Selected {
				m[u.ID] = u.Representation
			}
		}
		return m
	}
	ua, ub := units(a), units(b)
	var entered, left, changed []string
	for id, rep := range ub {
		switch old, ok := ua[id]; {
		case !ok:
			entered = append(entered, id+" ("+rep+")")
		case old != rep:
			changed = append(changed, id+" ("+old+" → "+rep+")")
		}
	}
	for id, rep := range ua {
		if _, ok := ub[id]; !ok {
			left = append(left, id+" ("+rep+")")
		}
	}
	for _, l := range [][]string{entered, left, changed} {
		slices.Sort(l)
	}
	fmt.Fprintf(w, "%s → %s\n", a.TurnID, b.TurnID)
	for _, g := range []struct {
		name string
		ids  []string
	}{{"entered", entered}, {"left", left}, {"representation changed", changed}} {
		for _, id := range g.ids {
			fmt.Fprintf(w, "  %s: %s\n", g.name, id)
		}
	}
	charged := func(r runtime.Receipt) map[string]int64 {
		m := map[string]int64{}
		if r.Context != nil {
			for _, s := range r.Context.Stages {
				m[s.Name] = s.Charged
			}
		}
		return m
	}
	ca, cb := charged(a), charged(b)
	names := map[string]bool{}
	for n := range ca {
		names[n] = true
	}
	for n := range cb {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.Sort(sorted)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  stage\tbefore\tafter\tdelta")
	for _, n := range sorted {
		if ca[n] != cb[n] {
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%+d\n", n, ca[n], cb[n], cb[n]-ca[n])
		}
	}
	var ta, tb int64
	if a.Context != nil {
		ta = a.Context.Total
	}
	if b.Context != nil {
		tb = b.Context.Total
	}
	fmt.Fprintf(tw, "  total\t%d\t%d\t%+d\n", ta, tb, tb-ta)
	tw.Flush()
}
