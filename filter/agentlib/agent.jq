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
