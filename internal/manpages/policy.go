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
approver, tty, default, timeout, cancel, error, hook), the path (**via**:
hook or permission, below) and which rule.

# EVERY CALL, NOT ONLY THE ONES THE AGENT ASKS ABOUT

claude runs many calls without a can_use_tool request: Read inside the
project, read-only Bash (cat, grep -r, head, cd), and whatever a loaded
settings file allows. So whenever the chain holds more than the fail-closed
default (a policy, an approver, or a terminal that opens), spawn registers a
PreToolUse hook of its own and the policies judge every call before it runs
(agentjq-protocol(7) has the protocol):

- a **deny** from the rules files or a jq policy blocks the call; the model
  reads the message;
- a call the policies do not decide, or an **ask**, comes back as a
  can_use_tool request, which goes to the approver, the terminal and the
  default, not to the policies again;
- an **allow** lets the agent's own permission flow go on; if the agent
  then asks anyway, the whole chain decides again.

This means that the rules decide what the agent reads too. Under the rules'
default deny, a Read or an **ls** no rule allows is denied, even though the
agent would not have asked: allow what the agent should read (for example
"Read" or "Bash(ls:*)"), or set "default": "ask" to leave the rest to
the approver or the terminal. With only an approver, it is asked about
every call; with only the terminal, every call prompts (answer a, for
always).
A jq policy run for the hook sees the same fields, without
permission_suggestions, description or display_name, and request_id is the
hook call's.

Relative paths are judged where they land: the hook reports the directory
the agent's Bash shell is in (claude keeps it between calls, so after
**cd src/secret** a write to **key.pem** is src/secret/key.pem), and the
permission request that follows is judged in the same directory. Relative
path rules stay anchored at the session's working directory.

**--hook PreToolUse** commands run inside agentjq's hook, before the
policies, one after the other in the order given (each only for the tools
its matcher names; the matcher is a name, names joined with |, or a regular
expression). The policies then judge the input they leave, and the original
too when a hook changed it. The stricter answer wins: any deny denies (the
reasons are joined); else any ask, or a call the policies did not decide,
asks; else, the policies allowing it, a hook's allow is passed on. A hook's
own keys are read as the agent reads them (case-sensitive); its continue,
stopReason, systemMessage, suppressOutput and additionalContext are passed
on.

The agent loads only the user's settings (**--setting-sources user**, see
agentjq-protocol(7)): a settings file in the project can neither widen what
the policy allows nor run hooks of its own, unless you pass
**-- --setting-sources user,project,local**. Even then an allow rule there
cannot skip the policies, since the hook asks about every call; command
hooks and env entries there would run.

The terminal's **always** adds a rule for the rest of agentjq's session
only; the agent's permission_suggestions (which would write the rule into
.claude/settings.local.json) are never passed on. Likewise, the
updatedPermissions of an approver's or a jq policy's answer reach the agent
only when their destination is **session**; any other destination
(localSettings, projectSettings, userSettings) is dropped with a line on
stderr.

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
It writes one line back, either a control_response for that request_id:

    {"type":"control_response","response":{"subtype":"success","request_id":"ID","response":{"behavior":"allow","updatedInput":{...}}}}

or a bare decision:

    {"behavior":"deny","message":"not on a Friday"}

Requests are sent one at a time. A line for a request already given up on is
dropped. A crash, a line that is not a decision, or no answer within the
approval timeout denies; a crashed approver is restarted once. **agentjq
approve** itself speaks this protocol, so it can be spawn's approver.

# HOOK PROTOCOL (--approver-format hook)

The approver is a Claude Code PreToolUse command hook, run with sh -c once per
request. Stdin: the hook input:

    {"session_id":"...","transcript_path":"","cwd":"...","permission_mode":"default",
     "hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{...},"tool_use_id":"..."}

Stdout: hook output, whose **hookSpecificOutput.permissionDecision** (allow,
deny, ask), **permissionDecisionReason** and **updatedInput** answer. Exit
status 2 denies with stderr as the message. Empty output is no opinion;
anything else that is not a decision denies. See examples/policies/hook.sh.

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
