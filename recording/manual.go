package recording

import "github.com/agentjq/agentjq/redact"

// Manual is the source of agentjq-recording(5), in the markdown the man
// page generator reads.
const Manual = `% agentjq-recording(5) agentjq | File formats

# NAME

agentjq-recording - the file format of agentjq recordings

# SYNOPSIS

    {"agentjq_recording":1,"agent":"claude","agent_version":"2.1.328",...}
    {"seq":1,"ms":0.412,"dir":"in","msg":{...}}
    {"seq":2,"ms":812.500,"dir":"out","msg":{...}}
    {"seq":3,"ms":813.000,"dir":"err","text":"..."}

# DESCRIPTION

A recording is what **agentjq record** (or **agentjq spawn --record**) writes: both
directions of one session with an agent CLI, with timing. It is NDJSON: every line
is one JSON object and valid on its own, so **agentjq filter**, **jq** and
**grep** read it, and a file cut short by a crash is still readable.

## The header (line 1)

An object whose first key is **agentjq_recording** (the format version, an
integer; this page describes version 1). agentjq writes it first, so a reader
recognises a recording by the bytes **{"agentjq_recording":** at the start of the
first line; agentjq's readers also take a first line that is any JSON object
with that key (a recording rewritten by another tool). Keys:

**agentjq_recording**
:   format version, 1.

**agent**
:   the CLI profile (claude, context).

**agent_version**
:   the agent's version when known at the start, else "" (see **meta** below).

**agentjq_version**
:   the version of agentjq that recorded.

**argv**
:   agentjq's command line (redacted).

**cwd**
:   the working directory (redacted).

**started**
:   the start time, RFC 3339, UTC.

**redacted**
:   true when secrets were removed (the default).

**redact**
:   present when redacted: **builtin** (bool), **env** (variable names),
    **regex** (patterns), **paths** (jq paths). It never holds a secret value.
    **replay --as-agent** applies the same redactions to the client's lines.

**session**
:   the session's settings as agentjq parsed its command line (redacted like
    argv): **agent**, **agent_args** (after --), **model**, **permission_mode**,
    **allowed_tools**, **disallowed_tools**, **system_prompt**,
    **append_system_prompt**, **max_turns**, **partial**, **init**, **mcp_tool**,
    **mcp_tool_desc**, **mcp_tool_schema**, **mcp_tool_timeout**, **mcp_server**,
    **hook**, **hook_timeout** (durations as "60s"; absent: the default), and how
    permissions were decided: **policy** (paths), **approver**, **no_prompt**,
    **one_shot** (-p). Keys with a zero value are left out. **replay --check**
    runs the session again with these settings. Recordings made before agentjq
    wrote it have no **session**: the check then reads the settings from
    **argv** as spawn or record would parse it.

Readers must ignore keys they do not know. A reader refuses a version newer than
it knows.

## Entries (every other line)

    {"seq":N,"ms":T,"dir":"D","msg":LINE}
    {"seq":N,"ms":T,"dir":"D","text":"STRING"}
    {"seq":N,"ms":T,"dir":"D","party":"P","msg":LINE}

agentjq writes the keys in this order, so a reader can slice the payload out
of the line without decoding it. agentjq's readers read any other line of an
entry as JSON (keys in another order, spaces added, keys they do not know), so
a recording rewritten by jq or an editor stays readable; a line that is not a
JSON object with **seq**, **dir** and **msg** or **text** is an error naming
FILE:LINE. **party** appears only in recordings of **agentjq proxy**. A
recording may be gzip-compressed: **filter**, **filter --view**,
**replay** and **approve test** read it as it is.

**seq**
:   the sequence number: 1, 2, 3... in the order the lines happened, across
    all directions. **replay --after-seq N** resumes after one.

**ms**
:   milliseconds since the start, three decimals.

**dir**
:   **in**: a line written to the agent's stdin (a user turn, a control
    response, a client control request);
    **out**: a line the agent wrote to stdout;
    **err**: a line of the agent's stderr;
    **event**: one of agentjq's own events (type "agentjq");
    **meta**: a fact learnt mid-session: {"agent_version":"..."} once the
    agent reports **claude_code_version** in system/init or in its initialize
    response;
    **daemon**: an event of **agentjq serve** (the session.event params, with
    its own **seq** in msg), appended before any client sees it: the
    session's event log (agentjq-daemon(7)).
    Readers must skip directions they do not know.

**party**
:   only in recordings of **agentjq proxy**, where agentjq sits between a
    client (an Agent SDK app, an IDE plugin) and the agent. On **in**: who
    wrote the line, **client** or **agentjq** (agentjq's own initialize, its
    answers to a policy deny, to its own hooks and MCP servers; a client's
    initialize merged with agentjq's registrations stays **client**). On
    **out**: **agentjq** marks a line the client never saw (a request agentjq
    answered, the reply to agentjq's own request); without it the client got
    the line. On **event**: who decided (**client** for a decision the
    client made, with **decided_by** "client"). **replay --as-agent** expects
    only the client's in lines and never shows the client an out line marked
    agentjq. Readers that do not know the key find the direction before it
    and the payload after it, as always.

**msg**
:   the line itself when it is a JSON object: the agent's bytes exactly as
    they travelled, without the newline (key order, spacing and escapes kept),
    except where redaction replaced a value.

**text**
:   any other line (stderr, a non-JSON stdout line) as a JSON string. Invalid
    UTF-8 is replaced by U+FFFD there.

agentjq writes the payload key last.

# CRASH SAFETY

Lines are written as they happen, whole: **agentjq record** and **spawn --record**
hand a copy of each line to a recorder goroutine, which redacts and writes what
has arrived in one write(2) of whole lines (at most about 1 MiB each), so the
file trails the session by milliseconds. If agentjq is killed, every complete line is valid; the last line
may be cut off. Readers accept a cut-off last line with a warning and ignore
it; a bad line elsewhere is an error naming its line number.

# STRICT READING

Every reader of recordings (**replay**, **replay --as-agent**, **replay --check**,
**filter**, **filter --view**, **approve test**) reads them through one reader, and
reads strictly: an entry whose **msg** is not a JSON object (every line of the
protocol is one), and a gzip-compressed file that ends early or is damaged (not
what was written: its end, and the check of its contents, are missing), are
errors naming FILE:LINE; **replay** and **filter** then exit 5. Their
**--lenient** keeps the older reading: such a **msg** is read as it is, and a
cut-off gzip file is read up to the cut, with a warning.

` + redact.Manual + `
# COMPATIBILITY

Version 1 readers ignore unknown header keys and unknown directions, so fields
and directions may be added without a new version. A change that breaks a
version 1 reader gets version 2.

# EXAMPLES

The agent's output, as it was sent:

    agentjq replay rec.ndjson

The same with jq:

    jq -c 'select(.dir=="out") | .msg' rec.ndjson

Every permission request in a recording:

    agentjq filter 'select(.type=="control_request")' rec.ndjson

# SEE ALSO

agentjq(1), agentjq-record(1), agentjq-replay(1), agentjq-filter(1)
`
