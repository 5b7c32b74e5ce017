package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

func TestCompleteCommand(t *testing.T) {
	srv := providertest.NewServer(providertest.Completion(
		`{"steps":[{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"search","pattern":"needle"},"bind":"h"},{"op":"final","value":"found it"}]}`, 40, 10))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "ctx.txt")
	if err := os.WriteFile(file, []byte("hay\nneedle – here\nhay\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"complete", "--query", "where is the needle?", "--context-file", file,
		"--provider", "llamacpp", "--base-url", srv.BaseURL(), "--model", "tiny"}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	if !strings.HasPrefix(out, "found it\ntrajectory:\n") || !strings.Contains(out, "context(search) ok") || !strings.Contains(out, "total_tokens=50") {
		t.Fatalf("output:\n%s", out)
	}
	if body := srv.Requests()[0].Raw; !strings.Contains(body, "where is the needle?") || strings.Contains(body, "needle – here") {
		t.Fatalf("planner request: %s", body)
	}
	code = run(context.Background(), []string{"complete", "--query", "q"}, strings.NewReader(""), &stdout, &stderr)
	if code != 2 {
		t.Fatalf("missing flag: exit %d", code)
	}
}

// TestCompleteCostFromThePriceTable: with a price table in providers.toml
// the usage a completion reports is priced (what a program's spend
// report reads), not cost_known=false cost_usd=0.
func TestCompleteCostFromThePriceTable(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	os.MkdirAll(filepath.Join(cfg, "rlmpl"), 0o755)
	prices := "[prices.\"tiny\"]\ninput = 2.0\noutput = 8.0\n"
	if err := os.WriteFile(filepath.Join(cfg, "rlmpl", "providers.toml"), []byte(prices), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":"done"}]}`, 1000, 50))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "ctx.txt")
	os.WriteFile(file, []byte("some context\n"), 0o600)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"complete", "--query", "q", "--context-file", file,
		"--provider", "llamacpp", "--base-url", srv.BaseURL(), "--model", "tiny"}, strings.NewReader(""), &stdout, &stderr)
	want := (1000*2.0 + 50*8.0) / 1e6 // 0.0024
	if code != 0 || !strings.Contains(stdout.String(), "cost_known=true") || !strings.Contains(stdout.String(), "cost_usd=0.0024") {
		t.Fatalf("exit %d, want cost_usd=%v:\n%s%s", code, want, stdout.String(), stderr.String())
	}
}
