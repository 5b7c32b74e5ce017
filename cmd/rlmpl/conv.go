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

// storeUsage is the --store flag's help, for every command that takes it.
const storeUsage = "store: a name under the state directory, an absolute directory, or a postgres:// URL"

// openStore builds a host over the state directory and opens the store
// named by name (relative names live under the state directory; the
// operator may name any absolute directory, which is granted, or a
// postgres:// URL). setup, if
// any, completes the host's options first.
func openStore(state, name string, setup ...func(*host.Options) error) (*host.Host, *runtime.Store, error) {
	opts := &host.Options{StateDir: state}
	if filepath.IsAbs(name) {
		opts.Grants = []string{name}
	}
	for _, f := range setup {
		if err := f(opts); err != nil {
			return nil, nil, err
		}
	}
	h, err := host.New(opts)
	if err != nil {
		return nil, nil, err
	}
	spec, isURL := runtime.PostgresSpec(name)
	if !isURL {
		spec = runtime.StoreSpec{Dir: name}
	}
	st, err := h.Runtime().OpenStore(spec)
	if err != nil {
		h.Close()
		return nil, nil, err
	}
	return h, st, nil
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

const convSynopsis = `conv list|show ID|search ID QUERY|export ID|import ID FILE.jsonl [--state DIR] [--store NAME]
       [--recent N] [--max N] [--exact] [--window N] [--role R] [--session S] [--no-context] [--cold] [--max-bytes N] [--documents]`

// capPolicy applies an operator's --max-context: a small cap keeps room
// for context, so the default reserve and margin shrink with it.
func capPolicy(p *pack.Policy, maxContext int64) {
	if maxContext > 0 {
		p.MaxContextTokens = maxContext
		p.ReserveOutputTokens = min(p.ReserveOutputTokens, maxContext/8)
		p.SafetyMarginTokens = min(p.SafetyMarginTokens, maxContext/32)
	}
}

// runConv implements `rlmpl conv list|show|search|export|import`.
func runConv(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if code, ok := groupHelp(args, convSynopsis, stdout, stderr); !ok {
		return code
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("conv "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	state := fs.String("state", defaultStateDir(), "state directory (where stores live)")
	name := fs.String("store", defaultStore, storeUsage)
	recent := fs.Int("recent", 0, "show: only the last N messages")
	maxResults := fs.Int("max", 10, "search: at most N results")
	exact := fs.Bool("exact", false, "search: substring matching instead of ranked")
	window := fs.Int("window", 0, "search: also show the N messages on each side of each hit")
	role := fs.String("role", "", "search: only messages of this role")
	session := fs.String("session", "", "search: only messages of this session")
	noContext := fs.Bool("no-context", false, "search: rank each message by its own score alone")
	documents := fs.Bool("documents", false, "export: add the conversation's receipts and warm artifacts (a backup import restores whole)")
	cold := fs.Bool("cold", false, "search: show exactly what a planner gets through the cold-history handle")
	maxBytes := fs.Int("max-bytes", 4096, "search --cold: the handle's byte budget")
	pos, code, ok := parseCommand(fs, convSynopsis, args, stdout, stderr)
	if !ok {
		return code
	}
	need := map[string]int{"list": 0, "show": 1, "search": 2, "export": 1, "import": 2}
	n, known := need[cmd]
	if !known {
		fmt.Fprintf(stderr, "rlmpl conv: unknown command %q\n", cmd)
		return 2
	}
	if len(pos) != n {
		fmt.Fprintf(stderr, "rlmpl conv %s: want %d arguments, got %d\n", cmd, n, len(pos))
		return 2
	}
	h, st, err := openStore(*state, *name)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl conv %s: %v\n", cmd, err)
		return 1
	}
	defer h.Close()
	c := convCmd{ctx: ctx, h: h, st: st, stdin: stdin, stdout: stdout, stderr: stderr}
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
	case "export":
		err = st.Conversation(pos[0]).Export(stdout, store.ExportOptions{Documents: *documents})
	case "import":
		err = c.importFile(pos[0], pos[1])
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
		fmt.Fprintf(c.stdout, "%s\t%s\t%s\n", cv.ID, cv.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), counted(stats.Messages, "message"))
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
		fmt.Fprintf(c.stdout, "[%d] %s: %s\n", r.Seq, r.Message.Role, r.Message.Content.PlainText())
	}
	return err
}

func (c convCmd) search(id, query string, opts store.SearchOptions) error {
	res, err := c.st.Conversation(id).Find(query, opts)
	for _, h := range res.Hits {
		for _, w := range h.Window {
			if w.Seq < h.Seq {
				fmt.Fprintf(c.stdout, "    [%d] %s: %s\n", w.Seq, w.Message.Role, w.Message.Content.PlainText())
			}
		}
		fmt.Fprintf(c.stdout, "[%d] %s (%.3f): %s\n", h.Seq, h.Message.Role, h.Score+h.Lift, h.Message.Content.PlainText())
		for _, w := range h.Window {
			if w.Seq > h.Seq {
				fmt.Fprintf(c.stdout, "    [%d] %s: %s\n", w.Seq, w.Message.Role, w.Message.Content.PlainText())
			}
		}
	}
	if len(res.Dropped) > 0 {
		fmt.Fprintf(c.stdout, "(left out of ranking, in most messages: %s)\n", strings.Join(res.Dropped, ", "))
	}
	return err
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
	for _, m := range res.Value.([]handle.Match) {
		fmt.Fprintf(c.stdout, "%s\n---\n", m.Value.(handle.Item).Text)
	}
	fmt.Fprintf(c.stdout, "truncated: %t\n", res.Truncated)
	return nil
}

func (c convCmd) importFile(id, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	cv, err := openOrCreate(c.st, id)
	if err != nil {
		return err
	}
	d, err := c.h.Defaults(c.ctx)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	opts := runtime.ImportOptions{Encodings: d.CountEncodings, WaitIndexed: 5 * time.Minute, Source: abs}
	if isTerminal(c.stderr) {
		opts.Progress = func(n int) { fmt.Fprintf(c.stderr, "\rimported %s", counted(n, "message")) }
	}
	n, err := cv.Import(f, opts)
	if isTerminal(c.stderr) {
		fmt.Fprint(c.stderr, "\r")
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
