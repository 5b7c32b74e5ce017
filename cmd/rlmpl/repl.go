package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/prolog"
)

// runREPL implements `rlmpl repl [FILE...]`: a top level in the manner of
// SWI-Prolog's. It survives errors; halt. (or end of input) leaves.
func runREPL(ctx context.Context, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	in := bufio.NewReader(stdin)
	first := ""
	if len(files) > 0 {
		first = files[0]
	}
	// The program's user_input is the REPL's own input: a goal reading it
	// consumes what follows, as in SWI-Prolog.
	sess, code := openSession(ctx, first, nil, in, stdout, stderr)
	if sess == nil {
		return code
	}
	defer sess.Close()
	for _, f := range files {
		if code := consultFile(ctx, sess, f, stderr); code >= 0 && code != 1 {
			return code
		}
	}
	for {
		goal, ok := readGoal(in, stdout)
		if !ok {
			fmt.Fprintln(stdout)
			return 0
		}
		if strings.TrimSpace(goal) == "" {
			continue
		}
		if code, done := solve(ctx, sess, goal, in, stdout, stderr); done {
			return code
		}
	}
}

// readGoal reads lines until one ends a clause with a full stop.
func readGoal(in *bufio.Reader, stdout io.Writer) (string, bool) {
	var sb strings.Builder
	prompt := "?- "
	for {
		fmt.Fprint(stdout, prompt)
		line, err := in.ReadString('\n')
		sb.WriteString(line)
		t := strings.TrimSpace(sb.String())
		if strings.HasSuffix(t, ".") || (err == nil && t == "") {
			return t, true
		}
		if err != nil {
			return t, t != ""
		}
		prompt = "|    "
	}
}

// solve runs one goal, printing solutions until the user declines more.
// It reports done with an exit code when the goal halted.
func solve(ctx context.Context, sess *host.Session, goal string, in *bufio.Reader, stdout, stderr io.Writer) (int, bool) {
	q, err := sess.Query(ctx, goal)
	if err != nil {
		return report(err, stdout, stderr)
	}
	defer q.Close()
	ip := sess.Interpreter()
	for q.Next() {
		var parts []string
		for _, b := range q.Bindings() {
			parts = append(parts, b.Name+" = "+ip.WriteQ(b.Value, nil))
		}
		answer := "true"
		if len(parts) > 0 {
			answer = strings.Join(parts, ",\n")
		}
		fmt.Fprint(stdout, answer+" ")
		line, rerr := in.ReadString('\n')
		if strings.TrimSpace(line) != ";" || rerr != nil {
			fmt.Fprintln(stdout, ".")
			return 0, false
		}
		fmt.Fprintln(stdout, ";")
	}
	if err := q.Err(); err != nil {
		return report(err, stdout, stderr)
	}
	fmt.Fprintln(stdout, "false.")
	return 0, false
}

func report(err error, stdout, stderr io.Writer) (int, bool) {
	var halt *prolog.HaltError
	if errors.As(err, &halt) {
		return halt.Code, true
	}
	if errors.Is(err, prolog.ErrAbandoned) {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1, true
	}
	exitCode(err, stderr)
	return 0, false
}
