% Suite for the prompt compiler's parts in conversation_context_pack/3:
% project instructions, skills, tool definitions and MCP tool lists are
% ledger stages under per-category ceilings.
:- set_prolog_flag(double_quotes, chars).

conv_(Id, C) :-
    conversation_store_open(memory, ok(S)),
    conversation_create(S, [id(Id)], ok(C)),
    conversation_append(C, message(user, "hello"), ok(_)).

parts_([project_instructions('fixtures/AGENTS.md'), skills('fixtures/skills'),
        tools([tool(lookup, "Looks a word up.", '{"type":"object","properties":{"word":{"type":"string"}}}')]),
        mcp_tools('fixtures/mcp_tools.json'),
        token_options([model('gpt-4o-2024-08-06')]), cold_history_boundary(false)]).

test(prompt_parts_are_ledger_stages,
     (   conv_(p1, C), parts_(O),
         conversation_context_pack(C, O, ok(P)),
         record_get(P, ledger, L), record_get(L, stages, Stages), record_get(L, total_tokens, Total),
         findall(N, ( member(S, Stages), record_get(S, name, N) ), Names),
         forall(member(N, [project_instructions, 'skill:a_release.md', 'skill:b_review.md', tool_definitions]),
                memberchk(N, Names)),
         findall(K, ( member(S, Stages), record_get(S, charged_tokens, K) ), Ks), sum_list(Ks, Total),
         record_get(P, request, [First, Second, Third|_]),
         record_get(First, content, I), append("# Project instructions", _, I),
         record_get(Second, content, R), append("Releases:", _, R),
         record_get(Third, content, V), append("Reviews:", _, V)
     )).

test(tool_definitions_are_estimated,
     (   conv_(p2, C), parts_(O),
         conversation_context_pack(C, O, ok(P)),
         record_get(P, ledger, L), record_get(L, stages, Stages),
         member(S, Stages), record_get(S, name, tool_definitions), !, record_get(S, method, estimated)
     )).

test(category_ceiling_fails_closed,
     (   conv_(p3, C), parts_(O),
         conversation_context_pack(C, [policy([max_skill_tokens(5)])|O], error(E)),
         record_get(E, kind, section_category_exceeds_limit), record_get(E, units, [skills]), record_get(E, excess, X), X > 0
     )).

test(missing_file_is_an_existence_error,
     [throws(error(existence_error(source_sink, 'fixtures/none.md'), conversation_context_pack/3))],
     (   conv_(p4, C), conversation_context_pack(C, [project_instructions('fixtures/none.md')], _) )).

test(bad_mcp_list_is_a_domain_error,
     [throws(error(domain_error(mcp_tools_list, 'fixtures/AGENTS.md'), conversation_context_pack/3))],
     (   conv_(p5, C), conversation_context_pack(C, [mcp_tools('fixtures/AGENTS.md')], _) )).
