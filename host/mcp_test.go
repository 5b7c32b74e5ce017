package host_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/host/mcp/mcptest"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

func TestMain(m *testing.M) {
	mcptest.ServeChild()
	os.Exit(m.Run())
}

// TestMCPPredicates: a program configures a stdio server (mcp_server/3;
// the same configuration again is no change, another one an outcome),
// lists its tools with the tokens of each definition (mcp_tools/3), and
// grants one in a direct turn (mcp(Grants)) against a scripted HTTP
// model: the call reaches the server, its result is stored, the receipt
// names server and tool; a server over its ceiling is a
// context_budget_failed outcome, and a malformed grant is thrown.
func TestMCPPredicates(t *testing.T) {
	srv := providertest.NewServer(
		providertest.SSE(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"local__echo","arguments":"{\"text\":\"hi\"}"}}]}}]}`,
			`{"choices":[{"index":0,"finish_reason":"tool_calls","delta":{}}],"usage":{"prompt_tokens":300,"completion_tokens":9,"total_tokens":309}}`, "[DONE]"),
		providertest.SSE(`{"choices":[{"index":0,"delta":{"content":"It said hi."}}]}`, "[DONE]"),
	)
	defer srv.Close()
	s := newSession(t, &host.Options{})
	ctx := context.Background()
	cfg := mcptest.Stdio("local")
	server := fmt.Sprintf(`[command(%q), env(['RLMPL_MCP_TEST_SERVER'-"1"])]`, cfg.Command)
	for _, goal := range []string{
		`mcp_server(local, ` + server + `, O), O == ok(mcp_server(local))`,
		`mcp_server(local, ` + server + `, O), O == ok(mcp_server(local))`,
		`mcp_server(local, [command(other)], error(mcp_error(F))), memberchk(kind(configuration_error), F), memberchk(field(name), F)`,
		`mcp_server(web, [url("http://127.0.0.1:1/mcp"), credential("sk-pasted")], error(mcp_error(F))), memberchk(field(credential), F),
			memberchk(message(M), F), \+ append(_, [s,k,-|_], M)`,
		`mcp_tools(local, [model('gpt-4o')], ok(Ts)), member(mcp_tool(F), Ts), memberchk(name(echo), F),
			memberchk(function(local__echo), F), memberchk(tokens(token_count(C)), F), memberchk(tokens(N), C), N > 0`,
		`mcp_tools(nowhere, [], error(mcp_error(F))), memberchk(kind(unknown_server), F)`,
	} {
		if _, err := s.Once(ctx, goal); err != nil {
			t.Fatalf("%s: %v", goal, err)
		}
	}
	prov := fmt.Sprintf(`provider(local, [base_url(%q), model('gpt-4o-2024-08-06')])`, srv.BaseURL())
	got, err := s.Once(ctx, `conversation_store_open(memory, ok(S)), conversation_create(S, [], ok(C)),
		conversation_turn(C, message(user, "say hi through the tool"), [mode(direct), mcp([local-[echo, "ima*"]]),
			completion_options([provider(`+prov+`)])], ok(R)),
		R = conversation_turn_result(F), memberchk(value(V), F), memberchk(receipt(turn_receipt(RF)), F),
		memberchk(mcp(MCP), RF),
		conversation_messages(C, all, [], ok(Ms)), length(Ms, NMs)`)
	if err != nil {
		t.Fatal(err)
	}
	if got["V"] != `"It said hi."` || got["NMs"] != "4" {
		t.Fatalf("value %s, %s messages", got["V"], got["NMs"])
	}
	if m := got["MCP"]; !strings.Contains(m, `server("local")`) || !strings.Contains(m, `tool("echo")`) || !strings.Contains(m, `status("ok")`) ||
		!strings.Contains(m, `tools(["echo","image"])`) {
		t.Fatalf("receipt mcp = %s", m)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[0].Raw, `"name":"local__echo"`) || strings.Contains(reqs[0].Raw, "local__exit") ||
		!strings.Contains(reqs[1].Raw, `"content":"echo: hi"`) {
		t.Fatalf("requests: %v", reqs)
	}
	// A server over its ceiling fails the turn, saying so.
	got, err = s.Once(ctx, `mcp_server(tight, [command(`+fmt.Sprintf("%q", cfg.Command)+`), env(['RLMPL_MCP_TEST_SERVER'-"1"]), max_tool_tokens(5)], ok(_)),
		conversation_store_open(memory, ok(S)), conversation_create(S, [], ok(C)),
		conversation_turn(C, message(user, "hi"), [mode(direct), mcp([tight]), completion_options([provider(`+prov+`)])], error(E))`)
	if err != nil {
		t.Fatal(err)
	}
	if e := got["E"]; !strings.Contains(e, "context_budget_failed(mcp_error([kind(ceiling_exceeded),limit(5),") {
		t.Fatalf("ceiling: %s", e)
	}
	for bad, want := range map[string]string{`mcp([42])`: "type_error(mcp_grant,42)", `mcp([local-echo])`: "type_error(mcp_grant,local-echo)",
		`mcp([local-[]])`: "domain_error(mcp_grant,local-[])", `mcp(['not a server'])`: "domain_error(mcp_grant,'not a server')"} {
		got, err := s.Once(ctx, `conversation_store_open(memory, ok(S)), conversation_create(S, [], ok(C)),
			catch(conversation_turn(C, message(user, "hi"), [mode(direct), `+bad+`, completion_options([provider(`+prov+`)])], _), error(E, _), true)`)
		if err != nil || got["E"] != want {
			t.Errorf("%s: %v %v, want %s", bad, got["E"], err, want)
		}
	}
}
