package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/store"
)

// runConv implements `rlmpl conv list|show|search|export|import`.
func runConv(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: rlmpl conv list|show|search|export|import [--store DIR] ...")
		return 2
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("conv "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("store", defaultStoreDir(), "store directory")
	recent := fs.Int("recent", 0, "show: only the last N messages")
	maxResults := fs.Int("max", 10, "search: at most N results")
	exact := fs.Bool("exact", false, "search: substring matching instead of ranked")
	cold := fs.Bool("cold", false, "search: show exactly what a planner gets through the cold-history handle")
	maxBytes := fs.Int("max-bytes", 4096, "search --cold: the handle's byte budget")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	pos := fs.Args()
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
	if cmd == "search" && *cold {
		return coldSearch(ctx, *dir, pos[0], pos[1], *maxResults, *maxBytes, stdout, stderr)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "rlmpl conv: %v\n", err)
		return 1
	}
	db, err := store.Open(&store.Options{Dir: *dir})
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl conv: %v\n", err)
		return 1
	}
	defer db.Close()
	if err := convCommand(db, cmd, pos, *recent, *maxResults, *exact, stdin, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "rlmpl conv %s: %v\n", cmd, err)
		return 1
	}
	return 0
}

func convCommand(db *store.DB, cmd string, pos []string, recent, maxResults int, exact bool, stdin io.Reader, stdout, stderr io.Writer) error {
	switch cmd {
	case "list":
		convs, err := db.List(store.Desc, 0)
		if err != nil {
			return err
		}
		for _, c := range convs {
			st, err := db.Stats(c.ID)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s\t%s\t%d messages\n", c.ID, c.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), st.Messages)
		}
	case "show":
		sel := store.All()
		if recent > 0 {
			sel = store.Recent(int64(recent))
		}
		recs, err := db.Messages(pos[0], sel, 0)
		if err != nil {
			return err
		}
		for _, r := range recs {
			fmt.Fprintf(stdout, "[%d] %s: %s\n", r.Seq, r.Message.Role, r.Message.Content.PlainText())
		}
	case "search":
		hits, _, err := db.Search(pos[0], pos[1], store.SearchOptions{MaxResults: maxResults, Exact: exact})
		if err != nil {
			return err
		}
		for _, h := range hits {
			fmt.Fprintf(stdout, "[%d] %s (%.3f): %s\n", h.Seq, h.Message.Role, h.Score, h.Message.Content.PlainText())
		}
	case "export":
		return db.Export(pos[0], stdout)
	case "import":
		f, err := os.Open(pos[1])
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := db.Conversation(pos[0]); errors.Is(err, store.ErrNotFound) {
			if _, err := db.Create(pos[0], nil); err != nil {
				return err
			}
		}
		n, err := db.Import(pos[0], f, func(n int) { fmt.Fprintf(stderr, "\rimported %d messages", n) })
		fmt.Fprintf(stderr, "\rimported %d messages into %s\n", n, pos[0])
		if err != nil {
			return err
		}
		return db.WaitIndexed(5 * time.Minute)
	}
	return nil
}

// coldSearch runs the planner's search through a cold-history handle and
// prints the bounded result with its truncation flag.
func coldSearch(ctx context.Context, dir, conv, query string, maxResults, maxBytes int, stdout, stderr io.Writer) int {
	isOK, rec, code := outcome(ctx, "conv search", nil, func(ip *prolog.Interpreter) string {
		return fmt.Sprintf(`conversation_store_open(persist(%s), ok(S)), conversation_open(S, %s, OC),
			(   OC = ok(C)
			->  conversation_cold_context(C, [], ok(Ref)), Ref = context_ref(RP), memberchk(handle(H), RP),
			    context_search(H, %s, [max_results(%d), max_bytes(%d)], Out), context_delete(H, _)
			;   Out = OC
			)`, ip.WriteQ(prolog.Chars(dir), nil), ip.WriteQ(engine.NewAtom(conv), nil), ip.WriteQ(prolog.Chars(query), nil), maxResults, maxBytes)
	}, stderr)
	if code != 0 {
		return code
	}
	if !isOK {
		return reportError("conv search", rec, stderr)
	}
	v, _ := rec.Get("value")
	for _, m := range v.([]any) {
		mr, _ := m.(prolog.Record)
		view, _ := mr.Get("value")
		vr, _ := view.(prolog.Record)
		seq, _ := vr.Get("sequence")
		role, _ := vr.Get("role")
		content, _ := vr.Get("content")
		fmt.Fprintf(stdout, "[%v] %v: %s\n", seq, role, valueText(content))
	}
	tr, _ := rec.Get("truncated")
	next, _ := rec.Get("next")
	fmt.Fprintf(stdout, "truncated: %v next: %s\n", tr, strconv.FormatInt(asInt(next), 10))
	return 0
}

func asInt(v any) int64 {
	n, _ := v.(int64)
	return n
}
