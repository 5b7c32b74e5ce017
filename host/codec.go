package host

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/store"
)

// Term conversions between store values and Prolog records, shared by the
// conversation, turn, pack and warm predicates: a message, its content and
// metadata, a stored record, a selector and a moment. Each reader is the
// inverse of its writer on every value the store accepts (FuzzMessageCodec).

// selectorOf reads all, recent(N), range(S,E), before(S), after(S),
// around(S,R) or role(R); anything else is a domain error.
func selectorOf(c *prolog.Call, t engine.Term) (store.Selector, error) {
	bad := func() (store.Selector, error) {
		return store.Selector{}, prolog.DomainError("conversation_selector", prolog.Resolved(t, c.Env))
	}
	switch sel := c.Resolve(t).(type) {
	case engine.Variable:
		return store.Selector{}, prolog.InstantiationError()
	case engine.Atom:
		if sel.String() == "all" {
			return store.All(), nil
		}
	case engine.Compound:
		name, n := sel.Functor().String(), sel.Arity()
		if name == "role" && n == 1 {
			role, err := c.Text(sel.Arg(0))
			if err != nil {
				return store.Selector{}, err
			}
			r, err := store.ParseRole(role)
			if err != nil {
				return bad()
			}
			return store.ByRole(r), nil
		}
		ints := make([]int64, n)
		for i := range ints {
			v, err := c.Int(sel.Arg(i))
			if err != nil {
				return store.Selector{}, err
			}
			ints[i] = v
		}
		switch {
		case name == "recent" && n == 1:
			return store.Recent(ints[0]), nil
		case name == "range" && n == 2:
			return store.Range(ints[0], ints[1]), nil
		case name == "before" && n == 1:
			return store.Before(ints[0]), nil
		case name == "after" && n == 1:
			return store.After(ints[0]), nil
		case name == "around" && n == 2:
			return store.Around(ints[0], ints[1]), nil
		}
	}
	return bad()
}

// timeOf reads a moment: a number of milliseconds since the epoch (as a
// record's created_at and time), or text in RFC 3339 ("2023-05-08T13:56:00Z")
// or a date ("2023-05-08", midnight UTC).
func timeOf(c *prolog.Call, t engine.Term) (time.Time, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		return time.Time{}, prolog.InstantiationError()
	case engine.Integer:
		return time.UnixMilli(int64(v)).UTC(), nil
	case engine.Float:
		return time.UnixMicro(int64(float64(v) * 1000)).UTC(), nil
	}
	s, err := c.Text(t)
	if err != nil {
		return time.Time{}, prolog.TypeError("time", prolog.Resolved(t, c.Env))
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if tm, err := time.Parse(layout, s); err == nil {
			return tm, nil
		}
	}
	return time.Time{}, prolog.DomainError("time", prolog.Resolved(t, c.Env))
}

func convTerm(st *runtime.Store, c store.Conversation) engine.Term {
	return record("conversation_ref",
		fld("created_at", millis(c.CreatedAt)),
		fld("id", engine.NewAtom(c.ID)),
		fld("metadata", metadataOf(c.Metadata)),
		fld("store", storeTerm(st)),
	)
}

// metadataFrom reads metadata as [key(V), ...], [Key-V, ...] or a record
// metadata([...]); values must be ground JSON-like data.
func metadataFrom(c *prolog.Call, t engine.Term) ([]store.KV, error) {
	elems, err := c.List(optionList(c, t, "metadata"))
	if err != nil {
		return nil, err
	}
	var kvs []store.KV
	for _, e := range elems {
		p, isCompound := c.Resolve(e).(engine.Compound)
		if !isCompound {
			return nil, prolog.TypeError("metadata_entry", prolog.Resolved(e, c.Env))
		}
		var key string
		var val engine.Term
		switch {
		case p.Functor().String() == "-" && p.Arity() == 2:
			k, err := c.Text(p.Arg(0))
			if err != nil {
				return nil, err
			}
			key, val = k, p.Arg(1)
		case p.Arity() == 1:
			key, val = p.Functor().String(), p.Arg(0)
		default:
			return nil, prolog.TypeError("metadata_entry", prolog.Resolved(e, c.Env))
		}
		v, err := goJSON(val, c.Env)
		if err != nil {
			return nil, prolog.TypeError("json", prolog.Resolved(val, c.Env))
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("host: metadata %s: %w", key, err)
		}
		kvs = append(kvs, store.KV{Key: key, Value: b})
	}
	return kvs, nil
}

