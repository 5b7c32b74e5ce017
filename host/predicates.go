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

		// Conversations (pred_conv.go)
		prolog.Pred2("conv_store_open_", "conv_store_open_(+Spec, -Outcome) is det", s.convStoreOpen),
		prolog.Pred2("conv_store_close_", "conv_store_close_(+Store, -Outcome) is det", s.convStoreClose),
		prolog.Pred3("conv_create_", "conv_create_(+Store, +Options, -Outcome) is det", s.convCreate),
		prolog.Pred3("conv_open_", "conv_open_(+Store, +Id, -Outcome) is det", s.convOpen),
		prolog.Pred3("conv_list_", "conv_list_(+Store, +Options, -Outcome) is det", s.convList),
		prolog.Pred4("conv_append_", "conv_append_(+Conversation, +Message, +Options, -Outcome) is det", s.convAppend),
		prolog.Pred3("conv_message_", "conv_message_(+Conversation, +Seq, -Outcome) is det", s.convMessage),
		prolog.Pred4("conv_messages_", "conv_messages_(+Conversation, +Selector, +Options, -Outcome) is det", s.convMessages),
		prolog.Pred2("conv_stats_", "conv_stats_(+Conversation, -Outcome) is det", s.convStats),
		prolog.Pred4("conv_search_", "conv_search_(+Conversation, +Query, +Options, -Outcome) is det", s.convSearch),
		prolog.Pred3("conv_cold_", "conv_cold_(+Conversation, +Options, -Outcome) is det", s.convCold),
		prolog.Pred3("conv_import_", "conv_import_(+Conversation, +File, -Outcome) is det", s.convImport),
		prolog.Pred3("conv_export_", "conv_export_(+Conversation, +Format, -Outcome) is det", s.convExport),

		// Conversation packs (pred_convpack.go)
		prolog.Pred3("conv_pack_", "conv_pack_(+Conversation, +Options, -Outcome) is det", s.convPack),

		// Pack (pred_pack.go)
		prolog.Pred2("pack_policy_check_", "pack_policy_check_(+Policy, -Outcome) is det", s.packPolicyCheck),
		prolog.Pred4("pack_solve_", "pack_solve_(+Units, +Sections, +Policy, -Outcome) is det", s.packSolve),

		prolog.Pred5("token_register_encoding_", "token_register_encoding_(+Name, +File, +Pattern, +Specials, -Outcome) is det", s.tokenRegisterEncoding),
	}
}
