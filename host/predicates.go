package host

import "github.com/rlmpl/rlmpl/prolog"

// predicates is the one registration table of the session's foreign
// predicates, grouped by family (one file each: pred_<family>.go). Install
// panics on a duplicate indicator. Every row's mode string matches the
// pldoc line of the predicate, and every family has a testdata/lib suite.
func (s *Session) predicates() []prolog.Def {
	return []prolog.Def{
		// System (pred_sys.go)
		prolog.Pred1("$rlm_version", "'$rlm_version'(-Version) is det", s.version),
		prolog.Pred1("$rlm_now", "'$rlm_now'(-UnixMillis) is det", s.now),

		// Context handles (pred_context.go)
		prolog.Pred3("ctx_register", "ctx_register(+Source, +Options, -Outcome) is det", s.ctxRegister),
		prolog.Pred2("ctx_metadata", "ctx_metadata(+Handle, -Outcome) is det", s.ctxMetadata),
		prolog.Pred5("ctx_do", "ctx_do(+Op, +Handle, +Args, +Options, -Outcome) is det", s.ctxDo),
		prolog.Pred2("ctx_delete", "ctx_delete(+Handle, -Outcome) is det", s.ctxDelete),
		prolog.Pred3("ctx_trace", "ctx_trace(+Handle, +Limit, -Outcome) is det", s.ctxTrace),

		// Tokens (pred_token.go)
		prolog.Pred4("token_count_", "token_count_(+Text, +Model, +Encoding, -Outcome) is det", s.tokenCount),
		prolog.Pred2("token_model_encoding_", "token_model_encoding_(+Model, -Outcome) is det", s.tokenModelEncoding),
		// Completion (pred_completion.go)
		prolog.Pred4("rlm_complete_", "rlm_complete_(+Query, +Context, +Options, -Outcome) is det", s.rlmComplete),
		prolog.Pred3("llm_query_", "llm_query_(+Prompt, +Options, -Outcome) is det", s.llmQuery),
		prolog.Pred4("rlm_query_", "rlm_query_(+Query, +SubContext, +Options, -Outcome) is det", s.rlmQuery),
		prolog.Pred1("rlm_cancellation_token_", "rlm_cancellation_token_(-Token) is det", s.cancellationToken),
		prolog.Pred1("rlm_cancel_", "rlm_cancel_(+Token) is det", s.cancel),
		prolog.Pred1("default_completion_budget_", "default_completion_budget_(-Budget) is det", s.defaultBudget),

		// Pack (pred_pack.go)
		prolog.Pred2("pack_policy_check_", "pack_policy_check_(+Policy, -Outcome) is det", s.packPolicyCheck),
		prolog.Pred4("pack_solve_", "pack_solve_(+Units, +Sections, +Policy, -Outcome) is det", s.packSolve),

		prolog.Pred5("token_register_encoding_", "token_register_encoding_(+Name, +File, +Pattern, +Specials, -Outcome) is det", s.tokenRegisterEncoding),
	}
}
