package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

// TestFailedTurnReceiptListsItsAttempts: a turn whose planner call fails
// after two retries leaves a failed receipt with the three requests sent;
// `receipt show` names each failed attempt and `turn replay` renders all
// three again from the store.
func TestFailedTurnReceiptListsItsAttempts(t *testing.T) {
	srv := providertest.NewServer(providertest.Reply(503, `{"error":{"message":"overloaded"}}`))
	defer srv.Close()
	state := t.TempDir()
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"chat", "--json", "--state", state, "--conv", "demo", "--provider", "local",
		"--base-url", srv.BaseURL(), "--model", "tiny"}, strings.NewReader("hello\n"), &stdout, &stderr)
	var id string
	for _, l := range strings.Split(stdout.String(), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) == nil && e["event"] == "failed" {
			id = e["turn_id"].(string)
		}
	}
	if id == "" || len(srv.Requests()) != 3 {
		t.Fatalf("no failed turn after %d requests:\n%s\n%s", len(srv.Requests()), stdout.String(), stderr.String())
	}
	out, _, code := rlmpl(t, "receipt", "show", id, "--state", state, "--conv", "demo")
	if code != 0 || !strings.Contains(out, "failed") || !strings.Contains(out, "planner #3 failed (503)") {
		t.Fatalf("show: %d\n%s", code, out)
	}
	out, errs, code := rlmpl(t, "turn", "replay", id, "--state", state, "--conv", "demo")
	if code != 0 || !strings.Contains(out, "3 requests rendered again from the store, byte for byte") {
		t.Fatalf("replay: %d %s %s", code, out, errs)
	}
}

// TestReceiptListPages: `receipt list` gives a page with --limit and the
// next with --after (the user sequence of the page's last turn).
func TestReceiptListPages(t *testing.T) {
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":"noted"}]}`, 10, 5))
	defer srv.Close()
	state := t.TempDir()
	chatJSON(t, state, srv, "first\nsecond\nthird\n")
	rows := func(args ...string) []string {
		out, errs, code := rlmpl(t, append([]string{"receipt", "list", "--state", state, "--conv", "demo"}, args...)...)
		if code != 0 {
			t.Fatalf("list %v: %d %s", args, code, errs)
		}
		var msgs []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			msgs = append(msgs, strings.Fields(l)[3])
		}
		return msgs
	}
	if got := strings.Join(rows("--limit", "2"), " "); got != "1→2 3→4" {
		t.Errorf("first page: %s", got)
	}
	if got := strings.Join(rows("--after", "3"), " "); got != "5→6" {
		t.Errorf("after 3: %s", got)
	}
}