// contentTerm renders content: text, or [text(T), image_url(URL, Detail)]
// (image_url(URL, Detail, Alt) when the image has a caption).
func contentTerm(c store.Content) engine.Term {
	if !c.IsParts() {
		return prolog.Chars(c.Text)
	}
	ts := make([]engine.Term, len(c.Parts))
	for i, p := range c.Parts {
		switch {
		case p.Type == store.PartText:
			ts[i] = engine.NewAtom("text").Apply(prolog.Chars(p.Text))
		case p.Alt != "":
			ts[i] = engine.NewAtom("image_url").Apply(prolog.Chars(p.URL), engine.NewAtom(p.Detail), prolog.Chars(p.Alt))
		default:
			ts[i] = engine.NewAtom("image_url").Apply(prolog.Chars(p.URL), engine.NewAtom(p.Detail))
		}
	}
	return engine.List(ts...)
}

// messageTerm is the normalized message: message([content, role, ...]).
func messageTerm(m store.Message) engine.Term {
	fs := []prolog.Field{fld("content", contentTerm(m.Content)), fld("role", engine.NewAtom(m.Role.String()))}
	if m.Name != "" {
		fs = append(fs, fld("name", prolog.Chars(m.Name)))
	}
	if m.ToolCallID != "" {
		fs = append(fs, fld("tool_call_id", engine.NewAtom(m.ToolCallID)))
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]engine.Term, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			calls[i] = record("tool_call", fld("arguments", prolog.Chars(tc.Arguments)),
				fld("id", engine.NewAtom(tc.ID)), fld("name", engine.NewAtom(tc.Name)))
		}
		fs = append(fs, fld("tool_calls", engine.List(calls...)))
	}
	if m.Reasoning != "" {
		fs = append(fs, fld("reasoning", prolog.Chars(m.Reasoning)))
	}
	return record("message", fs...)
}

// recordsTerm is the list of recs' records, in order.
func recordsTerm(recs []store.Record) engine.Term {
	ts := make([]engine.Term, len(recs))
	for i, r := range recs {
		ts[i] = recordTerm(r)
	}
	return engine.List(ts...)
}

func recordTerm(r store.Record) engine.Term {
	counts := make([]prolog.Field, 0, len(r.TokenCounts))
	for enc, n := range r.TokenCounts {
		counts = append(counts, fld(enc, engine.Integer(n)))
	}
	conv := engine.NewAtom(r.Conversation)
	fs := []prolog.Field{
		fld("content", contentTerm(r.Message.Content)),
		fld("conversation_id", conv),
		fld("created_at", millis(r.CreatedAt)),
		fld("message", messageTerm(r.Message)),
		fld("ref", record("conversation_message_ref", fld("conversation_id", conv), fld("sequence", engine.Integer(r.Seq)))),
		fld("role", engine.NewAtom(r.Message.Role.String())),
		fld("sequence", engine.Integer(r.Seq)),
		fld("token_counts", record("token_counts", counts...)),
	}
	// What the caller said about the message, when it said something.
	if len(r.Metadata) > 0 {
		fs = append(fs, fld("metadata", metadataOf(r.Metadata)))
	}
	if r.Session != "" {
		fs = append(fs, fld("session", prolog.Chars(r.Session)))
	}
	if !r.Time.IsZero() {
		fs = append(fs, fld("time", millis(r.Time)))
	}
	return record("conversation_message", fs...)
}

