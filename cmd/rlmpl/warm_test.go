package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

// TestWarmCommands: publish a summary of old turns from a fields file,
// list and show it, and see a tight pack choose a summary representation
// over the raws it covers.
func TestWarmCommands(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	var sb strings.Builder
	for i := range 12 {
		role := []string{"user", "assistant"}[i%2]
		sb.WriteString(`{"role":"` + role + `","content":"turn ` + strings.Repeat("lengthy discussion of the lease protocol ", 8) + `"}` + "\n")
	}
	file, fields := filepath.Join(dir, "t.jsonl"), filepath.Join(dir, "f.json")
	os.WriteFile(file, []byte(sb.String()), 0o600)
	os.WriteFile(fields, []byte(`{"summary":"we chose fencing tokens","decisions":["fencing tokens"],"facts":[],"unresolved":["benchmark it"],"entities":[],"topics":[],"files":[],"symbols":[]}`), 0o600)
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "demo", file); code != 0 {
		t.Fatal(errs)
	}
	if out, errs, code := rlmpl(t, "warm", "publish", "--state", state, "--conv", "demo", "--range", "1-8", "--fields", fields); code != 0 || out != "published range_1_8 v1 (8 messages)\n" {
		t.Fatalf("publish: %d %q %s", code, out, errs)
	}
	if out, _, _ := rlmpl(t, "warm", "list", "--state", state, "--conv", "demo"); !strings.HasPrefix(out, "range_1_8 v1\t1..8\tverbatim") {
		t.Fatalf("list: %q", out)
	}
	if out, _, _ := rlmpl(t, "warm", "show", "range_1_8", "--state", state, "--conv", "demo"); !strings.Contains(out, `"summary": "we chose fencing tokens"`) {
		t.Fatalf("show: %s", out)
	}
	out, errs, code := rlmpl(t, "pack", "--state", state, "--conv", "demo", "--model", "gpt-4o", "--max-context", "500", "--reserve", "0", "--safety", "0", "--min-recent", "2", "--explain")
	if code != 0 || !strings.Contains(out, "range_1_8                      context_unit   detailed_summary") || strings.Contains(out, "conversation_message_1 ") ||
		!strings.Contains(out, "warm summaries: 1 published, 1 offered, 0 stale") {
		t.Fatalf("pack: %d %s %s", code, out, errs)
	}
	if _, errs, code := rlmpl(t, "warm", "publish", "--state", state, "--conv", "demo", "--range", "1-8", "--fields", file); code != 1 || !strings.Contains(errs, "warm schema") {
		t.Fatalf("bad fields: %d %s", code, errs)
	}
}

// TestWarmPublishWithAModel: --rlm has a model write the fields through a
// bounded completion: the planner's request (the real client's, to a
// scripted server) names the range but holds none of its text.
func TestWarmPublishWithAModel(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	file := filepath.Join(dir, "t.jsonl")
	os.WriteFile(file, []byte(`{"role":"user","content":"the secret-ish payload of turn one"}`+"\n"+`{"role":"assistant","content":"noted"}`+"\n"), 0o600)
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "demo", file); code != 0 {
		t.Fatal(errs)
	}
	srv := providertest.NewServer(providertest.Completion(`{"steps":[{"op":"final","value":{"summary":"a payload was noted","decisions":[],"facts":["payload"],"unresolved":[],"entities":[],"topics":[],"files":[],"symbols":[]}}]}`, 50, 20))
	defer srv.Close()
	out, errs, code := rlmpl(t, "warm", "publish", "--state", state, "--conv", "demo", "--range", "1-2", "--rlm", "--base-url", srv.BaseURL())
	if code != 0 || out != "published range_1_2 v1 (2 messages)\n" {
		t.Fatalf("publish: %d %q %s", code, out, errs)
	}
	if body := srv.Requests()[0].Raw; !strings.Contains(body, "Summarize messages 1..2") || strings.Contains(body, "secret-ish payload") {
		t.Fatalf("planner request: %s", body)
	}
	if out, _, _ := rlmpl(t, "warm", "show", "range_1_2", "--state", state, "--conv", "demo"); !strings.Contains(out, `"summary": "a payload was noted"`) || !strings.Contains(out, `"kind": "rlm"`) {
		t.Fatalf("show: %s", out)
	}
}

