package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"

	"github.com/rlmpl/rlmpl/host"
)

//go:embed doc.go
var docSource string

// usage is the package comment of doc.go, the single source of -help.
func usage() string {
	s := docSource[strings.Index(docSource, "/*")+2 : strings.Index(docSource, "*/")]
	return strings.TrimLeft(s, "\n")
}

func main() {
	if os.Getenv("GOGC") == "" {
		// A Prolog program allocates fast and keeps little: collecting
		// when the heap has grown by twice the live heap, not once, costs
		// it 20-40% less CPU for about 10% more memory
		// (docs/performance.md#engine). GOGC set by the user wins.
		debug.SetGCPercent(200)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole CLI, callable in-process by tests.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return 2
	}
	switch args[0] {
	case "run":
		return runScript(ctx, args[1:], stdin, stdout, stderr)
	case "repl":
		return runREPL(ctx, args[1:], stdin, stdout, stderr)
	case "conv":
		return runConv(ctx, args[1:], stdin, stdout, stderr)
	case "pack":
		return runPack(ctx, args[1:], stdout, stderr)
	case "warm":
		return runWarm(ctx, args[1:], stdout, stderr)
	case "chat":
		return runChat(ctx, args[1:], stdin, stdout, stderr)
	case "receipt", "turn":
		if code, ok := groupHelp(args[1:], receiptSynopsis, stdout, stderr); !ok {
			return code
		}
		return runReceipt(ctx, args[0]+" "+args[1], args[2:], stdout, stderr)
	case "complete":
		return runComplete(ctx, args[1:], stdout, stderr)
	case "providers":
		return runProviders(ctx, args[1:], stdout, stderr)
	case "mcp":
		return runMCP(ctx, args[1:], stdout, stderr)
	case "store":
		return runStore(ctx, args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "rlmpl %s\n", host.Version)
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage())
		return 0
	}
	if strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(stderr, "rlmpl: unknown flag %s (rlmpl help lists the commands)\n", args[0])
		return 2
	}
	fmt.Fprintf(stderr, "rlmpl: unknown command %q (rlmpl help lists the commands)\n", args[0])
	return 2
}

// parseFlags parses a subcommand's flags, which come before its first
// argument. -h and --help print usage to stdout (exit 0); an unknown flag
// is a usage error naming it (exit 2). It returns the arguments and ok, or
// the exit code.
func parseFlags(fs *flag.FlagSet, usage string, args []string, stdout, stderr io.Writer) ([]string, int, bool) {
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return nil, 0, false
		}
		// The flag package has printed the error, which names the flag.
		fmt.Fprintln(stderr, strings.SplitN(usage, "\n", 2)[0])
		return nil, 2, false
	}
	return fs.Args(), 0, true
}
