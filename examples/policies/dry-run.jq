# agentjq approve jq policy: gets the can_use_tool request plus
# {cwd, session_id, permission_mode}; outputs "allow", "deny", "ask",
# an object {behavior, message, updatedInput, updatedPermissions},
# or nothing (no opinion: the next policy decides).
#
# A jq policy sees the command as text, not as the shell will run it, so
# it only rewrites or allows commands it can read whole: one terraform
# command with plain arguments (no ; & | $ ` quotes, redirections or
# newlines). Everything else gets no opinion or a deny.
.cwd as $cwd
| (.input.command // null) as $cmd
| if .tool_name == "Bash" and ($cmd | type) != "string" then
    {behavior: "deny", message: "a Bash call without a command string"}
  elif .tool_name == "Bash"
       and ($cmd | test("^terraform (apply|destroy)( +[-A-Za-z0-9_=.,/:]+)* *$")) then
    # Let it run, but only as a dry run: terraform plan shows what apply
    # (or, with -destroy, destroy) would do and changes nothing.
    ($cmd | capture("^terraform (?<verb>apply|destroy)(?<args>.*)$")) as $m
    | {behavior: "allow",
       updatedInput: (.input | .command = "terraform plan"
                               + (if $m.verb == "destroy" then " -destroy" else "" end)
                               + ($m.args | gsub(" +-auto-approve\\b"; "")))}
  elif .tool_name == "Bash" and ($cmd | test("\\b(sudo|doas)\\b")) then
    {behavior: "deny", message: "sudo is not available to agents here"}
  elif (.tool_name | IN("Write", "Edit", "MultiEdit", "NotebookEdit")) then
    (.input.file_path // .input.notebook_path) as $path
    | if ($path | type) != "string"
         or ($path | startswith($cwd + "/") | not)
         or ($path | test("(^|/)\\.\\.(/|$)")) then
        {behavior: "deny", message: "write only inside \($cwd)"}
      else empty end
  else empty end