// messageOf reads message(Role, Content) or message([role(R), content(C),
// name(N), tool_call_id(Id), tool_calls([tool_call([id, name, arguments])]),
// reasoning(T)]). The options rule holds for its fields: a term that is
// no message, or a field of the wrong type (content(42)), is a type error,
// an unknown field domain_error(message_field, F); values the store
// refuses (an unknown role, a bad part) are *store.ValidationError naming
// the field (outcomes).
func messageOf(c *prolog.Call, t engine.Term) (store.Message, error) {
	bad := func(field, format string, a ...any) error {
		return &store.ValidationError{Kind: store.ErrInvalid, Field: field, Reason: fmt.Sprintf(format, a...)}
	}
	mt, isCompound := c.Resolve(t).(engine.Compound)
	if _, isVar := c.Resolve(t).(engine.Variable); isVar {
		return store.Message{}, prolog.InstantiationError()
	}
	if !isCompound || mt.Functor().String() != "message" || (mt.Arity() != 1 && mt.Arity() != 2) {
		return store.Message{}, prolog.TypeError("message", prolog.Resolved(t, c.Env))
	}
	f := map[string]engine.Term{}
	if mt.Arity() == 2 {
		f["role"], f["content"] = mt.Arg(0), mt.Arg(1)
	} else {
		var err error
		if f, err = fieldsOf(c, mt.Arg(0)); err != nil {
			return store.Message{}, bad("message", "must be a property list")
		}
		for _, key := range slices.Sorted(maps.Keys(f)) { // the same error whatever the map's order
			if !slices.Contains(messageFields, key) {
				return store.Message{}, prolog.DomainError("message_field", engine.NewAtom(key).Apply(f[key]))
			}
		}
	}
	var m store.Message
	roleT, ok := f["role"]
	if !ok {
		return m, bad("role", "is missing")
	}
	roleS, err := prolog.TextOf(roleT, c.Env)
	if err != nil {
		return m, bad("role", "must be system, user, assistant or tool")
	}
	if m.Role, err = store.ParseRole(roleS); err != nil {
		return m, err
	}
	if ct, ok := f["content"]; ok {
		if m.Content, err = contentOf(c, ct); err != nil {
			return m, err
		}
	}
	for _, fd := range []struct {
		key string
		dst *string
	}{{"name", &m.Name}, {"tool_call_id", &m.ToolCallID}, {"reasoning", &m.Reasoning}} {
		if v, ok := f[fd.key]; ok {
			if *fd.dst, err = messageText(c, v); err != nil {
				return m, err
			}
		}
	}
	if tc, ok := f["tool_calls"]; ok {
		calls, err := c.List(tc)
		if err != nil {
			return m, bad("tool_calls", "must be a list of tool_call([id(I), name(N), arguments(JSON)])")
		}
		for i, call := range calls {
			cf, err := recordFields(c, call, "tool_call")
			if err != nil {
				return m, bad(fmt.Sprintf("tool_calls[%d]", i), "must be tool_call([id(I), name(N), arguments(JSON)])")
			}
			var tcall store.ToolCall
			for key, dst := range map[string]*string{"id": &tcall.ID, "name": &tcall.Name, "arguments": &tcall.Arguments} {
				if v, ok := cf[key]; ok {
					if *dst, err = prolog.TextOf(v, c.Env); err != nil {
						return m, bad(fmt.Sprintf("tool_calls[%d].%s", i, key), "must be text")
					}
				}
			}
			m.ToolCalls = append(m.ToolCalls, tcall)
		}
	}
	return m.Normalize()
}

// contentOf reads text or a list of parts [text(T), image_url(URL[, Detail[,
// Alt]])], Alt an image's caption (searched).
func contentOf(c *prolog.Call, t engine.Term) (store.Content, error) {
	if l, isList := c.Resolve(t).(engine.Compound); isList && l.Functor().String() == "." && l.Arity() == 2 {
		if _, firstCompound := c.Resolve(l.Arg(0)).(engine.Compound); firstCompound {
			elems, err := c.List(t)
			if err != nil {
				return store.Content{}, &store.ValidationError{Kind: store.ErrInvalid, Field: "content", Reason: "must be text or a proper list of parts"}
			}
			parts := make([]store.Part, 0, len(elems))
			for i, e := range elems {
				p, isPart := c.Resolve(e).(engine.Compound)
				field := fmt.Sprintf("content[%d]", i)
				switch {
				case isPart && p.Functor().String() == "text" && p.Arity() == 1:
					s, err := prolog.TextOf(p.Arg(0), c.Env)
					if err != nil {
						return store.Content{}, &store.ValidationError{Kind: store.ErrInvalid, Field: field, Reason: "text(T) needs text"}
					}
					parts = append(parts, store.TextPart(s))
				case isPart && p.Functor().String() == "image_url" && p.Arity() >= 1 && p.Arity() <= 3:
					var texts [3]string // URL, Detail, Alt
					for k := range p.Arity() {
						if texts[k], err = prolog.TextOf(p.Arg(k), c.Env); err != nil {
							return store.Content{}, &store.ValidationError{Kind: store.ErrInvalid, Field: field, Reason: "image_url(URL[, Detail[, Alt]]) needs text"}
						}
					}
					parts = append(parts, store.CaptionedImagePart(texts[0], texts[1], texts[2]))
				default:
					return store.Content{}, &store.ValidationError{Kind: store.ErrInvalid, Field: field, Reason: "a part is text(T) or image_url(URL[, Detail[, Alt]])"}
				}
			}
			return store.PartsContent(parts...), nil
		}
	}
	s, err := messageText(c, t)
	return store.TextContent(s), err
}

// messageFields are the fields of message([...]).
var messageFields = []string{"role", "content", "name", "tool_call_id", "tool_calls", "reasoning"}

// messageText reads a text field of a message: an atom, chars or codes. A
// number is not text here (TextOf would print it): message(user, 42) is a
// type error, like any other non-text.
func messageText(c *prolog.Call, t engine.Term) (string, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Integer, *engine.BigInt, engine.Float:
		return "", prolog.TypeError("text", v)
	}
	return prolog.TextOf(t, c.Env)
}
