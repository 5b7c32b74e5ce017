package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/signal"
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
		if len(args) < 2 {
			fmt.Fprintln(stderr, "usage: rlmpl receipt list|show|diff ..., or rlmpl turn replay TURN --conv ID")
			return 2
		}
		return runReceipt(ctx, args[0]+" "+args[1], args[2:], stdout, stderr)
	case "complete":
		return runComplete(ctx, args[1:], stdout, stderr)
	case "providers":
		return runProviders(ctx, args[1:], stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "rlmpl %s\n", host.Version)
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage())
		return 0
	}
	fmt.Fprintf(stderr, "rlmpl: unknown command %q\n\n%s", args[0], usage())
	return 2
}