// TestReceiptStats: two chat turns against a provider that reports its
// cache, with a price table in providers.toml: `receipt show` prints the
// cached share and cost, `receipt stats --json` gives a line per turn and
// the total with the hand-computed numbers, and the table prints both.
func TestReceiptStats(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	if err := os.MkdirAll(filepath.Join(cfg, "rlmpl"), 0o755); err != nil {
		t.Fatal(err)
	}
	prices := "[prices.\"tiny\"]\ninput = 1.0\ncached_input = 0.1\noutput = 4.0\n"
	if err := os.WriteFile(filepath.Join(cfg, "rlmpl", "providers.toml"), []byte(prices), 0o644); err != nil {
		t.Fatal(err)
	}
	final := `{"steps":[{"op":"final","value":"noted"}]}`
	srv := providertest.NewServer(
		providertest.CompletionUsage(final, `{"prompt_tokens":1000,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":0}}`),
		providertest.CompletionUsage(final, `{"prompt_tokens":1100,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":896}}`),
	)
	defer srv.Close()
	state := t.TempDir()
	chatJSON(t, state, srv, "first\nsecond\n")
	out, errs, code := rlmpl(t, "receipt", "stats", "--json", "--state", state, "--conv", "demo")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 {
		t.Fatalf("stats --json: %d\n%s\n%s", code, out, errs)
	}
	var turns []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		turns = append(turns, m)
	}
	cost1, cost2 := (1000*1.0+5*4.0)/1e6, (204*1.0+896*0.1+5*4.0)/1e6
	near := func(v any, want float64) bool { f, ok := v.(float64); return ok && f > want-1e-12 && f < want+1e-12 }
	if turns[0]["kind"] != "turn" || turns[0]["prompt_tokens"] != 1000.0 || !near(turns[0]["cost_usd"], cost1) ||
		turns[1]["cached_tokens"] != 896.0 || !near(turns[1]["cached_share"], 896.0/1100) || !near(turns[1]["cost_usd"], cost2) ||
		turns[2]["kind"] != "total" || turns[2]["prompt_tokens"] != 2100.0 || !near(turns[2]["cost_usd"], cost1+cost2) ||
		turns[2]["completed"] != 2.0 || turns[2]["output_tokens"] != 10.0 {
		t.Fatalf("stats lines:\n%s", out)
	}
	out, _, code = rlmpl(t, "receipt", "stats", "--state", state, "--conv", "demo")
	if code != 0 || !strings.Contains(out, "81.5%") || !strings.Contains(out, "2 ok, 0 failed") || !strings.Contains(out, "context tokens by stage") {
		t.Fatalf("stats table: %d\n%s", code, out)
	}
	id := turns[1]["turn_id"].(string)
	// The usage record a program reads is priced too: the turn's cost.
	out, _, _ = rlmpl(t, "receipt", "list", "--json", "--state", state, "--conv", "demo")
	for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct {
			Usage struct {
				CostUSD   float64 `json:"cost_usd"`
				CostKnown bool    `json:"cost_known"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || !r.Usage.CostKnown || !near(r.Usage.CostUSD, []float64{cost1, cost2}[i]) {
			t.Errorf("turn %d's usage: %+v (%v), want cost_usd %v", i+1, r.Usage, err, []float64{cost1, cost2}[i])
		}
	}
	out, _, code = rlmpl(t, "receipt", "show", id, "--state", state, "--conv", "demo")
	if code != 0 || !strings.Contains(out, "cached: 896 of 1100 prompt tokens") || !strings.Contains(out, fmt.Sprintf("cost: $%.6f", cost2)) {
		t.Fatalf("show: %d\n%s", code, out)
	}
}

// TestReceiptChart: `receipt chart -o FILE` writes a well-formed,
// self-contained SVG with a bar per turn.
func TestReceiptChart(t *testing.T) {
	srv := providertest.NewServer(providertest.CompletionUsage(`{"steps":[{"op":"final","value":"noted"}]}`,
		`{"prompt_tokens":900,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":450}}`))
	defer srv.Close()
	state := t.TempDir()
	chatJSON(t, state, srv, "first\nsecond\nthird\n")
	file := filepath.Join(t.TempDir(), "context.svg")
	if out, errs, code := rlmpl(t, "receipt", "chart", "--state", state, "--conv", "demo", "-o", file); code != 0 {
		t.Fatalf("chart: %d %s %s", code, out, errs)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	turns := map[string]bool{}
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("malformed SVG: %v", err)
			}
			break
		}
		if el, ok := tok.(xml.StartElement); ok {
			for _, a := range el.Attr {
				if a.Name.Local == "data-cached-share" && a.Value != "0.5000" {
					t.Errorf("cached share %s", a.Value)
				}
				if a.Name.Local == "data-turn" {
					turns[a.Value] = true
				}
			}
		}
	}
	if len(turns) != 3 || strings.Contains(string(b), "<script") {
		t.Fatalf("turns %v in\n%s", turns, b)
	}
}

