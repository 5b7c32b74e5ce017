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
// about 600 tokens) at a 32k and a 128k ceiling against a provider that
// caches like OpenAI (prefixCachingServer), and reports the share of
// prompt tokens served from cache and the prompt cost with cached input at
// 10% of the input price, relative to no cache. It holds that no request
// exceeds its ceiling. go test -v -run TestMeasureCacheShare ./host/runtime;
// RLMPL_CHART_DIR=dir also writes each run's context chart there.
func TestMeasureCacheShare(t *testing.T) {
	if testing.Short() {
		t.Skip("300 turns at two ceilings")
	}
	question := func(i int) string {
		return fmt.Sprintf("Question %d about the lease path and the deploy plan, with the log excerpt: %s", i,
			strings.Repeat(fmt.Sprintf("node-%d reported lease renewal latency above threshold; ", i%13), 45))
	}
	for _, ceiling := range []int64{32000, 128000} {
		srv := prefixCachingServer(t, final("noted"))
		p, err := provider.NewOpenAI(&provider.Options{BaseURL: srv.URL, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		c := memConvWith(t, &Options{Prices: provider.Prices{"m": {Input: 2.5, CachedInput: 0.25, CacheWrite: 2.5, Output: 10}}})
		opts := turnOpts(httpPlanner{p}, handle.New(nil))
		opts.Pack.Policy.MaxContextTokens, opts.Pack.Policy.ProviderContextTokens = ceiling, ceiling
		opts.Pack.Policy.MaxCandidates = 512
		for i := range 300 {
			res, err := c.Turn(context.Background(), user(question(i)), opts)
			if err != nil {
				t.Fatalf("turn %d: %v", i+1, err)
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
		t.Logf("window(contiguous), ceiling %dk, 300 turns: %d prompt tokens, %.1f%% served from cache; prompt cost $%.4f = %.3f× the uncached $%.4f",
			ceiling/1000, tot.PromptTokens, 100*tot.CachedShare, cost, cost/uncached, uncached)
		if dir := os.Getenv("RLMPL_CHART_DIR"); dir != "" {
			rs, _ := c.Receipts(false)
			var buf bytes.Buffer
			if err := WriteContextChart(&buf, rs); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(fmt.Sprintf("%s/context-contiguous-%dk.svg", dir, ceiling/1000), buf.Bytes(), 0o644)
		}
	}
}
