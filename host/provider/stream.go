package provider

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"time"
)

// readStream parses a server-sent-event body into Deltas, the dialect
// decoding each event's data. Each line read re-arms the idle timer, so
// Options.Timeout bounds the gap between lines rather than the whole
// generation.
func (a *attemptState) readStream(actx context.Context, body io.Reader, status int, timer *time.Timer) (Response, error) {
	s := streamState{a: a, status: status, dec: a.c.dialect.newStream()}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 4096), int(min(a.c.opts.MaxResponseBytes, 1<<30)))
	var data []byte
	hasData := false
	for sc.Scan() {
		timer.Reset(a.c.opts.Timeout)
		line := sc.Bytes()
		if len(line) == 0 { // end of event
			if hasData {
				if done, err := s.dec.event(&s, data); done || err != nil {
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
		// event:, id: and retry: carry nothing a dialect needs: the data
		// of an event names its type (Anthropic's), or carries an "error"
		// member (OpenAI's).
	}
	if err := sc.Err(); err != nil {
		return s.response(), a.readErr(actx, err, status)
	}
	if hasData { // the last event had no blank line after it
		if done, err := s.dec.event(&s, data); done || err != nil {
			return s.response(), err
		}
	}
	if a.ctx.Err() != nil {
		return s.response(), canceled(a.ctx, 0)
	}
	return s.response(), &Error{Kind: KindMalformedResponse, Status: status, Message: "stream ended without " + s.dec.end()}
}

// streamState assembles one stream.
type streamState struct {
	a      *attemptState
	status int
	dec    streamDecoder
	asm    assembler
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

// meta records the response's id and model, the first time each is given.
func (s *streamState) meta(id, model string) {
	if s.asm.resp.ID == "" {
		s.asm.resp.ID = id
	}
	if s.asm.resp.Model == "" {
		s.asm.resp.Model = model
	}
}

// usage emits the usage a stream reports, priced, when any of it is
// known.
func (s *streamState) usage(u Usage) error {
	u = s.a.priced(u)
	if !u.Any() {
		return nil
	}
	return s.emit(Delta{Kind: DeltaUsage, Usage: &u})
}

// malformed is the error of an event that cannot be decoded.
func (s *streamState) malformed(what string, err error, data []byte) *Error {
	sec := s.a.secrets
	return &Error{Kind: KindMalformedResponse, Status: s.status,
		Message: "invalid stream " + what + ": " + redact(err.Error(), sec) + ": " + snippet(data, sec)}
}