// TestChatStableWindow: chat --window stable keeps the window of the turn
// before (the receipt says kept); an unknown window is a usage error.
func TestChatStableWindow(t *testing.T) {
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":"noted"}]}`, 10, 5))
	defer srv.Close()
	state := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"chat", "--json", "--state", state, "--conv", "demo", "--provider", "local",
		"--base-url", srv.BaseURL(), "--model", "tiny", "--window", "stable"}, strings.NewReader("first\nsecond\n"), &stdout, &stderr); code != 0 {
		t.Fatalf("chat: %s", stderr.String())
	}
	out, _, code := rlmpl(t, "receipt", "list", "--json", "--state", state, "--conv", "demo")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("list: %d\n%s", code, out)
	}
	var r struct {
		Context struct {
			Boundary struct{ Window string } `json:"boundary"`
		} `json:"context"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &r); err != nil || r.Context.Boundary.Window != "kept" {
		t.Fatalf("second turn's window %q (%v):\n%s", r.Context.Boundary.Window, err, lines[1])
	}
	var id struct {
		TurnID string `json:"turn_id"`
	}
	json.Unmarshal([]byte(lines[1]), &id)
	if out, _, _ := rlmpl(t, "receipt", "show", id.TurnID, "--state", state, "--conv", "demo"); !strings.Contains(out, "stable window kept") {
		t.Errorf("show:\n%s", out)
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"chat", "--state", state, "--conv", "demo", "--base-url", srv.BaseURL(), "--window", "sliding"},
		strings.NewReader("x\n"), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--window") {
		t.Errorf("bad window: exit %d, %s", code, stderr.String())
	}
}

// TestReceiptListColumns: `receipt list` labels what each number is: the
// context sent (the same figure as `receipt stats`' context column), what
// the ledger reserved beside it (output reserve, safety margin) and the
// limit; a conversation that does not exist is an error with no table
// header before it.
func TestReceiptListColumns(t *testing.T) {
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":"noted"}]}`, 10, 5))
	defer srv.Close()
	state := t.TempDir()
	chatJSON(t, state, srv, "first\n")
	out, errs, code := rlmpl(t, "receipt", "list", "--state", state, "--conv", "demo")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("list: %d\n%s\n%s", code, out, errs)
	}
	header, row := strings.Fields(lines[0]), strings.Fields(lines[1])
	col := map[string]string{}
	for i, h := range header {
		if i < len(row) {
			col[h] = row[i]
		}
	}
	stats, _, _ := rlmpl(t, "receipt", "stats", "--json", "--state", state, "--conv", "demo")
	var turn struct {
		Context  int64 `json:"context_tokens"`
		Reserved int64 `json:"reserved_tokens"`
		Limit    int64 `json:"limit"`
	}
	if err := json.Unmarshal([]byte(strings.Split(stats, "\n")[0]), &turn); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"context": fmt.Sprint(turn.Context), "reserved": fmt.Sprint(turn.Reserved), "limit": fmt.Sprint(turn.Limit)}
	for h, v := range want {
		if col[h] != v {
			t.Errorf("column %s = %q, want %s (receipt stats)\n%s", h, col[h], v, out)
		}
	}

	out, errs, code = rlmpl(t, "receipt", "list", "--state", state, "--conv", "nosuch")
	if code != 1 || out != "" || !strings.Contains(errs, "nosuch") {
		t.Fatalf("list --conv nosuch: exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout", code, out, errs)
	}
}

// TestReceiptsSurviveARestore: a conversation exported with --documents
// and imported into another store lists, counts and charts its receipts
// there as it did in its own, shows them and replays them.
func TestReceiptsSurviveARestore(t *testing.T) {
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":"noted"}]}`, 10, 5))
	defer srv.Close()
	state := t.TempDir()
	chatJSON(t, state, srv, "first\nsecond\n")
	backup, _, code := rlmpl(t, "conv", "export", "demo", "--documents", "--state", state)
	if code != 0 {
		t.Fatal("export failed")
	}
	file := filepath.Join(t.TempDir(), "backup.jsonl")
	os.WriteFile(file, []byte(backup), 0o600)
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "--store", "restored", "demo", file); code != 0 {
		t.Fatalf("import: %s", errs)
	}
	list, _, code := rlmpl(t, "receipt", "list", "--json", "--state", state, "--store", "restored", "--conv", "demo")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("receipt list after the restore: %d\n%s", code, list)
	}
	var r struct {
		TurnID string `json:"turn_id"`
	}
	json.Unmarshal([]byte(lines[1]), &r)
	stats, _, code := rlmpl(t, "receipt", "stats", "--json", "--state", state, "--store", "restored", "--conv", "demo")
	if code != 0 || !strings.Contains(stats, `"kind":"total"`) || !strings.Contains(stats, `"completed":2`) {
		t.Fatalf("receipt stats after the restore: %d\n%s", code, stats)
	}
	svg, _, code := rlmpl(t, "receipt", "chart", "--state", state, "--store", "restored", "--conv", "demo")
	if code != 0 || strings.Count(svg, "data-turn=") == 0 || !strings.Contains(svg, r.TurnID) {
		t.Fatalf("receipt chart after the restore: %d\n%s", code, svg)
	}
	if out, errs, code := rlmpl(t, "turn", "replay", r.TurnID, "--state", state, "--store", "restored", "--conv", "demo"); code != 0 || !strings.Contains(out, "byte for byte") {
		t.Fatalf("replay after the restore: %d %s %s", code, out, errs)
	}
}
