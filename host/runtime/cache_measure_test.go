package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// prefixCachingServer is a scripted OpenAI-compatible provider that
// reports cached prompt tokens as OpenAI does: the longest run of leading
// messages its request shares with the one before, in o200k tokens
// (4 framing tokens a message), served from cache only from 1,024 tokens
// on and in steps of 128.
func prefixCachingServer(t *testing.T, answer string) *httptest.Server {
	reg, err := tokenizer.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := reg.Encoding("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var prev []tokenizer.Message
	content, _ := json.Marshal(answer)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req tokenizer.Request
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			w.WriteHeader(400)
			return
		}
		mu.Lock()
		prompt, prefix, same := 3, 0, true
		for i, m := range req.Messages {
			n := 4 + enc.Count(m.Role) + enc.Count(m.Text())
			prompt += n
			same = same && i < len(prev) && prev[i].Role == m.Role && prev[i].Text() == m.Text()
			if same {
				prefix += n
			}
		}
		prev = req.Messages
		mu.Unlock()
		cached := 0
		if prefix >= 1024 {
			cached = prefix / 128 * 128
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":%d,"completion_tokens":12,"prompt_tokens_details":{"cached_tokens":%d}}}`, content, prompt, cached)
	}))
}

// TestMeasureCacheShare simulates a 300-turn conversation (each question
// about 600 tokens) at a 32k and a 128k ceiling, window(contiguous) beside
// window(stable), against a provider that caches like OpenAI
// (prefixCachingServer), and reports the share of prompt tokens served
// from cache and the prompt cost with cached input at 10% of the input
// price, relative to no cache. It holds that no request exceeds its
// ceiling and that window(stable) gets at least 60% from cache.
// RLMPL_MEASURE=1 go test -v -run TestMeasureCacheShare ./host/runtime
// runs the 128k ceiling too; RLMPL_CHART_DIR=dir writes each run's
// context chart there.
func TestMeasureCacheShare(t *testing.T) {
	if testing.Short() {
		t.Skip("300 turns at two ceilings")
	}
	question := func(i int) string {
		return fmt.Sprintf("Question %d about the lease path and the deploy plan, with the log excerpt: %s", i,
			strings.Repeat(fmt.Sprintf("node-%d reported lease renewal latency above threshold; ", i%13), 45))
	}
	for _, run := range []struct {
		window  pack.Window
		ceiling int64
	}{{pack.Contiguous, 32000}, {pack.Stable, 32000}, {pack.Contiguous, 128000}, {pack.Stable, 128000}} {
		ceiling := run.ceiling
		if ceiling > 32000 && os.Getenv("RLMPL_MEASURE") == "" {
			continue // the 128k runs take a minute: RLMPL_MEASURE=1
		}
		srv := prefixCachingServer(t, final("noted"))
		p, err := provider.NewClient(&provider.Options{BaseURL: srv.URL, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		c := memConvWith(t, &Options{Prices: provider.Prices{"m": {Input: 2.5, CachedInput: 0.25, CacheWrite: 2.5, Output: 10}}})
		opts := turnOpts(httpPlanner{p}, handle.New(nil))
		opts.Pack.Policy.MaxContextTokens, opts.Pack.Policy.ProviderContextTokens = ceiling, ceiling
		opts.Pack.Policy.MaxCandidates = 512
		opts.Pack.Policy.Window = run.window
		moves := 0
		for i := range 300 {
			res, err := c.Turn(context.Background(), user(question(i)), opts)
			if err != nil {
				t.Fatalf("turn %d: %v", i+1, err)
			}
			if res.Receipt.Context.Boundary.Window == "moved" {
				moves++
			}
			for _, call := range res.Receipt.Calls {
				if int64(call.LocalPromptTokens) > ceiling {
					t.Fatalf("turn %d sent %d tokens over a %d ceiling", i+1, call.LocalPromptTokens, ceiling)
				}
			}
		}
		srv.Close()
		cs, err := c.ReceiptStats(ReceiptQuery{})
		if err != nil {
			t.Fatal(err)
		}
		tot := cs.Total
		uncached := float64(tot.PromptTokens) * 2.5 / 1e6
		cost := (float64(tot.PromptTokens-tot.CachedTokens)*2.5 + float64(tot.CachedTokens)*0.25) / 1e6
		t.Logf("window(%s), ceiling %dk, 300 turns: %d prompt tokens, %.1f%% served from cache; prompt cost $%.4f = %.3f× the uncached $%.4f; window moved %d times",
			run.window, ceiling/1000, tot.PromptTokens, 100*tot.CachedShare, cost, cost/uncached, uncached, moves)
		if run.window == pack.Stable && tot.CachedShare < 0.6 {
			t.Errorf("window(stable) at %dk: %.1f%% cached, want at least 60%%", ceiling/1000, 100*tot.CachedShare)
		}
		if dir := os.Getenv("RLMPL_CHART_DIR"); dir != "" {
			rs, _ := c.Receipts(false)
			var buf bytes.Buffer
			if err := WriteContextChart(&buf, rs); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(fmt.Sprintf("%s/context-%s-%dk.svg", dir, run.window, ceiling/1000), buf.Bytes(), 0o644)
		}
	}
}
