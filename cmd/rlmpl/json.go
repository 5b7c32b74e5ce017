package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/store"
)

// --json has one convention on every command: JSON Lines, one compact
// object per line (a list prints one line per item, a single thing one
// line), keys in lower-case snake_case as receipts use them, times as
// *_ms (Unix milliseconds), messages in the OpenAI chat format that
// export writes. The views below are that shape for store values, which
// carry no JSON tags of their own.

// printJSON writes v as one line of JSON.
func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding JSON: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// recordJSON is a stored message.
type recordJSON struct {
	Seq       int64         `json:"seq"`
	CreatedAt int64         `json:"created_at_ms"`
	Time      int64         `json:"time_ms,omitempty"`
	Session   string        `json:"session,omitempty"`
	Message   store.Message `json:"message"`
}

func recordView(r store.Record) recordJSON {
	v := recordJSON{Seq: r.Seq, CreatedAt: r.CreatedAt.UnixMilli(), Session: r.Session, Message: r.Message}
	if !r.Time.IsZero() {
		v.Time = r.Time.UnixMilli()
	}
	return v
}

// hitJSON is a search hit: its score (the message's own, plus what its
// context lifted it by) and the messages around it.
type hitJSON struct {
	recordJSON
	Score  float64      `json:"score"`
	Lift   float64      `json:"lift"`
	Window []recordJSON `json:"window,omitempty"`
	// Partial: ranked search read only the message's first MiB.
	Partial bool `json:"partial,omitempty"`
}

func hitView(h store.Hit) hitJSON {
	v := hitJSON{recordJSON: recordView(h.Record), Score: h.Score, Lift: h.Lift, Partial: h.Partial}
	for _, w := range h.Window {
		v.Window = append(v.Window, recordView(w))
	}
	return v
}

// eventJSON is one step of a completion's trajectory.
type eventJSON struct {
	Seq    int    `json:"seq"`
	Depth  int    `json:"depth"`
	Op     string `json:"op"`
	Status string `json:"status"`
	Input  string `json:"input,omitempty"`
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
}

// completionJSON is `rlmpl complete --json`: the value in the canonical
// encoding the runtime stores (plan.Encode), the trajectory and the usage.
type completionJSON struct {
	Value      json.RawMessage  `json:"value"`
	Trajectory []eventJSON      `json:"trajectory"`
	Usage      plan.UsageTotals `json:"usage"`
}

func completionView(out *plan.Outcome) completionJSON {
	v := completionJSON{Value: json.RawMessage(plan.Encode(out.Value)), Trajectory: []eventJSON{}, Usage: out.Usage}
	for _, e := range out.Trajectory.Events {
		v.Trajectory = append(v.Trajectory, eventJSON{Seq: e.Seq, Depth: e.Depth, Op: e.Op, Status: e.Status,
			Input: e.Input, Output: e.Output, Error: string(e.Error)})
	}
	return v
}
