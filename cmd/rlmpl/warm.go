package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/runtime"
)

const warmSynopsis = "warm list|show KEY|publish --range S-E --fields FILE|--rlm|retire --range S-E --conv ID [--state DIR] [--store NAME] [--history] [provider flags]"

// runWarm implements `rlmpl warm list|show|publish|retire`: the warm
// artifacts of a conversation, publishing one from a file of the schema's
// fields, and retiring one.
func runWarm(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if code, ok := groupHelp(args, warmSynopsis, stdout, stderr); !ok {
		return code
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("warm "+cmd, flag.ContinueOnError)
	state := fs.String("state", defaultStateDir(), "state directory (where stores live)")
	name := storeFlag(fs)
	conv := fs.String("conv", "", "conversation id (required)")
	history := fs.Bool("history", false, "list: every version, not only the latest")
	asJSON := fs.Bool("json", false, "list, show: JSON Lines, one whole artifact per line")
	rng := fs.String("range", "", "publish, retire: the range S-E of messages it summarizes")
	fieldsFile := fs.String("fields", "", "publish: a JSON file with the schema's fields (summary, decisions, facts, unresolved, entities, topics, files, symbols)")
	useModel := fs.Bool("rlm", false, "publish: have a model write the fields, through a bounded completion over the range (the provider flags pick it)")
	pf := providerFlags(fs)
	pos, code, ok := parseCommand(fs, warmSynopsis, args, stdout, stderr)
	if !ok {
		return code
	}
	if code, ok := resolveStoreFlag(name, "warm "+cmd, stderr); !ok {
		return code
	}
	if *conv == "" || cmd == "show" && len(pos) != 1 || cmd != "show" && len(pos) != 0 {
		fmt.Fprintf(stderr, "usage: rlmpl warm %s --conv ID%s\n", cmd, map[string]string{"show": " KEY", "publish": " --range S-E --fields FILE|--rlm", "retire": " --range S-E"}[cmd])
		return 2
	}
	h, st, err := openStore(*state, *name, false, providerSetup)
	if err != nil {
		return failed(stderr, "rlmpl warm", err)
	}
	defer h.Close()
	cv := st.Conversation(*conv)
	switch cmd {
	case "list":
		arts, err := cv.WarmList(*history)
		if err != nil {
			fmt.Fprintf(stderr, "rlmpl warm list: %v\n", err)
			return 1
		}
		for _, a := range arts {
			if *asJSON {
				if err := printJSON(stdout, a); err != nil {
					fmt.Fprintf(stderr, "rlmpl warm list: %v\n", err)
					return 1
				}
				continue
			}
			sizes := make([]string, len(a.Variants))
			for i, v := range a.Variants {
				sizes[i] = fmt.Sprintf("%s %d bytes", v.Kind, len(v.Text))
			}
			retired := ""
			if a.Retired {
				retired = "\tretired"
			}
			fmt.Fprintf(stdout, "%s v%d\t%d..%d\t%s%s\n", a.Key, a.Version, a.From, a.To, strings.Join(sizes, ", "), retired)
		}
	case "show":
		arts, err := cv.WarmList(false)
		if err != nil {
			fmt.Fprintf(stderr, "rlmpl warm show: %v\n", err)
			return 1
		}
		for _, a := range arts {
			if a.Key != pos[0] {
				continue
			}
			if *asJSON {
				if err := printJSON(stdout, a); err != nil {
					fmt.Fprintf(stderr, "rlmpl warm show: %v\n", err)
					return 1
				}
				return 0
			}
			b, _ := json.MarshalIndent(a, "", "  ")
			fmt.Fprintln(stdout, string(b))
			return 0
		}
		fmt.Fprintf(stderr, "rlmpl warm show: no artifact %s in %s\n", pos[0], *conv)
		return 1
	case "publish":
		from, to, ok := parseRange(*rng)
		if !ok || (*fieldsFile == "") == !*useModel {
			fmt.Fprintln(stderr, "rlmpl warm publish: --range S-E and one of --fields FILE or --rlm are required")
			return 2
		}
		d, err := h.Defaults(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "rlmpl warm publish: %v\n", err)
			return 1
		}
		var gen runtime.WarmGenerator
		if *useModel {
			deps, resolved, err := pf.deps(ctx, h)
			if err != nil {
				return failed(stderr, "rlmpl warm publish", err)
			}
			gen = runtime.CompletionGenerator(handle.New(nil), plan.Input{Providers: []string{resolved.Name}, StructuredOutput: resolved.StructuredOutput}, deps)
		} else {
			raw, err := os.ReadFile(*fieldsFile)
			if err != nil {
				fmt.Fprintf(stderr, "rlmpl warm publish: %v\n", err)
				return 1
			}
			fields, err := runtime.ParseWarmFields(raw)
			if err != nil {
				fmt.Fprintf(stderr, "rlmpl warm publish: %s: %v\n", *fieldsFile, err)
				return 1
			}
			gen = func(context.Context, runtime.WarmSource) (runtime.WarmFields, runtime.WarmGeneration, error) {
				return fields, runtime.WarmGeneration{Kind: "file"}, nil
			}
		}
		a, err := cv.WarmPublish(ctx, from, to, gen, d.CountEncodings)
		if err != nil {
			fmt.Fprintf(stderr, "rlmpl warm publish: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "published %s v%d (%s)\n", a.Key, a.Version, counted(len(a.SourceRefs), "message"))
		if len(a.Overlaps) > 0 {
			fmt.Fprintf(stderr, "rlmpl warm publish: warning: overlaps %s (a pack sends at most one of them; retire the one you no longer want)\n", strings.Join(a.Overlaps, ", "))
		}
	case "retire":
		from, to, ok := parseRange(*rng)
		if !ok {
			fmt.Fprintln(stderr, "rlmpl warm retire: --range S-E is required")
			return 2
		}
		a, err := cv.WarmRetire(from, to)
		if err != nil {
			fmt.Fprintf(stderr, "rlmpl warm retire: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "retired %s (v%d)\n", a.Key, a.Version)
	default:
		fmt.Fprintf(stderr, "rlmpl warm: unknown command %q\n", cmd)
		return 2
	}
	return 0
}

// parseRange reads S-E.
func parseRange(s string) (int64, int64, bool) {
	a, b, ok := strings.Cut(s, "-")
	from, err1 := strconv.ParseInt(a, 10, 64)
	to, err2 := strconv.ParseInt(b, 10, 64)
	return from, to, ok && err1 == nil && err2 == nil
}
