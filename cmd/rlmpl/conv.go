package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/store"
)

// openStore builds a host over the state directory (newHost) and opens
// the store named by name on it (storeOn).
func openStore(state, name string, create bool, setup ...func(*host.Options) error) (*host.Host, *runtime.Store, error) {
	h, err := newHost(state, name, setup...)
	if err != nil {
		return nil, nil, err
	}
	st, err := storeOn(h, name, create)
	if err != nil {
		h.Close()
		return nil, nil, err
	}
	return h, st, nil
}

// newHost builds a host over the state directory for the store named by
// name (an absolute path is granted: the operator named it). setup, if
// any, completes the host's options first. It writes nothing.
func newHost(state, name string, setup ...func(*host.Options) error) (*host.Host, error) {
	opts := &host.Options{StateDir: state}
	if spec, err := store.ParseSpec(name); err == nil && spec.Local() && filepath.IsAbs(spec.Target) {
		opts.Grants = []string{spec.Target}
	}
	for _, f := range setup {
		if err := f(opts); err != nil {
			return nil, err
		}
	}
	return host.New(opts)
}

// storeOn opens the store the spec name names (store.ParseSpec: memory,
// a name under the state directory, an absolute path, badger:PATH,
// postgres://…, sqlite:PATH). Only a command that writes passes create:
// the others open an existing store or fail with
// runtime.ErrStoreNotFound, leaving nothing behind (no state directory,
// no lock file, no table in a PostgreSQL schema).
func storeOn(h *host.Host, name string, create bool) (*runtime.Store, error) {
	spec, err := store.ParseSpec(name)
	if err != nil {
		return nil, err
	}
	return h.Runtime().OpenStore(runtime.StoreSpec{Store: spec, Existing: !create})
}

// openOrCreate returns conversation id of st, created when missing.
func openOrCreate(st *runtime.Store, id string) (runtime.Conversation, error) {
	cv := st.Conversation(id)
	_, err := cv.Info()
	if errors.Is(err, store.ErrNotFound) {
		_, err = st.Create(id, nil)
	}
	return cv, err
}

const convSynopsis = `conv list|show ID|search ID QUERY|stats ID|export ID|import ID FILE.jsonl [--state DIR] [--store NAME]
       [--recent N] [--max N] [--exact] [--window N] [--role R] [--session S] [--no-context] [--cold] [--max-bytes N] [--documents] [--json]`

// capPolicy applies an operator's --max-context: a small cap keeps room
// for context, so the default reserve and margin shrink with it.
func capPolicy(p *pack.Policy, maxContext int64) {
	if maxContext > 0 {
		p.MaxContextTokens = maxContext
		p.ReserveOutputTokens = min(p.ReserveOutputTokens, maxContext/8)
		p.SafetyMarginTokens = min(p.SafetyMarginTokens, maxContext/32)
	}
}

// runConv implements `rlmpl conv list|show|search|stats|export|import`.
func runConv(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if code, ok := groupHelp(args, convSynopsis, stdout, stderr); !ok {
		return code
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("conv "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	state := fs.String("state", defaultStateDir(), "state directory (where stores live)")
	name := storeFlag(fs)
	recent := intFlag(fs, "recent", 0, 0, "show: only the last `N` messages (0: all)")
	maxResults := intFlag(fs, "max", 10, 1, "search: at most `N` results")
	exact := fs.Bool("exact", false, "search: substring matching instead of ranked")
	window := intFlag(fs, "window", 0, 0, "search: also show the `N` messages on each side of each hit")
	role := fs.String("role", "", "search: only messages of this role")
	session := fs.String("session", "", "search: only messages of this session")
	noContext := fs.Bool("no-context", false, "search: rank each message by its own score alone")
	documents := fs.Bool("documents", false, "export: add the conversation's receipts and warm artifacts (a backup import restores whole)")
	cold := fs.Bool("cold", false, "search: show exactly what a planner gets through the cold-history handle")
	maxBytes := intFlag(fs, "max-bytes", 4096, 1, "search --cold: the handle's byte `budget`")
	asJSON := fs.Bool("json", false, "list, show, search, stats: JSON Lines (one object per line)")
	lenient := fs.Bool("lenient", false, "import: keep tool results that answer no call before them (packs leave them out)")
	pos, code, ok := parseCommand(fs, convSynopsis, args, stdout, stderr)
	if !ok {
		return code
	}
	if code, ok := resolveStoreFlag(name, "conv "+cmd, stderr); !ok {
		return code
	}
	need := map[string]int{"list": 0, "show": 1, "search": 2, "stats": 1, "export": 1, "import": 2}
	n, known := need[cmd]
	if !known {
		fmt.Fprintf(stderr, "rlmpl conv: unknown command %q\n", cmd)
		return 2
	}
	if len(pos) != n {
		fmt.Fprintf(stderr, "rlmpl conv %s: want %d arguments, got %d\n", cmd, n, len(pos))
		return 2
	}
	h, st, err := openStore(*state, *name, cmd == "import")
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl conv %s: %v\n", cmd, err)
		return 1
	}
	defer h.Close()
	c := convCmd{ctx: ctx, h: h, st: st, json: *asJSON, stdin: stdin, stdout: stdout, stderr: stderr}
	switch cmd {
	case "list":
		err = c.list()
	case "show":
		err = c.show(pos[0], *recent)
	case "search":
		if *cold {
			err = c.coldSearch(pos[0], pos[1], *maxResults, *maxBytes)
		} else {
			so := store.SearchOptions{MaxResults: *maxResults, Exact: *exact, Window: *window, Session: *session, NoContext: *noContext}
			if *role != "" {
				r, rerr := store.ParseRole(*role)
				if rerr != nil {
					fmt.Fprintf(stderr, "rlmpl conv search: --role: %v\n", rerr)
					return 2
				}
				so.Roles = []store.Role{r}
			}
			err = c.search(pos[0], pos[1], so)
		}
	case "stats":
		err = c.stats(pos[0])
	case "export":
		err = st.Conversation(pos[0]).Export(stdout, store.ExportOptions{Documents: *documents})
	case "import":
		err = c.importFile(pos[0], pos[1], *lenient)
	}
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl conv %s: %v\n", cmd, err)
		return 1
	}
	return 0
}

