package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/rlmpl/rlmpl/prolog/enginebench"
)

const benchSynopsis = "bench engine [--only REGEXP] [--runs N] [--swipl PATH|none] [--timeout D] [--json]"

// runBench implements `rlmpl bench engine`: the classic Prolog workloads
// (prolog/enginebench), each in a fresh process of this binary and, where
// SWI-Prolog is installed, of swipl, and a table of CPU times, their
// ratio and peak memory.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if code, ok := groupHelp(args, benchSynopsis, stdout, stderr); !ok {
		return code
	}
	if args[0] != "engine" {
		fmt.Fprintf(stderr, "usage: rlmpl %s\n", benchSynopsis)
		return 2
	}
	fs := flag.NewFlagSet("bench engine", flag.ContinueOnError)
	only := fs.String("only", "", "run the workloads whose name matches this regular expression")
	runs := fs.Int("runs", 3, "runs of each workload by each system (the median is reported)")
	swipl := fs.String("swipl", "swipl", "the SWI-Prolog to compare with; none for rlmpl alone")
	timeout := fs.Duration("timeout", 5*time.Minute, "longest run")
	asJSON := fs.Bool("json", false, "every run as a JSON line instead of the table")
	pos, code, ok := parseCommand(fs, benchSynopsis, args[1:], stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) != 0 || *runs < 1 {
		fmt.Fprintf(stderr, "usage: rlmpl %s\n", benchSynopsis)
		return 2
	}
	match, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl bench engine: --only: %v\n", err)
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl bench engine: %v\n", err)
		return 1
	}
	systems := []enginebench.System{{Name: "rlmpl", Argv: []string{self, "run"}}}
	swiVersion := "not compared"
	if *swipl != "none" {
		if path, err := exec.LookPath(*swipl); err == nil {
			systems = append(systems, enginebench.System{Name: "SWI", Argv: []string{path}})
			out, _ := exec.CommandContext(ctx, path, "--version").Output()
			swiVersion = strings.TrimSpace(string(out)) + " (" + path + ")"
		} else {
			swiVersion = "not found (" + *swipl + "): rlmpl alone"
		}
	}
	dir, err := os.MkdirTemp("", "rlmpl-bench-")
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl bench engine: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)

	var sums []enginebench.Summary
	for _, w := range enginebench.Workloads() {
		if !match.MatchString(w.Name) {
			continue
		}
		for _, sys := range systems {
			s := enginebench.Summary{Workload: w.Name, System: sys.Name}
			for range *runs {
				if ctx.Err() != nil {
					fmt.Fprintln(stderr, "rlmpl bench engine: interrupted")
					return 130
				}
				r := enginebench.Run(ctx, w, sys, dir, *timeout)
				if r.Status != "ok" {
					fmt.Fprintf(stderr, "rlmpl bench engine: %s under %s: %s: %s\n", w.Name, sys.Name, r.Status, r.Detail)
				}
				s.Runs = append(s.Runs, r)
			}
			sums = append(sums, s)
		}
	}
	if len(sums) == 0 {
		fmt.Fprintf(stderr, "rlmpl bench engine: no workload matches %q\n", *only)
		return 2
	}
	if *asJSON {
		if err := enginebench.WriteJSON(stdout, sums); err != nil {
			fmt.Fprintf(stderr, "rlmpl bench engine: %v\n", err)
			return 1
		}
		return 0
	}
	names := make([]string, len(systems))
	for i, s := range systems {
		names[i] = s.Name
	}
	fmt.Fprintf(stdout, "CPU seconds of each workload's goal (median of %d runs, each in a fresh process) and peak RSS.\nSWI-Prolog: %s\n\n", *runs, swiVersion)
	if err := enginebench.Report(stdout, sums, names); err != nil {
		fmt.Fprintf(stderr, "rlmpl bench engine: %v\n", err)
		return 1
	}
	return 0
}
