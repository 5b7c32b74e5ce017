package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
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
	name := storeFlag(fs)
	conv := fs.String("conv", "", "conversation id (required; created when missing)")
	pf := providerFlags(fs)
	system := fs.String("system", "", "a system prompt, sent with every turn")
	maxContext := intFlag[int64](fs, "max-context", 0, 0, "operator cap on every request, in `tokens` (default: the policy's)")
	asJSON := fs.Bool("json", false, "print one NDJSON event per line")
	direct := fs.Bool("direct", false, "answer at once: the conversation goes to the model with history tools, no planner")
	lf := addLogFlags(fs)
	window := fs.String("window", "", "how older turns are kept: contiguous, most_turns or stable (default: the policy's)")
	var mcpFlags []string
	fs.Func("mcp", "grant an MCP server's tools: `SERVER` or SERVER:TOOL,PATTERN,... of providers.toml's [mcp.SERVER] (repeatable)", func(v string) error {
		mcpFlags = append(mcpFlags, v)
		return nil
	})
	if _, code, ok := parseCommand(fs, "chat --conv ID [flags]", args, stdout, stderr); !ok {
		return code
	}
	if code, ok := resolveStoreFlag(name, "chat", stderr); !ok {
		return code
	}
	if *conv == "" {
		fmt.Fprintln(stderr, "rlmpl chat: --conv is required")
		return 2
	}
	tel, err := startTelemetry(ctx, os.Getenv, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl chat: %v\n", err)
		return 2
	}
	defer tel.shutdown(stderr) // after the host is closed: every turn's span has ended
	if _, err := lf.logger(stderr); err != nil {
		fmt.Fprintf(stderr, "rlmpl chat: %v\n", err)
		return 2
	}
	h, err := newHost(*state, *name, providerSetup, tel.setup, lf.setup(stderr))
	if err != nil {
		return failed(stderr, "rlmpl chat", err)
	}
	defer h.Close()
	d, err := h.Defaults(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl chat: %v\n", err)
		return 1
	}
	p := d.Policy
	capPolicy(&p, *maxContext)
	if *window != "" {
		p.Window = pack.Window(*window)
		if err := p.Validate(); err != nil {
			fmt.Fprintf(stderr, "rlmpl chat: --window: %v\n", err)
			return 2
		}
	}
	deps, resolved, err := pf.deps(ctx, h)
	if err != nil {
		return failed(stderr, "rlmpl chat", err)
	}
	var tools *runtime.MCPTools
	if len(mcpFlags) > 0 {
		servers, err := h.MCPServers()
		if err != nil {
			return failed(stderr, "rlmpl chat", err)
		}
		defer servers.Close() // with the chat: its servers stop when it ends
		grants, err := mcpGrants(servers, mcpFlags)
		if err != nil {
			return failed(stderr, "rlmpl chat", err)
		}
		// The servers start with the chat, before its first line: one that
		// does not come up, or a grant of a tool it does not list, ends the
		// chat here, before anything is written.
		for _, g := range grants {
			servers.Start(g.Server) // side by side
		}
		if _, err := servers.Grant(ctx, grants); err != nil {
			return failed(stderr, "rlmpl chat", err)
		}
		tools = &runtime.MCPTools{Servers: servers, Grants: grants}
	}
	// Configuration is checked above, before the store or the
	// conversation is created.
	st, err := storeOn(h, *name, true)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl chat: %v\n", err)
		return 1
	}
	cv, err := openOrCreate(st, *conv)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl chat: %v\n", err)
		return 1
	}
	// A turn whose process died (kill -9) is recorded as failed now, and
	// said: the next request notes its unanswered message (lib's
	// context_no_reply_note/1).
	if id, err := cv.RecordInterrupted(ctx); err != nil {
		fmt.Fprintf(stderr, "rlmpl chat: %v\n", err)
		return 1
	} else if id != "" && *asJSON {
		printJSON(stdout, map[string]any{"event": "interrupted", "turn_id": id})
	} else if id != "" {
		fmt.Fprintf(stderr, "rlmpl chat: turn %s ended with its process before it answered; its failed receipt is recorded, and the next request notes the unanswered message\n", id)
	}
	mode := runtime.ModePlanner
	if *direct {
		mode = runtime.ModeDirect
	}
	to := runtime.TurnOptions{
		Mode:       mode,
		Pack:       d.PackOptions(mode),
		Encodings:  d.CountEncodings,
		Completion: plan.Input{Providers: []string{resolved.Name}, StructuredOutput: resolved.StructuredOutput, SchemaFree: resolved.SchemaFree},
		Deps:       deps,
		Handles:    handle.New(nil),
		MCP:        tools,
	}
	to.Pack.Policy, to.Pack.Model, to.Pack.Warm = p, *pf.model, &runtime.WarmOptions{Policy: d.Warm}
	if *system != "" {
		to.Pack.Sections = []pack.TextSection{{Name: "system_prompt", Visibility: pack.Model, Text: *system}}
	}
	c := chat{ctx: ctx, cv: cv, to: to, json: *asJSON, tty: isTerminal(stdin) && isTerminal(stdout), stdout: stdout, stderr: stderr}
	if c.tty && !c.json {
		// Lines are edited, so that what other workers append can be shown
		// above the line being typed (live.go) and that line redrawn.
		f := stdin.(*os.File)
		c.ed = newEditor(newTTYReader(f), stdout, int(f.Fd()), "", stderr)
	}
	return c.loop(stdin)
}

