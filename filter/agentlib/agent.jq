# agentjq's jq library: definitions that know the stream-json events of the
# agent CLIs. `agentjq filter` prepends this file to every program, so it is a
# sequence of `def`s only. Each definition works on one event (one line) and
# yields nothing on lines it does not apply to, so `tool_calls | .name` prints
# one name per call and skips everything else. The few that need the whole
# stream (tool_pairs, subagents) take it as an array: run them with -s.
# Names starting with _ are internal.

# --- selectors ------------------------------------------------------------

def events(t): select(.type? == t);
def events(t; st): select(.type? == t and .subtype? == st);
def is_init: .type? == "system" and .subtype? == "init";
def init: select(is_init);
def version: select(is_init) | .claude_code_version // empty;
def results: select(.type? == "result");
def in_subagent: (.parent_tool_use_id? // null) != null;
def subagent: select(in_subagent);
def main_agent: select(in_subagent | not);
def decisions: select(.type? == "agentjq" and .subtype? == "decision");
def warnings: select(.type? == "agentjq" and .subtype? == "warning");
def agentjq_exit: select(.type? == "agentjq" and .subtype? == "exit");

# --- text -----------------------------------------------------------------

def _blocks: .message.content | if type == "array" then .[] | select(type == "object") else empty end;

# A tool_result's content is a string or an array of blocks.
def content_text:
  if type == "string" then .
  elif type == "array" then
    map(if type == "string" then .
        elif type == "object" and .type == "text" then .text
        elif type == "object" then "[" + ((.type // "block") | tostring) + "]"
        else tojson end)
    | join("\n")
  elif . == null then ""
  else tojson end;

def assistant_text:
  select(.type? == "assistant")
  | [_blocks | select(.type == "text") | .text | strings]
  | select(length > 0)
  | join("");
def thinking: select(.type? == "assistant") | _blocks | select(.type? == "thinking") | .thinking | strings;
def text_deltas:
  select(.type? == "stream_event")
  | .event | select(.type? == "content_block_delta")
  | .delta | select(.type? == "text_delta") | .text | strings;
def delta_text: text_deltas;
def user_text:
  select(.type? == "user")
  | .message.content
  | if type == "string" then .
    else [.[]? | select(type == "object" and .type == "text") | .text | strings]
      | select(length > 0) | join("")
    end;

# --- tools ----------------------------------------------------------------

def tool_calls:
  select(.type? == "assistant")
  | (.parent_tool_use_id // null) as $p
  | _blocks | select(.type? == "tool_use")
  | {name, id, input, parent: $p};
def tool_calls(n): tool_calls | select(.name == n);
def tool_results:
  select(.type? == "user")
  | (.parent_tool_use_id // null) as $p
  | _blocks | select(.type? == "tool_result")
  | {tool_use_id, content: (.content | content_text), is_error: (.is_error == true), parent: $p};

# The argument a person reads first: the command, the path, the pattern...
# Works on a tool input or on anything carrying one in .input (a tool call,
# a permission request: their tool name picks the field). The table of
# fields per tool is agentjq's own (protocol.KeyFields), shared with
# `approve test` and --view; _key_input is written in Go.
def key_input:
  if type == "object" and (.input | type) == "object"
  then (.name // .tool_name // null) as $tool | .input | _key_input($tool)
  else _key_input(null) end;

# --- permissions and control ----------------------------------------------

def control_requests: select(.type? == "control_request") | (.request // {}) + {request_id};
def permission_requests: control_requests | select(.subtype? == "can_use_tool");
def hook_callbacks: control_requests | select(.subtype? == "hook_callback");
def mcp_messages: control_requests | select(.subtype? == "mcp_message");
def permission_responses:
  select(.type? == "control_response")
  | .response
  | select((.response | type) == "object" and (.response.behavior | type) == "string")
  | {request_id, behavior: .response.behavior, message: (.response.message // null),
     updated_input: (.response.updatedInput // null)};

# --- results --------------------------------------------------------------

def _failed: .is_error == true or ((.subtype // "") as $s | $s != "" and $s != "success");
def outcome:
  if .type? == "result" then
    if _failed then "error"
    elif ((.permission_denials // []) | length) > 0 then "denied"
    else "success" end
  elif .type? == "agentjq" and .subtype? == "exit" then .outcome
  else empty end;
def cost: results | .total_cost_usd;
def turns: results | .num_turns;
def duration: results | .duration_ms;
def usage: results | .usage;
def denials:
  results | .permission_denials[]?
  | {tool: .tool_name, tool_use_id, input: .tool_input};

# --- errors ---------------------------------------------------------------

def is_api_error:
  .type? == "assistant"
  and (.is_api_error_message == true
       or (.message.model? == "<synthetic>"
           and (.error != null or ([assistant_text] | first // "" | startswith("API Error")))));
def _result_error_text:
  if ((.errors // []) | length) > 0 then .errors | map(tostring) | join("; ")
  elif (.result // "") != "" then .result
  elif (.terminal_reason // "") != "" then .terminal_reason
  else .subtype end;
def errors:
  if is_api_error then
    {kind: "api_error", message: ([assistant_text] | first // ""),
     status: (.api_error_status // null), parent: (.parent_tool_use_id // null)}
  elif .type? == "result" then
    select(_failed)
    | {kind: "result", message: _result_error_text, subtype, terminal_reason: (.terminal_reason // null)}
  elif .type? == "user" then
    tool_results | select(.is_error)
    | {kind: "tool_error", message: .content, tool_use_id, parent}
  elif .type? == "system" and .subtype? == "permission_denied" then
    {kind: "permission_denied", message: (.message // ""), tool: (.tool_name // null), tool_use_id: (.tool_use_id // null)}
  elif .type? == "agentjq" and .subtype? == "warning" then
    {kind: "warning", message: (.message // ""), code: (.code // null)}
  elif .type? == "agentjq" and .subtype? == "exit" then
    select((.error // "") != "") | {kind: "exit", message: .error, code, outcome}
  elif .type? == "control_response" and .response.subtype? == "error" then
    {kind: "control_error", message: (.response.error // ""), request_id: .response.request_id}
  else empty end;

# --- whole-stream helpers (input: the array of events, as with -s) ---------

def _stream:
  if type == "array" then .[]
  else error("this definition needs the whole stream as an array: run agentjq filter -s")
  end;

# Each tool call joined to its result (content, is_error: null until one
# comes) and to whether it was denied (an agentjq deny decision, the
# result's permission_denials or a system/permission_denied).
def tool_pairs:
  [_stream] as $all
  | (reduce ($all[] | tool_results) as $r ({}; .[$r.tool_use_id | tostring] = $r)) as $res
  | (reduce ($all[]
             | ( (decisions | select(.behavior == "deny") | .tool_use_id),
                 (denials | .tool_use_id),
                 (events("system"; "permission_denied") | .tool_use_id) )
             | strings) as $id
            ({}; .[$id] = true)) as $den
  | $all[] | tool_calls
  | ($res[.id | tostring] // {content: null, is_error: null}) as $r
  | . + {content: $r.content, is_error: $r.is_error, denied: ($den[.id | tostring] // false)};

# Subagent events grouped by the Task call that started them, in order of
# first appearance, with the task's description, type and final status.
def subagents:
  [_stream] as $all
  | [$all[] | tool_calls] as $calls
  | (reduce ($all[] | subagent) as $e ({order: [], by: {}};
      ($e.parent_tool_use_id | tostring) as $k
      | (if .by[$k] == null then .order += [$e.parent_tool_use_id] else . end)
      | .by[$k] += [$e])) as $g
  | $g.order[]
  | . as $p
  | (first($calls[] | select(.id == $p)) // null) as $call
  | (first($all[] | events("system"; "task_notification") | select(.tool_use_id == $p)) // null) as $note
  | {parent: $p,
     description: ($call.input.description? // null),
     subagent_type: ($call.input.subagent_type? // null),
     status: ($note.status? // null),
     summary: ($note.summary? // null),
     events: $g.by[$p | tostring]};

# --- usage and cost ---------------------------------------------------------

# An assistant message's tokens, on each line that carries them: a
# transcript's assistant lines, a stream's assistant lines and, with
# --include-partial-messages, the message_delta events (the final output
# count, which a stream's assistant lines lack). One message may be split
# over several lines: messages_usage counts it once.
def message_usage:
  if .type? == "assistant" and (.message.usage? | type) == "object" and (.message.model? // "") != "<synthetic>" then
    .message as $m | $m.usage as $u
    | {message_id: ($m.id // null), request_id: (.requestId // .request_id // null), model: ($m.model // null),
       session_id: (.sessionId // .session_id // null), timestamp: (.timestamp // null), cwd: (.cwd // null),
       sidechain: ((.isSidechain // false) or in_subagent),
       input_tokens: ($u.input_tokens // 0), output_tokens: ($u.output_tokens // 0),
       cache_read_input_tokens: ($u.cache_read_input_tokens // 0),
       cache_creation_input_tokens: ($u.cache_creation_input_tokens // 0),
       cache_creation_1h_input_tokens: ($u.cache_creation.ephemeral_1h_input_tokens? // null)}
  elif .type? == "stream_event" and .event.type? == "message_delta" and (.event.usage? | type) == "object" and .api_message_id? != null then
    .event.usage as $u
    | {message_id: .api_message_id, request_id: null, model: null, session_id: (.session_id // null),
       timestamp: null, cwd: null, sidechain: in_subagent,
       input_tokens: ($u.input_tokens // 0), output_tokens: ($u.output_tokens // 0),
       cache_read_input_tokens: ($u.cache_read_input_tokens // 0),
       cache_creation_input_tokens: ($u.cache_creation_input_tokens // 0),
       cache_creation_1h_input_tokens: ($u.cache_creation.ephemeral_1h_input_tokens? // null)}
  else empty end;

def _token_fields: ["input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"];

# Two lines of one message: each count the larger (the lines of a
# transcript's message carry the same usage; a stream's assistant line an
# early count), the other fields the first known.
def _merge_usage($b):
  . as $a
  | reduce ($b | keys[]) as $k ($a; if .[$k] == null then .[$k] = $b[$k] else . end)
  | reduce (_token_fields[], "cache_creation_1h_input_tokens") as $k (.;
      if $b[$k] != null and (.[$k] == null or $b[$k] > .[$k]) then .[$k] = $b[$k] else . end);

# Each message's usage once (by message id), in the order first seen,
# from the usage objects f yields.
def messages_usage(f):
  reduce (f | select(type == "object" and (.message_id | type) == "string")) as $u ({order: [], by: {}};
    if .by[$u.message_id] == null then .order += [$u.message_id] | .by[$u.message_id] = $u
    else .by[$u.message_id] |= _merge_usage($u) end)
  | .by as $by | .order[] | $by[.];
# The same over the whole input (it reads the rest of it, as inputs does:
# run with -n, or the first line is .).
def messages_usage: messages_usage((., _inputs) | message_usage);

# The price table (agentjq's, dated, or --prices FILE's) and a usage
# object's cost in USD from it: null for a model the table lacks. Cache
# writes count at the 5-minute price unless the usage says how many were
# 1-hour ones.
def prices: _prices;
def usage_cost:
  select(type == "object")
  | _price(.model // "" | tostring) as $p
  | if $p == null then null
    else ((.input_tokens // 0) * $p.input + (.output_tokens // 0) * $p.output
          + (.cache_read_input_tokens // 0) * $p.cache_read
          + (if .cache_creation_1h_input_tokens != null
             then ((.cache_creation_input_tokens // 0) - .cache_creation_1h_input_tokens) * $p.cache_write_5m
                  + .cache_creation_1h_input_tokens * $p.cache_write_1h
             else (.cache_creation_input_tokens // 0) * $p.cache_write_5m end)) / 1000000
    end;

def _usage_sums:
  {inputTokens: (map(.input_tokens) | add // 0), outputTokens: (map(.output_tokens) | add // 0),
   cacheCreationTokens: (map(.cache_creation_input_tokens) | add // 0),
   cacheReadTokens: (map(.cache_read_input_tokens) | add // 0)}
  | .totalTokens = .inputTokens + .outputTokens + .cacheCreationTokens + .cacheReadTokens;
def _usage_row:
  _usage_sums + {totalCost: (map(usage_cost // 0) | add // 0),
    modelsUsed: (map(.model | strings) | unique),
    modelBreakdowns: (map(select(.model != null)) | group_by(.model)
      | map({modelName: .[0].model} + (_usage_sums | del(.totalTokens)) + {cost: (map(usage_cost // 0) | add)}))};
def _usage_totals: _usage_sums + {totalCost: (map(usage_cost // 0) | add // 0)};

# What `ccusage daily --json` prints: tokens and cost per day (UTC) and
# model, from the messages' usage (messages_usage). Run with -n over
# transcripts: agentjq filter -n daily_report DIR.
def daily_report(f):
  [messages_usage(f)] as $all
  | {daily: ($all | group_by(.timestamp // "" | .[0:10])
             | map({date: (.[0].timestamp // null | if . == null then null else .[0:10] end)} + _usage_row)),
     totals: ($all | _usage_totals)};
def daily_report: daily_report((., _inputs) | message_usage);

# What `ccusage session --json` prints: the same per session, oldest last
# activity first.
def session_report(f):
  [messages_usage(f)] as $all
  | {sessions: ($all | group_by(.session_id // "")
                | map((map(.timestamp | strings) | max // null) as $last
                      | {sessionId: .[0].session_id, projectPath: (map(.cwd | strings) | first // null)}
                        + _usage_row + {lastActivity: (if $last == null then null else $last[0:10] end), _last: $last})
                | sort_by(._last) | map(del(._last))),
     totals: ($all | _usage_totals)};
def session_report: session_report((., _inputs) | message_usage);

def _commas: tostring | if length <= 3 then . else (.[:-3] | _commas) + "," + .[-3:] end;
def _usd: (. * 10000 | round) as $c | "$" + (($c / 10000 | floor) | tostring) + "." + ("000" + ($c % 10000 | tostring))[-4:];
def _spaces($n): [range($n)] | map(" ") | add // "";

# A daily_report or session_report as the table ccusage shows on a
# terminal, one line a string: run with -r.
def usage_table:
  select(type == "object" and (has("daily") or has("sessions")))
  | (if has("daily") then ["Date", .daily, "date"] else ["Session", .sessions, "sessionId"] end) as [$h, $rows, $k]
  | ["Input", "Output", "Cache Create", "Cache Read", "Total Tokens", "Cost (USD)"] as $nums
  | ([$h, "Models"] + $nums) as $head
  | [$rows[] | [(.[$k] // "-"), (.modelsUsed | join(", ")), (.inputTokens | _commas), (.outputTokens | _commas),
                (.cacheCreationTokens | _commas), (.cacheReadTokens | _commas), (.totalTokens | _commas), (.totalCost | _usd)]] as $body
  | .totals as $t
  | ["Total", "", ($t.inputTokens | _commas), ($t.outputTokens | _commas), ($t.cacheCreationTokens | _commas),
     ($t.cacheReadTokens | _commas), ($t.totalTokens | _commas), ($t.totalCost | _usd)] as $total
  | ([$head] + $body + [$total]) as $all
  | [range($head | length) as $i | $all | map(.[$i] | length) | max] as $w
  | def row: [range(length) as $i | .[$i] as $c
               | if $i < 2 then $c + _spaces($w[$i] - ($c | length)) else _spaces($w[$i] - ($c | length)) + $c end]
             | join("  ") | sub(" +$"; "");
    def rule: [$w[] | [range(.)] | map("-") | add] | join("  ");
    ($head | row), rule, ($body[] | row), rule, ($total | row);
