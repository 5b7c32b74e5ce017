package main

import (
	"context"
	"fmt"
	"io"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/prolog"
)

// outcome runs a goal in a fresh session and decodes its Out binding, an
// ok(Record) or error(Record) outcome. goal builds the goal text with the
// session's interpreter (for quoting). When code is 0 the outcome was
// decoded; otherwise the failure was reported on stderr and code is the
// exit status.
func outcome(ctx context.Context, cmd string, opts *host.Options, goal func(*prolog.Interpreter) string, stderr io.Writer) (isOK bool, rec prolog.Record, code int) {
	h, err := host.New(opts)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl %s: %v\n", cmd, err)
		return false, rec, 1
	}
	defer h.Close()
	s, err := h.NewSession(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl %s: %v\n", cmd, err)
		return false, rec, 1
	}
	defer s.Close()
	q, err := s.Query(ctx, goal(s.Interpreter()))
	if err != nil {
		return false, rec, exitCode(err, stderr)
	}
	defer q.Close()
	if !q.Next() {
		if q.Err() != nil {
			return false, rec, exitCode(q.Err(), stderr)
		}
		fmt.Fprintf(stderr, "rlmpl %s: failed\n", cmd)
		return false, rec, 1
	}
	for _, b := range q.Bindings() {
		if b.Name != "Out" {
			continue
		}
		v, _ := prolog.Value(b.Value, nil)
		if c, isCompound := v.(prolog.Compound); isCompound && len(c.Args) == 1 {
			rec, _ = c.Args[0].(prolog.Record)
			return c.Functor == "ok", rec, 0
		}
	}
	fmt.Fprintf(stderr, "rlmpl %s: no outcome\n", cmd)
	return false, rec, 1
}

// reportError prints an error record's kind and message.
func reportError(cmd string, rec prolog.Record, stderr io.Writer) int {
	kind, _ := rec.Get("kind")
	msg, _ := rec.Get("message")
	if field, ok := rec.Get("field"); ok {
		kind = fmt.Sprintf("%v (%v)", kind, field)
	}
	fmt.Fprintf(stderr, "rlmpl %s: %v: %s\n", cmd, kind, valueText(msg))
	return 1
}
