package host

import "github.com/rlmpl/rlmpl/prolog"

// predicates is the one registration table of the session's foreign
// predicates, grouped by family (one file each: pred_<family>.go). Public
// predicates are registered under their own names, so the errors they
// throw name them; their pldoc lives in lib/ and a test checks that every
// mode string here is a %! line there. Install panics on a duplicate
// indicator.
func (s *Session) predicates() []prolog.Def {
	return []prolog.Def{
		// System (pred_sys.go)
		prolog.Pred1("$rlm_version", "'$rlm_version'(-Version) is det", s.version),
		prolog.Pred1("$rlm_now", "'$rlm_now'(-UnixMillis) is det", s.now),
		prolog.Pred0("$rlm_defaults", "'$rlm_defaults' is det", s.readDefaults),
		prolog.Pred2("tmp_file", "tmp_file(+Base, -TmpName) is det", s.tmpFile),
		prolog.Pred1("delete_file", "delete_file(+File) is det", s.deleteFile),

		// Context handles (pred_context.go)
		prolog.Pred3("context_register", "context_register(+Source, +Options, -Outcome) is det", s.contextRegister),
		prolog.Pred2("context_metadata", "context_metadata(+Handle, -Outcome) is det", s.contextMetadata),
		prolog.Pred4("context_peek", "context_peek(+Handle, +Selector, +Options, -Outcome) is det", s.contextPeek),
		prolog.Pred5("context_slice", "context_slice(+Handle, +Start, +Length, +Options, -Outcome) is det", s.contextSlice),
		prolog.Pred4("context_search", "context_search(+Handle, +Pattern, +Options, -Outcome) is det", s.contextSearch),
		prolog.Pred4("context_partition", "context_partition(+Handle, +Spec, +Options, -Outcome) is det", s.contextPartition),
		prolog.Pred4("context_map", "context_map(+Handle, +Transform, +Options, -Outcome) is det", s.contextMap),
		prolog.Pred4("context_reduce", "context_reduce(+Handle, +Reducer, +Options, -Outcome) is det", s.contextReduce),
		prolog.Pred2("context_delete", "context_delete(+Handle, -Outcome) is det", s.contextDelete),
		prolog.Pred3("context_trace", "context_trace(+Handle, +Limit, -Outcome) is det", s.contextTrace),

		// Prolog-defined context adapters (pred_adapter.go)
		prolog.Pred5("context_adapter_register", "context_adapter_register(+Name, +Capabilities, +MetadataHandler, +OperationHandler, -Outcome) is det", s.contextAdapterRegister),
		prolog.Pred2("context_adapter_unregister", "context_adapter_unregister(+Name, -Outcome) is det", s.contextAdapterUnregister),
		prolog.Pred2("context_adapter_info", "context_adapter_info(+Name, -Outcome) is det", s.contextAdapterInfo),
		prolog.Pred4("context_register_adapter", "context_register_adapter(+Name, +Source, +Options, -Outcome) is det", s.contextRegisterAdapter),
		prolog.Pred2("context_backend", "context_backend(+Backend, -Info) is semidet", s.contextBackend),

		// Tokens (pred_token.go)
		prolog.Pred3("token_count_text", "token_count_text(+Text, +Options, -Outcome) is det", s.tokenCountText),
		prolog.Pred2("token_model_encoding", "token_model_encoding(+Model, -Outcome) is det", s.tokenModelEncoding),
		prolog.Pred4("token_register_encoding", "token_register_encoding(+Name, +RanksFile, +Options, -Outcome) is det", s.tokenRegisterEncoding),

		// Completion (pred_completion.go)
		prolog.Pred4("rlm_completion", "rlm_completion(+Query, +Context, +Options, -Outcome) is det", s.rlmCompletion),
		prolog.Pred3("llm_query", "llm_query(+Prompt, +Options, -Outcome) is det", s.llmQuery),
		prolog.Pred4("rlm_query", "rlm_query(+Query, +SubContext, +Options, -Outcome) is det", s.rlmQuery),
		prolog.Pred1("rlm_cancellation_token", "rlm_cancellation_token(-Token) is det", s.cancellationToken),
		prolog.Pred1("rlm_cancel", "rlm_cancel(+Token) is det", s.cancel),
		prolog.Pred1("default_completion_budget", "default_completion_budget(-Budget) is det", s.defaultBudget),
		prolog.Pred4("openai_compatible_provider", "openai_compatible_provider(+Endpoint, +Credential, +Model, -Provider) is det", s.openaiCompatibleProvider),
		prolog.Pred2("openrouter_provider", "openrouter_provider(?Model, -Provider) is det", s.openrouterProvider),

		// MCP servers (pred_mcp.go)
		prolog.Pred3("mcp_server", "mcp_server(+Name, +Options, -Outcome) is det", s.mcpServer),
		prolog.Pred3("mcp_tools", "mcp_tools(+Server, +Options, -Outcome) is det", s.mcpTools),

		// Plans (pred_plan.go)
		prolog.Pred2("plan_parse", "plan_parse(+Input, -Outcome) is det", s.planParse),
		prolog.Pred4("plan_validate", "plan_validate(+Plan, +Capabilities, +Budget, -Outcome) is det", s.planValidate),
		prolog.Pred5("plan_run", "plan_run(+Plan, +Capabilities, +Options, +Inputs, -Outcome) is det", s.planRun),

		// Conversations (pred_conversation.go)
		prolog.Pred2("conversation_store_open", "conversation_store_open(+Spec, -Outcome) is det", s.conversationStoreOpen),
		prolog.Pred2("conversation_store_close", "conversation_store_close(+Store, -Outcome) is det", s.conversationStoreClose),
		prolog.Pred3("conversation_create", "conversation_create(+Store, +Options, -Outcome) is det", s.conversationCreate),
		prolog.Pred3("conversation_open", "conversation_open(+Store, +Id, -Outcome) is det", s.conversationOpen),
		prolog.Pred3("conversation_list", "conversation_list(+Store, +Options, -Outcome) is det", s.conversationList),
		prolog.Pred3("conversation_append", "conversation_append(+Conversation, +Message, -Outcome) is det", s.conversationAppend3),
		prolog.Pred4("conversation_append", "conversation_append(+Conversation, +Message, +Options, -Outcome) is det", s.conversationAppend),
		prolog.Pred4("conversation_append_all", "conversation_append_all(+Conversation, +Items, +Options, -Outcome) is det", s.conversationAppendAll),
		prolog.Pred3("conversation_message", "conversation_message(+Conversation, +Seq, -Outcome) is det", s.conversationMessage),
		prolog.Pred4("conversation_messages", "conversation_messages(+Conversation, +Selector, +Options, -Outcome) is det", s.conversationMessages),
		prolog.Pred4("conversation_search", "conversation_search(+Conversation, +Query, +Options, -Outcome) is det", s.conversationSearch),
		prolog.Pred3("conversation_cold_context", "conversation_cold_context(+Conversation, +LimitOptions, -Outcome) is det", s.conversationColdContext),
		prolog.Pred2("conversation_stats", "conversation_stats(+Conversation, -Outcome) is det", s.conversationStats),
		prolog.Pred4("conversation_wait", "conversation_wait(+Conversation, +AfterSeq, +Options, -Outcome) is det", s.conversationWait),
		prolog.Pred3("conversation_export", "conversation_export(+Conversation, +Format, -Outcome) is det", s.conversationExport),
		prolog.Pred3("conversation_import", "conversation_import(+Conversation, +File, -Outcome) is det", s.conversationImport),
		prolog.Pred3("conversation_pin", "conversation_pin(+Conversation, +Target, -Outcome) is det", s.conversationPin),

		// Managed turns (pred_turn.go)
		prolog.Pred4("conversation_turn", "conversation_turn(+Conversation, +Message, +Options, -Outcome) is det", s.conversationTurn),
		prolog.Pred4("conversation_turn_async", "conversation_turn_async(+Conversation, +Message, +Options, -Outcome) is det", s.conversationTurnAsync),
		prolog.Pred3("conversation_turn_await", "conversation_turn_await(+Task, +Timeout, -Outcome) is det", s.conversationTurnAwait),
		prolog.Pred1("conversation_turn_cancel", "conversation_turn_cancel(+Task) is det", s.conversationTurnCancel),
		prolog.Pred3("conversation_turn_receipt", "conversation_turn_receipt(+Conversation, +TurnId, -Outcome) is det", s.conversationTurnReceipt),
		prolog.Pred3("conversation_receipts", "conversation_receipts(+Conversation, +Options, -Outcome) is det", s.conversationReceipts),

		// Warm context (pred_warm.go)
		prolog.Pred4("conversation_warm_derive", "conversation_warm_derive(+Conversation, +Range, +Options, -Outcome) is det", s.conversationWarmDerive),
		prolog.Pred5("conversation_warm_publish", "conversation_warm_publish(+Conversation, +Store, +Range, +Options, -Outcome) is det", s.conversationWarmPublish),
		prolog.Pred4("conversation_warm_list", "conversation_warm_list(+Conversation, +Store, +Options, -Outcome) is det", s.conversationWarmList),
		prolog.Pred4("conversation_warm_retire", "conversation_warm_retire(+Conversation, +Store, +Range, -Outcome) is det", s.conversationWarmRetire),
		prolog.Pred5("conversation_warm_context_units", "conversation_warm_context_units(+Conversation, +Store, +Signals, +Options, -Outcome) is det", s.conversationWarmContextUnits),

		prolog.Pred2("artifact_store_open", "artifact_store_open(+Spec, -Outcome) is det", s.artifactStoreOpen),
		prolog.Pred2("artifact_store_close", "artifact_store_close(+Store, -Outcome) is det", s.artifactStoreClose),

		// Packs (pred_pack.go)
		prolog.Pred2("context_policy", "context_policy(+Overlay, -Outcome) is det", s.contextPolicy),
		prolog.Pred4("context_pack", "context_pack(+Units, +Sections, +Policy, -Outcome) is det", s.contextPack),
		prolog.Pred3("conversation_context_pack", "conversation_context_pack(+Conversation, +Options, -Outcome) is det", s.conversationContextPack),
	}
}
