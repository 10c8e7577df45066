package manpages

// policyManual is the source of agentjq-policy(5), in the markdown
// roff.FromMarkdown reads. It describes the approve package: keep it in
// step with approve/rules*.go, jqpolicy.go, approver.go and
// examples/policies/.
const policyManual = `% agentjq-policy(5) agentjq | File formats

# NAME

agentjq-policy - rules files, jq policies, and the approver and hook protocols that answer an agent's permission requests

# SYNOPSIS

    agentjq spawn --policy rules.json --policy policy.jq --approver CMD [--approver-format control|hook]
    agentjq approve --policy FILE... < agent-output.ndjson

# DESCRIPTION

Before it runs a tool, the agent sends a **can_use_tool** control request and
waits. agentjq answers it with a chain of deciders, asked in this order:

1. the rules files (**--policy** FILE.json), all merged;
2. the jq policies (**--policy** FILE.jq), in the order given;
3. the approver command (**--approver**);
4. the person at the terminal (spawn only, unless **--no-prompt**);
5. a fail-closed deny, whose message names what would have allowed the call.

A decider may answer allow, deny, or nothing (no opinion: the next one is
asked). "ask" from rules or a jq policy skips the remaining policies and goes
to the approver or the terminal; if neither can answer, the call is denied.
Any error, crash, garbage or timeout denies, with a message the agent reads. A
policy file that does not load stops agentjq before anything starts, with
file:line:column, exit status 2.

Every decision is reported as an agentjq event of subtype **decision**
(see agentjq-protocol(7)), naming who decided (**decided_by**: rules, jq,
approver, tty, default, timeout, cancel, error) and which rule.

# RULES FILES

A JSON object in Claude Code's permission syntax: a **permissions** block, or a
whole Claude Code settings.json whose **permissions** key holds one, so a
project's .claude/settings.json can be used as it is.

**allow**, **ask**, **deny**
:   arrays of rules. Across all files, deny beats ask beats allow, whatever
    the order of the files.

**default**
:   what a request no rule matches gets: **deny** (the default) or **ask**.
    The merged default is deny unless every file says ask.

**message**
:   the message a deny by this file's default sends the agent.

**answers**
:   scripted answers to AskUserQuestion: question text or header (or "*")
    to an option label, or "@first" for the first option.

Other keys of a Claude Code permissions block (defaultMode,
additionalDirectories, ...) are accepted and ignored; any other key is an
error. A key "//" holds a comment.

## Rules

**Tool**
:   every call of the tool: Bash, Read, Edit, Write, WebFetch, mcp__server,
    mcp__server__tool.

**Bash(**_pattern_**)**
:   the command, read as shell words after quote removal: **npm run build**
    exactly these words; **git diff:*** these words then anything (the prefix
    form); **git *** a lone star is any words; **\*.sh** a star inside a word
    matches within the word. A compound command (&&, ||, ;, |, subshells) is
    judged part by part: every part must be allowed, and any part denied
    denies the call. Wrappers such as sudo, env and timeout must be allowed
    themselves.

**Read(**_path_**)**, **Edit(**_path_**)**, **Write(**_path_**)**
:   gitignore-style globs: **//abs/path** from the root, **~/p** from the home
    directory, **/p**, **./p** or **a/b** from the session's working
    directory, a name without a slash at any depth below it. A star stays
    within one path segment and ** spans segments. An Edit rule covers every
    tool that writes a file, a Read rule every tool that reads one. Paths are
    matched as written and with symlinks resolved.

**WebFetch(domain:**_host_**)**
:   the URL's host; domain:*.host matches subdomains.

# JQ POLICIES

A file ending in .jq is a jq program (gojq). Its input is the can_use_tool
request body (tool_name, input, tool_use_id, permission_suggestions, ...) plus
**request_id**, **cwd**, **session_id** and **permission_mode**. Its first
output decides:

**"allow"**, **"deny"**, **"ask"**
:   the behavior, with a default message for deny.

**{behavior, message, updatedInput, updatedPermissions, interrupt}**
:   an answer in the shape of the control response: updatedInput rewrites the
    tool's input (an allow always carries one); interrupt stops the turn along
    with a deny.

**{answers: {...}}**
:   answers an AskUserQuestion.

**empty**, **null**
:   no opinion.

An error at run time denies with the error as the message. See
examples/policies/dry-run.jq.

# APPROVER PROTOCOL (--approver-format control)

The approver is a command run with sh -c once, as a co-process. For each
request it gets one line on stdin: the agent's control_request, as it came.
It writes one line back naming the same request_id, either a
control_response:

    {"type":"control_response","response":{"subtype":"success","request_id":"ID","response":{"behavior":"allow","updatedInput":{...}}}}

or a bare decision with a request_id member:

    {"request_id":"ID","behavior":"deny","message":"not on a Friday"}

Requests are sent one at a time, in the order agentjq asks. An answer counts
only for the request whose request_id it names: a line for another request, a
second answer, a line without request_id and a line that is not JSON are
reported on stderr and ignored, so none of them can answer a later request.
An answer for the request that is not a decision, a crash, a line over 16 MiB
or no answer within the approval timeout denies; a crashed approver is
restarted once. **agentjq approve** itself speaks this protocol, so it can be
spawn's approver.

Approvers run as agentjq-spawn(1) PROCESSES says: their whole process tree
ends with them, and they do not get the agent's credentials unless
--pass-credentials.

# HOOK PROTOCOL (--approver-format hook)

The approver is a Claude Code PreToolUse command hook, run with sh -c once per
request. Stdin: the hook input:

    {"session_id":"...","transcript_path":"","cwd":"...","permission_mode":"default",
     "hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{...},"tool_use_id":"..."}

Stdout: hook output, whose **hookSpecificOutput.permissionDecision** (allow,
deny, ask), **permissionDecisionReason** and **updatedInput** answer. Exit
status 2 denies with stderr as the message. Empty output is no opinion;
anything else that is not a decision denies, and so does stdout over 16 MiB.
See examples/policies/hook.sh.

# EXAMPLES

A rules file (examples/policies/rules.json):

    {
      "allow": ["Bash(git diff:*)", "Bash(go test:*)", "Read(**)", "Edit(src/**)"],
      "ask": ["Bash(git push:*)"],
      "deny": ["Bash(rm -rf:*)", "Read(.env)", "Read(~/.ssh/**)"],
      "default": "deny",
      "message": "Not allowed by the project's agent policy."
    }

Test it against a recording, then use it:

    agentjq approve test --policy rules.json session.rec
    agentjq spawn --policy rules.json -p 'run the tests'

Explain one decision:

    echo '{"tool_name":"Bash","input":{"command":"git push --force"}}' | agentjq approve explain --policy rules.json

# SEE ALSO

agentjq(1), agentjq-approve(1), agentjq-spawn(1), agentjq-protocol(7)
`
