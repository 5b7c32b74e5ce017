package provider_test

import (
	"context"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/provider"
)

// TestNoGoroutinesLeft runs completions, streams, a canceled call, a timeout
// and a broken stream, then checks that closing the server and the idle
// connections leaves no goroutine behind (bodies closed, timers stopped).
func TestNoGoroutinesLeft(t *testing.T) {
	before := runtime.NumGoroutine()
	tr := &http.Transport{}
	func() {
		started := make(chan struct{})
		f := newFake(t, reply(200, okBody), sse(`{"choices":[{"delta":{"content":"a"}}]}`, `[DONE]`),
			rawSSE(`data: {"choices":[{"delta":{"content":"a"}}]}`+"\n\n"), hang(started), hang(nil))
		c := newClient(t, f, func(o *provider.Options) {
			o.HTTPClient = &http.Client{Transport: tr}
			o.MaxRetries = -1
			o.Timeout = 100 * time.Millisecond
		})
		ctx := context.Background()
		c.Complete(ctx, userReq("q"))
		c.Stream(ctx, userReq("q"), nil)
		c.Stream(ctx, userReq("q"), nil) // no [DONE]
		cctx, cancel := context.WithCancel(ctx)
		go func() { <-started; cancel() }()
		c.Complete(cctx, userReq("q")) // canceled
		c.Complete(ctx, userReq("q"))  // timeout
		f.Close()
	}()
	tr.CloseIdleConnections()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}
