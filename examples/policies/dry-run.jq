# agentjq approve jq policy: gets the can_use_tool request plus
# {cwd, session_id, permission_mode}; outputs "allow", "deny", "ask",
# an object {behavior, message, updatedInput, updatedPermissions},
# or nothing (no opinion: the next policy decides).
if .tool_name == "Bash" and (.input.command | test("^terraform (apply|destroy)\\b")) then
  # Let it run, but only as a dry run.
  {behavior: "allow", updatedInput: (.input | .command += " -dry-run")}
elif .tool_name == "Bash" and (.input.command | test("\\bsudo\\b")) then
  {behavior: "deny", message: "sudo is not available to agents here"}
elif (.tool_name == "Write" or .tool_name == "Edit")
     and (.input.file_path | startswith(.cwd + "/") | not) then
  {behavior: "deny", message: "write only inside \(.cwd)"}
else empty end