type convCmd struct {
	ctx            context.Context
	h              *host.Host
	st             *runtime.Store
	json           bool // print JSON Lines (json.go)
	stdin          io.Reader
	stdout, stderr io.Writer
}

func (c convCmd) list() error {
	convs, err := c.st.Conversations(store.Desc, 0)
	if err != nil {
		return err
	}
	for _, cv := range convs {
		stats, err := c.st.Conversation(cv.ID).Stats()
		if err != nil {
			return err
		}
		if c.json {
			if err := printJSON(c.stdout, convJSON{ID: cv.ID, CreatedAt: cv.CreatedAt.UnixMilli(), Messages: stats.Messages}); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(c.stdout, "%s\t%s\t%s\n", cv.ID, cv.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), counted(stats.Messages, "message"))
	}
	return nil
}

// convJSON is a conversation in `conv list --json`.
type convJSON struct {
	ID        string `json:"id"`
	CreatedAt int64  `json:"created_at_ms"`
	Messages  int64  `json:"messages"`
}

// statsJSON is `conv stats --json`.
type statsJSON struct {
	ID           string `json:"id"`
	Messages     int64  `json:"messages"`
	System       int64  `json:"system"`
	User         int64  `json:"user"`
	Assistant    int64  `json:"assistant"`
	Tool         int64  `json:"tool"`
	ContentBytes int64  `json:"content_bytes"`
	FirstAt      int64  `json:"first_at_ms,omitempty"`
	LastAt       int64  `json:"last_at_ms,omitempty"`
}

// stats prints a conversation's counters: messages per role, text bytes,
// and when the first and last were stored.
func (c convCmd) stats(id string) error {
	s, err := c.st.Conversation(id).Stats()
	if err != nil {
		return err
	}
	v := statsJSON{ID: id, Messages: s.Messages, System: s.System, User: s.User, Assistant: s.Assistant, Tool: s.Tool, ContentBytes: s.ContentBytes}
	if s.Messages > 0 {
		v.FirstAt, v.LastAt = s.FirstAt.UnixMilli(), s.LastAt.UnixMilli()
	}
	if c.json {
		return printJSON(c.stdout, v)
	}
	fmt.Fprintf(c.stdout, "%s: %s (system %d, user %d, assistant %d, tool %d), %d bytes of text\n",
		id, counted(s.Messages, "message"), s.System, s.User, s.Assistant, s.Tool, s.ContentBytes)
	if s.Messages > 0 {
		fmt.Fprintf(c.stdout, "first %s, last %s\n", s.FirstAt.UTC().Format(time.RFC3339), s.LastAt.UTC().Format(time.RFC3339))
	}
	return nil
}

