package host

// Turn family: the managed turn (host/runtime) and its receipts.
//
//	conversation_turn(+Conversation, +Message, +Options, -Outcome) is det.
//	conversation_turn_receipt(+Conversation, +TurnId, -Outcome) is det.
//	conversation_receipts(+Conversation, +Options, -Outcome) is det.

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/planterm"
	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/solver"
	"github.com/rlmpl/rlmpl/store"
)

// conversationTurn runs one managed turn. Options are checked whole, and
// the message too, before anything is stored.
func (s *Session) conversationTurn(c *prolog.Call, conv, msg, options, out engine.Term) (bool, error) {
	t, cont, res, err := s.turnArgs(c, "conversation_turn/4", conv, msg, options, out)
	if !cont {
		return res, err
	}
	ctx, unwatch := s.tokens.watch(withCallbacks(c.Ctx, t.sp.cb), t.sp.token)
	defer unwatch()
	stop := s.turns.serveDuring(t.sp.cb)
	r, err := t.cv.Turn(ctx, t.msg, t.opts)
	stop()
	t.sp.cb.close()
	if c.Ctx.Err() != nil {
		return false, c.Ctx.Err() // the query itself was cancelled: stop, do not report
	}
	if err != nil {
		return s.turnFailure(c, out, err)
	}
	return c.Unify(out, ok(s.turnResultTerm(r, t.op.bool("receipt")))), nil
}

// turnCall is a turn's decoded arguments.
type turnCall struct {
	cv   runtime.Conversation
	msg  store.Message
	op   opts
	opts runtime.TurnOptions
	sp   *spec
}

// turnArgs decodes a turn's conversation, message and options (pred's).
// Unless cont, the predicate ends there with (res, err): an error outcome
// in out, or an error to throw.
func (s *Session) turnArgs(c *prolog.Call, pred string, conv, msg, options, out engine.Term) (t turnCall, cont, res bool, err error) {
	fail := func(err error) (turnCall, bool, bool, error) {
		res, err := s.fail(c, out, phTurn, err)
		return turnCall{}, false, res, err
	}
	if t.cv, err = s.convArg(c, conv); err != nil {
		return fail(err)
	}
	if t.msg, err = messageOf(c, msg); err != nil {
		return fail(err)
	}
	if t.op, err = s.options(c, pred, options); err != nil {
		return turnCall{}, false, false, err
	}
	if t.opts, t.sp, err = s.turnOptions(c, t.cv, t.op); err != nil {
		return fail(err)
	}
	return t, true, false, nil
}

// turnOptions decodes a turn's options: context_options as
// conversation_context_pack/3 takes them, completion_options as
// rlm_completion/4 does, cold_context_options as limits.
func (s *Session) turnOptions(c *prolog.Call, cv runtime.Conversation, op opts) (runtime.TurnOptions, *spec, error) {
	cop, err := s.options(c, "conversation_context_pack/3", op.term("context_options"))
	if err != nil {
		return runtime.TurnOptions{}, nil, err
	}
	po, err := s.packOptions(c, cv, cop, op.atom("mode"), nil)
	if err != nil {
		return runtime.TurnOptions{}, nil, err
	}
	sp, err := s.decode(c, "rlm_completion/4", op.term("completion_options"))
	if err == nil {
		err = s.decodeCompletion(c, sp)
	}
	if err != nil {
		return runtime.TurnOptions{}, nil, err
	}
	lim, _, err := s.limits(c, "conversation_cold_context/3", op.term("cold_context_options"))
	if err != nil {
		return runtime.TurnOptions{}, nil, err
	}
	pol, err := s.policy(c)
	if err != nil {
		return runtime.TurnOptions{}, nil, err
	}
	// The program's pack hook and event handler are calls back into Prolog
	// like any handler's.
	if po.Hook != nil {
		po.Hook = func(ctx context.Context, units []runtime.HookUnit) (adj []pack.Adjustment, cons []solver.Constraint, err error) {
			if qerr := sp.cb.with(ctx, true, func(c *prolog.Call) { adj, cons, err = s.callHook(c, units) }); qerr != nil {
				return nil, nil, qerr
			}
			return adj, cons, err
		}
	}
	to := runtime.TurnOptions{TurnID: op.text("turn_id"), Mode: op.atom("mode"), Pack: po, Encodings: pol.CountEncodings,
		Completion: sp.in, Deps: sp.deps, Handles: s.handles, Cold: lim}
	to.Completion.MaxToolRounds = int(op.int("max_tool_rounds"))
	if op.has("mcp") {
		grants, err := mcpGrants(c, op.term("mcp"))
		if err != nil {
			return runtime.TurnOptions{}, nil, err
		}
		servers, err := s.mcpServers()
		if err != nil {
			return runtime.TurnOptions{}, nil, err
		}
		to.MCP = &runtime.MCPTools{Servers: servers, Grants: grants}
	}
	if op.has("on_event") {
		closure := op.term("on_event")
		if err := c.CheckClosure(closure, 1); err != nil {
			return runtime.TurnOptions{}, nil, err
		}
		to.OnEvent = func(ev runtime.TurnEvent) {
			// An event handler's failure or exception does not stop the
			// turn: events are for watching it. They do not wait for it.
			goal := engine.NewAtom("call").Apply(closure, turnEventTerm(ev))
			_ = sp.cb.with(context.Background(), false, func(c *prolog.Call) { _, _ = callOnce(c, goal) })
		}
	}
	return to, sp, nil
}

