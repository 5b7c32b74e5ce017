package provider

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"time"
)

var doneMarker = []byte("[DONE]")

// readStream parses a server-sent-event body (the OpenAI streaming dialect)
// into Deltas. Each line read re-arms the idle timer, so Options.Timeout
// bounds the gap between lines rather than the whole generation.
func (a *attemptState) readStream(actx context.Context, body io.Reader, status int, timer *time.Timer) (Response, error) {
	s := streamState{a: a, status: status}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 4096), int(min(a.c.opts.MaxResponseBytes, 1<<30)))
	var data []byte
	hasData := false
	for sc.Scan() {
		timer.Reset(a.c.opts.Timeout)
		line := sc.Bytes()
		if len(line) == 0 { // end of event
			if hasData {
				if done, err := s.event(data); done || err != nil {
					// NB: no drain after [DONE]: a server that holds the
					// stream open would block us until Timeout.
					return s.response(), err
				}
				data, hasData = data[:0], false
			}
			continue
		}
		if line[0] == ':' { // comment, such as OpenRouter's ": OPENROUTER PROCESSING"
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		if string(field) == "data" {
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		}
		// event:, id: and retry: carry nothing this dialect needs: errors
		// arrive as data objects with an "error" member.
	}
	if err := sc.Err(); err != nil {
		return s.response(), a.readErr(actx, err, status)
	}
	if hasData { // the last event had no blank line after it
		if done, err := s.event(data); done || err != nil {
			return s.response(), err
		}
	}
	if a.ctx.Err() != nil {
		return s.response(), canceled(a.ctx, 0)
	}
	return s.response(), &Error{Kind: KindMalformedResponse, Status: status, Message: "stream ended without [DONE]"}
}

// streamState assembles one stream.
type streamState struct {
	a      *attemptState
	status int
	asm    assembler
	lastID string // id of the last tool call, for servers that omit index
	n      int    // tool calls seen
}

func (s *streamState) response() Response {
	r := s.asm.response()
	if r.Model == "" {
		r.Model = s.a.model
	}
	return r
}

func (s *streamState) emit(d Delta) error {
	s.asm.add(d)
	s.a.delivered = true
	return s.a.fn(d)
}

// event handles one data payload; done reports [DONE].
func (s *streamState) event(data []byte) (done bool, err error) {
	if bytes.Equal(bytes.TrimSpace(data), doneMarker) {
		return true, nil
	}
	sec := s.a.secrets
	var w wireResponse
	if err := json.Unmarshal(data, &w); err != nil {
		return false, &Error{Kind: KindMalformedResponse, Status: s.status,
			Message: "invalid stream chunk: " + redact(err.Error(), sec) + ": " + snippet(data, sec)}
	}
	if e := bodyError(&w, s.status, sec); e != nil {
		return false, e
	}
	if s.asm.resp.ID == "" {
		s.asm.resp.ID = w.ID
	}
	if s.asm.resp.Model == "" {
		s.asm.resp.Model = w.Model
	}
	for _, ch := range w.Choices {
		if ch.Index != 0 {
			continue // only the first choice is assembled
		}
		if d := ch.Delta; d != nil {
			if r := reasoningText(d); r != "" {
				if err := s.emit(Delta{Kind: DeltaReasoning, Text: r}); err != nil {
					return false, err
				}
			}
			text, ok := contentText(d.Content)
			if !ok {
				return false, &Error{Kind: KindMalformedResponse, Status: s.status, Message: "delta.content is neither text nor parts"}
			}
			if text != "" {
				if err := s.emit(Delta{Kind: DeltaText, Text: text}); err != nil {
					return false, err
				}
			}
			for _, tc := range d.ToolCalls {
				if err := s.emit(Delta{Kind: DeltaToolCall, ToolCall: s.toolCall(tc)}); err != nil {
					return false, err
				}
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			if err := s.emit(Delta{Kind: DeltaFinish, FinishReason: *ch.FinishReason}); err != nil {
				return false, err
			}
		}
	}
	if w.Usage != nil {
		u := s.a.priced(w.Usage.usage())
		if u.Any() {
			if err := s.emit(Delta{Kind: DeltaUsage, Usage: &u}); err != nil {
				return false, err
			}
		}
	}
	return false, nil
}

// toolCall maps a wire fragment to its index. Servers that omit index get
// one inferred: a new id starts a new call, anything else continues the
// last one.
func (s *streamState) toolCall(tc wireReplyToolCall) *ToolCallDelta {
	var i int
	switch {
	case tc.Index != nil:
		i = *tc.Index
	case tc.ID != "" && tc.ID != s.lastID || s.n == 0:
		i = s.n
	default:
		i = s.n - 1
	}
	if i < 0 || i > 1<<10 {
		i = s.n // NB: a hostile index must not make the assembler allocate
	}
	if i >= s.n {
		s.n = i + 1
	}
	if tc.ID != "" {
		s.lastID = tc.ID
	}
	return &ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Function.Name, Arguments: argumentsText(tc.Function.Arguments)}
}