// TestWarmPublishRangeErrors: a range past the end says so against the
// conversation's last message.
func TestWarmPublishRangeErrors(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	file, fields := filepath.Join(dir, "t.jsonl"), filepath.Join(dir, "f.json")
	os.WriteFile(file, []byte(strings.Repeat(`{"role":"user","content":"hello"}`+"\n", 24)), 0o600)
	os.WriteFile(fields, []byte(`{"summary":"s","decisions":[],"facts":[],"unresolved":[],"entities":[],"topics":[],"files":[],"symbols":[]}`), 0o600)
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "demo", file); code != 0 {
		t.Fatal(errs)
	}
	for _, tc := range []struct{ rng, want string }{
		{"300-400", "range 300-400 is past the conversation's last message, 24"},
		{"20-40", "range 20-40 goes past the conversation's last message, 24"},
	} {
		if _, errs, code := rlmpl(t, "warm", "publish", "--state", state, "--conv", "demo", "--range", tc.rng, "--fields", fields); code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("--range %s: %d %q, want %q", tc.rng, code, errs, tc.want)
		}
	}
}

// TestWarmOverlapAndRetire: publishing a range that overlaps another warns,
// a pack with room sends the raws, not the summaries, and a retired
// artifact is listed as such and no longer offered.
func TestWarmOverlapAndRetire(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	var sb strings.Builder
	for i := range 30 {
		role := []string{"user", "assistant"}[i%2]
		sb.WriteString(`{"role":"` + role + `","content":"turn ` + strings.Repeat("discussion of the lease protocol ", 6) + `"}` + "\n")
	}
	file, fields := filepath.Join(dir, "t.jsonl"), filepath.Join(dir, "f.json")
	os.WriteFile(file, []byte(sb.String()), 0o600)
	os.WriteFile(fields, []byte(`{"summary":"leases","decisions":[],"facts":[],"unresolved":[],"entities":[],"topics":[],"files":[],"symbols":[]}`), 0o600)
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "demo", file); code != 0 {
		t.Fatal(errs)
	}
	for _, r := range []string{"2-16", "10-20", "17-20"} {
		_, errs, code := rlmpl(t, "warm", "publish", "--state", state, "--conv", "demo", "--range", r, "--fields", fields)
		if code != 0 || (r == "2-16") != (errs == "") {
			t.Fatalf("publish %s: %d %q", r, code, errs)
		}
	}
	out, _, code := rlmpl(t, "pack", "--state", state, "--conv", "demo", "--model", "gpt-4o")
	if code != 0 || strings.Contains(out, "range_") || !strings.Contains(out, "conversation_message_2 ") {
		t.Fatalf("pack with room: %d %s", code, out)
	}
	if out, errs, code := rlmpl(t, "warm", "retire", "--state", state, "--conv", "demo", "--range", "10-20"); code != 0 || out != "retired range_10_20 (v2)\n" {
		t.Fatalf("retire: %d %q %s", code, out, errs)
	}
	if out, _, _ := rlmpl(t, "warm", "list", "--state", state, "--conv", "demo"); !strings.Contains(out, "range_10_20 v2\t10..20\tverbatim") || !strings.HasSuffix(strings.Split(out, "\n")[0], "\tretired") {
		t.Fatalf("list: %q", out)
	}
	out, _, _ = rlmpl(t, "pack", "--state", state, "--conv", "demo", "--model", "gpt-4o")
	if !strings.Contains(out, "warm summaries: 2 published, 2 offered, 0 stale") {
		t.Fatalf("pack after retire: %s", out)
	}
	if _, errs, code := rlmpl(t, "warm", "retire", "--state", state, "--conv", "demo", "--range", "3-4"); code != 1 || !strings.Contains(errs, "no warm artifact") {
		t.Fatalf("retire of nothing: %d %s", code, errs)
	}
}