// turnFailure renders a failed turn as error(conversation_error([...,
// detail(Kind(Reason)), ledger(L), turn_id(T), user(Ref)])): the user
// message stays stored and the failed receipt names the cause.
func (s *Session) turnFailure(c *prolog.Call, out engine.Term, err error) (bool, error) {
	var te *runtime.TurnError
	if !errors.As(err, &te) {
		return s.fail(c, out, phTurn, err)
	}
	var cause engine.Term = prolog.Chars(te.Cause.Error())
	var pe *plan.Error
	switch {
	case errors.As(te.Cause, &pe):
		if t, terr := planterm.ToTerm(pe.Record()); terr == nil {
			cause = t
		}
	default:
		if r, isOutcome := s.reason(phTurn, te.Cause, nil); isOutcome {
			cause = r
		}
	}
	fields := []prolog.Field{
		fld("detail", engine.NewAtom(te.Kind).Apply(cause)),
		fld("kind", engine.NewAtom("conversation_error")),
		fld("message", prolog.Chars(te.Error())),
		fld("phase", engine.NewAtom("turn")),
		fld("turn_id", engine.NewAtom(te.TurnID)),
	}
	if te.User != nil {
		fields = append(fields, fld("user", recordTerm(*te.User)))
	}
	if te.Ledger != nil {
		fields = append(fields, fld("ledger", ledgerTerm(*te.Ledger)))
	}
	return c.Unify(out, atomError.Apply(record("conversation_error", fields...))), nil
}

func (s *Session) turnResultTerm(res runtime.TurnResult, withReceipt bool) engine.Term {
	value := prolog.Chars(res.Assistant.Message.Content.PlainText())
	if res.Value != nil {
		if v, err := planterm.ToTerm(res.Value); err == nil {
			value = v
		}
	}
	fields := []prolog.Field{
		fld("assistant", recordTerm(res.Assistant)),
		fld("replayed", boolTerm(res.Replayed)),
		fld("turn_id", engine.NewAtom(res.TurnID)),
		fld("user", recordTerm(res.User)),
		fld("value", value),
	}
	if withReceipt {
		fields = append(fields, fld("receipt", receiptTerm(res.Receipt)))
	}
	return record("conversation_turn_result", fields...)
}

// receiptTerm renders a receipt as turn_receipt([...]) with its JSON
// field names (nested objects are json([...]) records).
func receiptTerm(r runtime.Receipt) engine.Term {
	return jsonRecord("turn_receipt", r)
}

// jsonRecord renders v through its JSON form as Tag([key(Value), ...]).
func jsonRecord(tag string, v any) engine.Term {
	b, err := json.Marshal(v)
	var m map[string]any
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		return record(tag)
	}
	inner := jsonTerm(m).(engine.Compound)
	return engine.NewAtom(tag).Apply(inner.Arg(0))
}

func turnEventTerm(ev runtime.TurnEvent) engine.Term {
	fields := []prolog.Field{fld("kind", engine.NewAtom(ev.Kind)), fld("turn_id", engine.NewAtom(ev.TurnID))}
	if ev.Ledger != nil {
		fields = append(fields, fld("ledger", ledgerTerm(*ev.Ledger)))
	}
	if ev.Step != nil {
		fields = append(fields, fld("step", record("step", fld("depth", engine.Integer(ev.Step.Depth)),
			fld("op", engine.NewAtom(ev.Step.Op)), fld("status", engine.NewAtom(ev.Step.Status)))))
	}
	if ev.Kind == "delta" {
		fields = append(fields, fld("text", prolog.Chars(ev.Text)))
	}
	if ev.Err != nil {
		fields = append(fields, fld("message", prolog.Chars(ev.Err.Error())))
	}
	return record("turn_event", fields...)
}

func (s *Session) conversationTurnReceipt(c *prolog.Call, conv, id, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, phReceipt, err)
	}
	turnID, err := c.Text(id)
	if err != nil {
		return false, err
	}
	r, err := cv.Receipt(turnID)
	if err != nil {
		return s.fail(c, out, phReceipt, err, engine.NewAtom(turnID))
	}
	return c.Unify(out, ok(receiptTerm(r))), nil
}

func (s *Session) conversationReceipts(c *prolog.Call, conv, options, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, phReceipts, err)
	}
	op, err := s.options(c, "conversation_receipts/3", options)
	if err != nil {
		return false, err
	}
	// One receipt at a time becomes a term: the cost is the page's.
	var ts []engine.Term
	q := runtime.ReceiptQuery{After: op.int("after"), Limit: op.limit("limit"), History: op.bool("history"), Status: op.atom("status")}
	err = cv.EachReceipt(q, func(r runtime.Receipt) error {
		ts = append(ts, receiptTerm(r))
		return nil
	})
	if err != nil {
		return s.fail(c, out, phReceipts, err)
	}
	return c.Unify(out, ok(engine.List(ts...))), nil
}
