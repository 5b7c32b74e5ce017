package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/prolog"
)

const runUsage = `usage: rlmpl run [--state DIR] [--grant DIR]... FILE [ARGS...]

Consult FILE, run its initialization(Goal, main) goals and exit with their
status: 0, N after halt(N), 1 on an uncaught exception, a failed goal or a
syntax error, 130 when interrupted (SIGINT). The script sees ARGS in
current_prolog_flag(argv, [rlmpl|ARGS]), may consult and read the files of
FILE's directory (not through links that lead out of it), and cannot write
files.
` + storesUsage

// storesUsage documents the flags every interpreter command shares.
const storesUsage = `
Stores: conversation_store_open(persist(Name), R) opens DIR/Name under the
state directory, --state DIR (default $XDG_STATE_HOME/rlmpl). Nothing
outside it is opened unless the operator grants it: --grant DIR (repeatable)
lets the program open DIR, or a directory below it, by its absolute path.

Observability: --log-format text|json logs to stderr through log/slog
(--log-level debug|info|warn|error, default info), every line of a managed
turn with its conversation_id and turn_id; OTEL_TRACES_EXPORTER=otlp or
console sends OpenTelemetry spans of each turn (rlmpl help tells more).
`

// storeFlags are the flags of run and repl that say where stores live.
type storeFlags struct {
	state  *string
	grants []string
	log    *logFlags
}

func addStoreFlags(fs *flag.FlagSet) *storeFlags {
	sf := &storeFlags{state: fs.String("state", defaultStateDir(), "state directory (where stores live)")}
	sf.log = addLogFlags(fs)
	fs.Func("grant", "a further directory the program may open as a store (repeatable)", func(dir string) error {
		abs, err := filepath.Abs(dir)
		sf.grants = append(sf.grants, abs)
		return err
	})
	return sf
}

// runScript implements `rlmpl run FILE [ARGS...]`. Flags come before FILE;
// what follows FILE is the script's.
func runScript(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	sf := addStoreFlags(fs)
	args, code, ok := parseFlags(fs, runUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(args) == 0 {
		fmt.Fprintf(stderr, "rlmpl run: missing FILE\n%s\n", strings.SplitN(runUsage, "\n", 2)[0])
		return 2
	}
	sess, closeAll, code := openSession(ctx, sf, args[0], args[1:], stdin, stdout, stderr, args[0])
	if sess == nil {
		return code
	}
	defer closeAll()
	if code := consultFile(ctx, sess, args[0], stderr); code >= 0 {
		return code
	}
	if code := exitCode(sess.RunMain(ctx), stderr); ctx.Err() == nil || code == 0 {
		return code
	}
	return 130
}

// openSession builds a host whose file system is the directory of file,
// and a session on it. closeAll closes them all: the host owns the stores the
// program opened, and their directory locks. The directory is an os.Root,
// so a symbolic link that leads out of it is refused, not followed.
func openSession(ctx context.Context, sf *storeFlags, file string, argv []string, stdin io.Reader, stdout, stderr io.Writer, cliFiles ...string) (sess *host.Session, closeAll func(), code int) {
	dir := "."
	if file != "" {
		dir = filepath.Dir(file)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return nil, nil, 1
	}
	defer func() {
		if sess == nil {
			root.Close()
		}
	}()
	opts := &host.Options{
		Stdin:    stdin,
		Stdout:   stdout,
		Stderr:   stderr,
		FS:       root.FS(),
		Argv:     append([]string{"rlmpl"}, argv...),
		StateDir: *sf.state,
		Grants:   sf.grants,
		// make/0 reads again the files named on the command line (and
		// consulted under those names), nothing else.
		Reload: func(name string) (string, error) {
			if !slices.Contains(cliFiles, name) {
				return "", fs.ErrNotExist
			}
			b, err := os.ReadFile(name)
			return string(b), err
		},
	}
	if err := providerSetup(opts); err != nil {
		return nil, nil, failed(stderr, "rlmpl", err)
	}
	if err := sf.log.setup(stderr)(opts); err != nil {
		fmt.Fprintf(stderr, "rlmpl: %v\n", err)
		return nil, nil, 2
	}
	tel, err := startTelemetry(ctx, os.Getenv, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl: %v\n", err)
		return nil, nil, 2
	}
	tel.setup(opts)
	h, err := host.New(opts)
	if err != nil {
		tel.shutdown(stderr)
		fmt.Fprintf(stderr, "rlmpl: %v\n", err)
		return nil, nil, 1
	}
	sess, err = h.NewSession(ctx)
	if err != nil {
		h.Close()
		tel.shutdown(stderr)
		fmt.Fprintf(stderr, "rlmpl: %v\n", err)
		return nil, nil, 1
	}
	return sess, func() { sess.Close(); h.Close(); root.Close(); tel.shutdown(stderr) }, 0
}

// consultFile loads file into sess. It returns -1 on success, else the
// exit code (after printing the error).
func consultFile(ctx context.Context, sess *host.Session, file string, stderr io.Writer) int {
	b, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	if err := sess.Consult(ctx, file, string(b)); err != nil {
		return exitCode(err, stderr)
	}
	return -1
}

// exitCode prints err the way SWI-Prolog does and maps it to an exit code.
func exitCode(err error, stderr io.Writer) int {
	var (
		halt *prolog.HaltError
		pe   *host.PrologError
		se   *prolog.SyntaxError
		gf   *prolog.GoalFailedError
	)
	switch {
	case err == nil:
		return 0
	case errors.As(err, &halt):
		return halt.Code
	case errors.As(err, &se):
		if se.File != "" {
			fmt.Fprintf(stderr, "ERROR: %s:%s: Syntax error: %s\n", se.File, se.Pos, se.Msg)
		} else {
			fmt.Fprintf(stderr, "ERROR: Syntax error: %s: %s\n", se.Pos, se.Msg)
		}
	case errors.As(err, &pe):
		if pe.Goal != "" {
			fmt.Fprintf(stderr, "Warning: goal (initialization) raised exception: %s\n", pe.Goal)
		}
		if c, ok := pe.Term.(engine.Compound); ok && c.Functor() == engine.NewAtom("error") && c.Arity() == 2 {
			fmt.Fprintf(stderr, "ERROR: %s\n", pe.Message)
		} else { // a ball that is not error(_, _), as SWI-Prolog puts it
			fmt.Fprintf(stderr, "ERROR: Unhandled exception: %s\n", pe.Message)
		}
	case errors.As(err, &gf):
		fmt.Fprintf(stderr, "Warning: goal (initialization) failed: %s\n", gf.Goal)
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "% Execution Aborted")
	default:
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
	}
	return 1
}
