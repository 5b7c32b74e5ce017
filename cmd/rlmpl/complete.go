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
	"github.com/rlmpl/rlmpl/prolog"
)

// runComplete implements `rlmpl complete`: one rlm_completion/4 over a
// context file, printing the answer and the trajectory. The flags are the
// call's own provider settings, over the configuration file, the
// environment and the presets (see providers.go).
func runComplete(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("complete", flag.ContinueOnError)
	fs.SetOutput(stderr)
	query := fs.String("query", "", "the goal (required)")
	contextFile := fs.String("context-file", "", "the context: a text file (required)")
	providerName := fs.String("provider", "", "a provider: a preset (openai, openrouter, deepseek, ollama, vllm, llamacpp) or one named in providers.toml (default: the configured default)")
	baseURL := fs.String("base-url", "", "an OpenAI-compatible API root, such as http://127.0.0.1:8080/v1 (alone: a server that takes no key)")
	model := fs.String("model", "", "model name (default: the provider's)")
	credential := fs.String("credential", "", "the environment variable holding the API key, or none")
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
	opts := &host.Options{}
	if err := providerSetup(opts); err != nil {
		fmt.Fprintf(stderr, "rlmpl complete: %v\n", err)
		return 1
	}
	isOK, rec, code := outcome(ctx, "complete", opts, func(ip *prolog.Interpreter) string {
		return fmt.Sprintf(`rlm_completion(%s, text(%s), %s, Out)`, ip.WriteQ(prolog.Chars(*query), nil),
			ip.WriteQ(prolog.Chars(string(text)), nil), ip.WriteQ(providerOptions(*providerName, *baseURL, *model, *credential), nil))
	}, stderr)
	if code != 0 {
		return code
	}
	if !isOK {
		return reportError("complete", rec, stderr)
	}
	return printCompletion(rec, stdout)
}

// providerOptions turns the provider flags into completion options:
// provider(Name) or provider(provider(Name, Settings)), and model(M). A
// --base-url without --provider is an openai_compatible server that takes
// no key unless --credential names one.
func providerOptions(name, baseURL, model, credential string) engine.Term {
	var settings []engine.Term
	if baseURL != "" {
		settings = append(settings, engine.NewAtom("base_url").Apply(prolog.Chars(baseURL)))
		if name == "" {
			name = "openai_compatible"
		}
	}
	switch credential {
	case "":
	case "none":
		settings = append(settings, engine.NewAtom("credential").Apply(engine.NewAtom("none")))
	default:
		settings = append(settings, engine.NewAtom("credential").Apply(engine.NewAtom("env").Apply(prolog.Chars(credential))))
	}
	var opts []engine.Term
	switch {
	case len(settings) > 0:
		if name == "" {
			name = "openai_compatible"
		}
		opts = append(opts, engine.NewAtom("provider").Apply(engine.NewAtom("provider").Apply(engine.NewAtom(name), engine.List(settings...))))
	case name != "":
		opts = append(opts, engine.NewAtom("provider").Apply(engine.NewAtom(name)))
	}
	if model != "" {
		opts = append(opts, engine.NewAtom("model").Apply(prolog.Chars(model)))
	}
	return engine.List(opts...)
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
