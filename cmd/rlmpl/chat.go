package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/store"
)

// runChat implements `rlmpl chat`: an interactive chat over a managed
// conversation. Each line is a managed turn; the answer streams as it
// arrives. /ledger, /receipt, /search TEXT and /quit are commands; --json
// prints one NDJSON event per line for front ends.
func runChat(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	state := fs.String("state", defaultStateDir(), "state directory (where stores live)")
	name := fs.String("store", defaultStore, "store: a name under the state directory, or an absolute directory")
	conv := fs.String("conv", "", "conversation id (required; created when missing)")
	pf := providerFlags(fs)
	system := fs.String("system", "", "a system prompt, sent with every turn")
	maxContext := fs.Int64("max-context", 0, "operator cap on every request (default: the policy's)")
	asJSON := fs.Bool("json", false, "print one NDJSON event per line")
	direct := fs.Bool("direct", false, "answer at once: the conversation goes to the model with history tools, no planner")
	if _, code, ok := parseCommand(fs, "chat --conv ID [flags]", args, stdout, stderr); !ok {
		return code
	}
	if *conv == "" {
		fmt.Fprintln(stderr, "rlmpl chat: --conv is required")
		return 2
	}
	h, st, err := openStore(*state, *name, providerSetup)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl chat: %v\n", err)
		return 1
	}
	defer h.Close()
	cv, err := openOrCreate(st, *conv)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl chat: %v\n", err)
		return 1
	}
	d, err := h.Defaults(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl chat: %v\n", err)
		return 1
	}
	p := d.Policy
	capPolicy(&p, *maxContext)
	deps, resolved, err := pf.deps(ctx, h)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl chat: %s\n", configText(err))
		return 2
	}
	to := runtime.TurnOptions{
		Pack: runtime.PackOptions{Policy: p, Model: *pf.model, Boundary: true, BoundaryTemplate: d.BoundaryTemplate,
			Utilities: d.Utilities, Warm: &runtime.WarmOptions{Policy: d.Warm}},
		Encodings:  d.CountEncodings,
		Completion: plan.Input{Providers: []string{resolved.Name}, StructuredOutput: resolved.StructuredOutput, SchemaFree: resolved.SchemaFree},
		Deps:       deps,
		Handles:    handle.New(nil),
	}
	if *direct {
		to.Mode, to.Pack.BoundaryTemplate = runtime.ModeDirect, d.DirectBoundaryTemplate
	}
	if *system != "" {
		to.Pack.Sections = []pack.TextSection{{Name: "system_prompt", Visibility: pack.Model, Text: *system}}
	}
	c := chat{ctx: ctx, cv: cv, to: to, json: *asJSON, tty: isTerminal(stdin) && isTerminal(stdout), stdout: stdout, stderr: stderr}
	return c.loop(stdin)
}

// chat is one interactive chat.
type chat struct {
	ctx            context.Context
	cv             runtime.Conversation
	to             runtime.TurnOptions
	json, tty      bool
	stdout, stderr io.Writer
	last           *runtime.Receipt
}

func (c *chat) loop(stdin io.Reader) int {
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for {
		if c.tty && !c.json {
			fmt.Fprint(c.stdout, "> ")
		}
		if !sc.Scan() {
			if c.ctx.Err() != nil {
				return 130
			}
			return 0
		}
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
		case line == "/quit" || line == "/exit":
			return 0
		case line == "/ledger":
			c.ledger()
		case line == "/receipt":
			c.receipt()
		case strings.HasPrefix(line, "/search "):
			c.search(strings.TrimSpace(strings.TrimPrefix(line, "/search ")))
		case strings.HasPrefix(line, "/"):
			fmt.Fprintln(c.stderr, "commands: /ledger, /receipt, /search TEXT, /quit")
		default:
			c.turn(line)
		}
		if c.ctx.Err() != nil {
			return 130
		}
	}
}

// emit prints an NDJSON event.
func (c *chat) emit(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Fprintln(c.stdout, string(b))
}

func (c *chat) turn(text string) {
	streamed := false
	to := c.to
	to.OnEvent = func(ev runtime.TurnEvent) {
		switch {
		case c.json:
			e := map[string]any{"event": ev.Kind, "turn_id": ev.TurnID}
			switch {
			case ev.Ledger != nil:
				e["total_tokens"], e["limit"], e["method"] = ev.Ledger.Total, ev.Ledger.Limit, ev.Ledger.Method.String()
			case ev.Step != nil:
				e["op"], e["status"] = ev.Step.Op, ev.Step.Status
			case ev.Kind == "delta":
				e["text"] = ev.Text
			}
			if ev.Err != nil {
				e["error"] = ev.Err.Error()
			}
			c.emit(e)
		case ev.Kind == "delta":
			streamed = true
			fmt.Fprint(c.stdout, ev.Text)
		}
	}
	res, err := c.cv.Turn(c.ctx, store.Message{Role: store.RoleUser, Content: store.TextContent(text)}, to)
	var te *runtime.TurnError
	if errors.As(err, &te) && te.Receipt != nil {
		c.last = te.Receipt
	}
	if err != nil {
		if !c.json {
			fmt.Fprintf(c.stderr, "rlmpl chat: %v\n", err)
		}
		return
	}
	c.last = &res.Receipt
	answer := res.Assistant.Message.Content.PlainText()
	switch {
	case c.json:
		c.emit(map[string]any{"event": "answer", "turn_id": res.TurnID, "assistant_seq": res.Assistant.Seq, "text": answer})
	case !streamed || res.Receipt.ValueType == "json":
		fmt.Fprintln(c.stdout, answer)
	default:
		fmt.Fprintln(c.stdout)
	}
}

func (c *chat) ledger() {
	if c.last == nil || c.last.Context == nil {
		fmt.Fprintln(c.stderr, "no turn yet")
		return
	}
	ctx := c.last.Context
	tw := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "stage\tkind\tcharged\tmethod")
	for _, s := range ctx.Stages {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", s.Name, s.Kind, s.Charged, s.Method)
	}
	fmt.Fprintf(tw, "total\t\t%d\tof %d (%s)\n", ctx.Total, ctx.Limit, ctx.Method)
	tw.Flush()
}

func (c *chat) receipt() {
	if c.last == nil {
		fmt.Fprintln(c.stderr, "no turn yet")
		return
	}
	printReceipt(*c.last, c.stdout)
}

func (c *chat) search(q string) {
	hits, err := c.cv.Search(q, store.SearchOptions{MaxResults: 5})
	if err != nil {
		fmt.Fprintf(c.stderr, "rlmpl chat: %v\n", err)
		return
	}
	for _, h := range hits {
		fmt.Fprintf(c.stdout, "[%d] %s: %s\n", h.Seq, h.Message.Role, h.Message.Content.PlainText())
	}
}
