package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/prolog"
)

// runComplete implements `rlmpl complete`: one rlm_completion/4 over a
// context file, printing the answer and the trajectory.
func runComplete(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("complete", flag.ContinueOnError)
	fs.SetOutput(stderr)
	query := fs.String("query", "", "the goal (required)")
	contextFile := fs.String("context-file", "", "the context: a text file (required)")
	providerName := fs.String("provider", "openrouter", "provider preset (openai, openrouter, deepseek, ollama, vllm, llamacpp)")
	baseURL := fs.String("base-url", "", "an OpenAI-compatible endpoint, instead of a preset")
	model := fs.String("model", "", "model name (default: the provider's)")
	credential := fs.String("credential", "", "environment variable holding the API key (default: the preset's)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *query == "" || *contextFile == "" {
		fmt.Fprintln(stderr, "rlmpl complete: --query and --context-file are required")
		fs.Usage()
		return 2
	}
	text, err := os.ReadFile(*contextFile)
	if err != nil {
		fmt.Fprintf(stderr, "rlmpl complete: %v\n", err)
		return 1
	}
	opts := &host.Options{Getenv: os.Getenv}
	if *baseURL != "" || *credential != "" {
		po, _ := provider.Preset(*providerName)
		if *baseURL != "" {
			po.BaseURL = *baseURL
		}
		if *credential != "" {
			po.Credential = *credential
		}
		po.Model, po.Getenv = *model, os.Getenv
		p, err := provider.NewOpenAI(&po)
		if err != nil {
			fmt.Fprintf(stderr, "rlmpl complete: %v\n", err)
			return 2
		}
		opts.Providers = map[string]provider.Provider{*providerName: p}
	}
	isOK, rec, code := outcome(ctx, "complete", opts, func(ip *prolog.Interpreter) string {
		return fmt.Sprintf(`rlm_completion(%s, text(%s), [provider(%s), model(%s)], Out)`,
			ip.WriteQ(prolog.Chars(*query), nil), ip.WriteQ(prolog.Chars(string(text)), nil),
			ip.WriteQ(engine.NewAtom(*providerName), nil), ip.WriteQ(engine.NewAtom(*model), nil))
	}, stderr)
	if code != 0 {
		return code
	}
	if !isOK {
		return reportError("complete", rec, stderr)
	}
	return printCompletion(rec, stdout)
}

// printCompletion prints a completion_result: the answer, the trajectory
// and the usage.
func printCompletion(rec prolog.Record, stdout io.Writer) int {
	v, _ := rec.Get("value")
	fmt.Fprintf(stdout, "%s\n", valueText(v))
	if tr, ok := rec.Get("trajectory"); ok {
		fmt.Fprintln(stdout, "trajectory:")
		t, _ := tr.(prolog.Record)
		evs, _ := t.Get("events")
		for _, e := range evs.([]any) {
			ev, _ := e.(prolog.Record)
			seq, _ := ev.Get("seq")
			op, _ := ev.Get("op")
			status, _ := ev.Get("status")
			in, _ := ev.Get("input")
			o, _ := ev.Get("output")
			fmt.Fprintf(stdout, "  %v %v %v %v -> %v\n", seq, valueText(op), status, valueText(in), valueText(o))
		}
	}
	if u, ok := rec.Get("usage"); ok {
		ur, _ := u.(prolog.Record)
		var parts []string
		for _, f := range ur.Fields {
			parts = append(parts, fmt.Sprintf("%s=%v", f.Key, f.Value))
		}
		fmt.Fprintf(stdout, "usage: %s\n", strings.Join(parts, " "))
	}
	return 0
}

// valueText renders a decoded value for people: text as itself.
func valueText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		if len(v) == 0 {
			return ""
		}
	case prolog.Record:
		if t, ok := v.Get("text"); ok {
			return valueText(t)
		}
	}
	return fmt.Sprint(v)
}