func (c convCmd) show(id string, recent int) error {
	sel := store.All()
	if recent > 0 {
		sel = store.Recent(int64(recent))
	}
	recs, err := c.st.Conversation(id).Messages(sel, 0)
	for _, r := range recs {
		if c.json {
			if err := printJSON(c.stdout, recordView(r)); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintln(c.stdout, messageLine(r, ""))
	}
	return err
}

// messageLine renders a stored message for people: "[seq] role (name)",
// then note (a hit's score), then its text, each image as "[image: alt]"
// and each tool call as "→ tool name(arguments) [id]", one part a line; a
// tool result names the call it answers ([id]).
func messageLine(r store.Record, note string) string {
	m := r.Message
	head := fmt.Sprintf("[%d] %s", r.Seq, m.Role)
	if m.Name != "" {
		head += " (" + m.Name + ")"
	}
	if m.ToolCallID != "" {
		head += " [" + m.ToolCallID + "]"
	}
	var body []string
	if !m.Content.IsParts() && m.Content.Text != "" {
		body = append(body, m.Content.Text)
	}
	for _, p := range m.Content.Parts {
		switch {
		case p.Type == store.PartText:
			body = append(body, p.Text)
		case p.Alt != "":
			body = append(body, "[image: "+p.Alt+"]")
		default:
			body = append(body, "[image]")
		}
	}
	for _, tc := range m.ToolCalls {
		body = append(body, fmt.Sprintf("→ tool %s(%s) [%s]", tc.Name, tc.Arguments, tc.ID))
	}
	return head + note + ": " + strings.Join(body, "\n    ")
}

func (c convCmd) search(id, query string, opts store.SearchOptions) error {
	res, err := c.st.Conversation(id).Find(query, opts)
	for _, h := range res.Hits {
		if c.json {
			if err := printJSON(c.stdout, hitView(h)); err != nil {
				return err
			}
			continue
		}
		for _, w := range h.Window {
			if w.Seq < h.Seq {
				fmt.Fprintln(c.stdout, "    "+messageLine(w, ""))
			}
		}
		fmt.Fprintln(c.stdout, messageLine(h.Record, scoreNote(h)))
		for _, w := range h.Window {
			if w.Seq > h.Seq {
				fmt.Fprintln(c.stdout, "    "+messageLine(w, ""))
			}
		}
	}
	if len(res.Dropped) > 0 && !c.json {
		fmt.Fprintf(c.stdout, "(left out of ranking, in most messages: %s)\n", strings.Join(res.Dropped, ", "))
	}
	return err
}

// scoreNote is a hit's score as conv search and chat's /search show it:
// the message's own, what its context added to rank it, and whether
// ranked search read only the message's first MiB.
func scoreNote(h store.Hit) string {
	note := fmt.Sprintf("score %.3f", h.Score)
	if h.Lift != 0 {
		note += fmt.Sprintf(", context +%.3f", h.Lift)
	}
	if h.Partial {
		note += ", only its first MiB searched"
	}
	return " (" + note + ")"
}

// coldSearch runs the planner's search through a cold-history handle and
// prints the bounded result with its truncation flag.
func (c convCmd) coldSearch(id, query string, maxResults, maxBytes int) error {
	reg := handle.New(nil)
	lim := handle.Limits{MaxResults: maxResults, MaxBytes: maxBytes}
	ref, _, err := c.st.Conversation(id).ColdContext(c.ctx, reg, lim)
	if err != nil {
		return err
	}
	defer reg.Delete(ref)
	res, err := reg.Do(c.ctx, ref, handle.Request{Op: handle.OpSearch, Pattern: query}, lim)
	if err != nil {
		return err
	}
	matches := res.Value.([]handle.Match)
	if c.json {
		v := coldJSON{Matches: []coldMatchJSON{}, Truncated: res.Truncated}
		for _, m := range matches {
			v.Matches = append(v.Matches, coldMatchJSON{Index: m.Index, Text: m.Value.(handle.Item).Text})
		}
		return printJSON(c.stdout, v)
	}
	for _, m := range matches {
		fmt.Fprintf(c.stdout, "%s\n---\n", m.Value.(handle.Item).Text)
	}
	fmt.Fprintf(c.stdout, "truncated: %t\n", res.Truncated)
	return nil
}

// coldJSON is `conv search --cold --json`: what the planner's search gets,
// and whether the handle's budget left something out.
type coldJSON struct {
	Matches   []coldMatchJSON `json:"matches"`
	Truncated bool            `json:"truncated"`
}

type coldMatchJSON struct {
	Index int    `json:"index"`
	Text  string `json:"text"`
}

func (c convCmd) importFile(id, file string, lenient bool) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	cv := c.st.Conversation(id)
	d, err := c.h.Defaults(c.ctx)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	opts := runtime.ImportOptions{Encodings: d.CountEncodings, WaitIndexed: 5 * time.Minute, Source: abs, Lenient: lenient, Create: true}
	if isTerminal(c.stderr) {
		opts.Progress = func(n int) { fmt.Fprintf(c.stderr, "\rimported %s", counted(n, "message")) }
	}
	n, err := cv.Import(f, opts)
	if isTerminal(c.stderr) {
		fmt.Fprint(c.stderr, "\r")
	}
	if err != nil && n == (store.ImportResult{}) {
		return fmt.Errorf("%w (nothing was imported)", err)
	}
	fmt.Fprintf(c.stderr, "imported %s into %s", counted(n.Imported, "message"), id)
	if n.Documents > 0 {
		fmt.Fprintf(c.stderr, " and %s", counted(n.Documents, "document"))
	}
	if n.Skipped > 0 {
		fmt.Fprintf(c.stderr, " (%s already there from an earlier import of this file)", counted(n.Skipped, "line"))
	}
	fmt.Fprintln(c.stderr)
	return err
}

// counted is "1 message", "2 messages".
func counted[N int | int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