// chat is one interactive chat.
type chat struct {
	ctx            context.Context
	cv             runtime.Conversation
	to             runtime.TurnOptions
	json, tty      bool
	ed             *editor // the line editor, on a terminal (not with --json)
	stdout, stderr io.Writer
	last           *runtime.Receipt
	failed         bool // a turn failed: chat exits 1
	interrupts     chan os.Signal

	// Messages other workers append show up (live.go's watch). mu
	// protects the fields below and stdout while idle.
	mu   sync.Mutex
	idle bool           // waiting for a line: the watcher may print
	seen int64          // the last sequence shown or known
	own  map[int64]bool // sequences this chat's turns wrote, not shown again
}

// loop runs a turn per line until /quit or the end of the input and
// returns the exit status: 1 when a turn failed (a cancelled one too: its
// receipt is failed). On a terminal, lines are edited as in the top level;
// Ctrl-C cancels the running turn (its receipt records the cancellation)
// or, at the prompt, clears the line; Ctrl-D leaves. Without a terminal,
// SIGINT ends chat with status 130.
func (c *chat) loop(stdin io.Reader) int {
	lines := lineReader{in: bufio.NewReader(stdin)}
	if c.tty {
		// SIGINT cancels a turn only, so chat does not use the process
		// context, which the first SIGINT ends for good.
		c.ctx = context.WithoutCancel(c.ctx)
		lines.interrupts = make(chan os.Signal, 1)
		signal.Notify(lines.interrupts, os.Interrupt)
		defer signal.Stop(lines.interrupts)
	}
	c.interrupts = lines.interrupts
	stopWatch := c.watch()
	defer stopWatch()
	for {
		c.others()
		c.setIdle(true)
		text, err := c.readLine(&lines)
		c.setIdle(false)
		switch {
		case errors.Is(err, errInterrupted) && c.tty:
			fmt.Fprintln(c.stdout) // the terminal dropped the line
			continue
		case errors.Is(err, errInterrupted):
			return 130
		case err != nil && !errors.Is(err, io.EOF):
			fmt.Fprintf(c.stderr, "rlmpl chat: reading input: %v\n", err)
			return 1
		case err != nil && text == "":
			if c.tty {
				fmt.Fprintln(c.stdout)
			}
			return c.status()
		}
		line := strings.TrimSpace(text)
		switch {
		case line == "":
		case line == "/quit" || line == "/exit":
			return c.status()
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

// readLine reads the next line: edited after a prompt on a terminal, as
// it comes otherwise.
func (c *chat) readLine(lines *lineReader) (string, error) {
	if c.ed == nil {
		return lines.next(c.ctx)
	}
	text, err := c.ed.readLine("> ")
	drain(c.interrupts) // a SIGINT sent while at the prompt is not for the next turn
	return text, err
}

// status is chat's exit status: 1 when a turn failed, else 0.
func (c *chat) status() int {
	if c.failed {
		return 1
	}
	return 0
}

// emit prints an NDJSON event (json.go's convention).
func (c *chat) emit(v any) {
	if err := printJSON(c.stdout, v); err != nil {
		fmt.Fprintf(c.stderr, "rlmpl chat: %v\n", err)
	}
}

func (c *chat) turn(text string) {
	var streamed strings.Builder
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
			streamed.WriteString(ev.Text)
			fmt.Fprint(c.stdout, ev.Text)
		}
	}
	ctx, stop := interruptible(c.ctx, c.interrupts)
	res, err := c.cv.Turn(ctx, store.Message{Role: store.RoleUser, Content: store.TextContent(text)}, to)
	interrupted := ctx.Err() != nil && stop()
	stop()
	var te *runtime.TurnError
	if errors.As(err, &te) && te.Receipt != nil {
		c.last = te.Receipt
		c.mine(te.Receipt.UserSeq)
	}
	if err == nil {
		c.mineTurn(res.User.Seq, res.Assistant.Seq)
	} else {
		c.failed = true // cancelled or not, its receipt says failed: chat exits 1
	}
	switch {
	case err != nil && interrupted:
		if !c.json {
			fmt.Fprintln(c.stdout) // after the ^C the terminal echoed
			fmt.Fprintln(c.stderr, "rlmpl chat: turn cancelled (the message stays stored; its receipt records the cancellation)")
		}
		return
	case err != nil:
		if !c.json {
			if streamed.Len() > 0 {
				fmt.Fprintln(c.stdout) // end the answer's partial line
			}
			fmt.Fprintf(c.stderr, "rlmpl chat: %v\n", err)
		}
		return
	}
	c.last = &res.Receipt
	answer := res.Assistant.Message.Content.PlainText()
	switch {
	case c.json:
		c.emit(map[string]any{"event": "answer", "turn_id": res.TurnID, "assistant_seq": res.Assistant.Seq, "text": answer})
	case streamed.Len() == 0:
		fmt.Fprintln(c.stdout, answer)
	case streamed.String() != answer:
		// What streamed was not the answer (a step's text, a plan the
		// planner was asked again for): the answer follows whole.
		fmt.Fprintf(c.stdout, "\n%s\n", answer)
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
	if c.json {
		ev := map[string]any{"event": "ledger", "turn_id": c.last.TurnID, "context": ctx}
		if n, ok := c.last.CachedTokens(); ok {
			ev["cached_tokens"] = n
		}
		if usd, unpriced := c.last.Cost(); unpriced == 0 && len(c.last.Calls) > 0 {
			ev["cost_usd"] = usd
		}
		c.emit(ev)
		return
	}
	tw := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "stage\tkind\tcharged\tmethod")
	for _, s := range ctx.Stages {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", s.Name, s.Kind, s.Charged, s.Method)
	}
	fmt.Fprintf(tw, "total\t\t%d\tof %d (%s)\n", ctx.Total, ctx.Limit, ctx.Method)
	tw.Flush()
	printSpend(*c.last, c.stdout)
}

func (c *chat) receipt() {
	if c.last == nil {
		fmt.Fprintln(c.stderr, "no turn yet")
		return
	}
	if c.json {
		c.emit(map[string]any{"event": "receipt", "receipt": c.last})
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
		if c.json {
			c.emit(struct {
				Event string `json:"event"`
				hitJSON
			}{"hit", hitView(h)})
			continue
		}
		fmt.Fprintln(c.stdout, messageLine(h.Record, scoreNote(h)))
	}
}
