package recording

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

An object whose first key is always **agentjq_recording** (the format version,
an integer; this page describes version 1). Readers recognise a recording by the
bytes **{"agentjq_recording":** at the start of the first line. Keys:

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

Readers must ignore keys they do not know. A reader refuses a version newer than
it knows.

## Entries (every other line)

    {"seq":N,"ms":T,"dir":"D","msg":LINE}
    {"seq":N,"ms":T,"dir":"D","text":"STRING"}

The keys always come in this order, so a reader can slice the payload out of
the line without decoding it.

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

**msg**
:   the line itself when it is a JSON object: the agent's bytes exactly as
    they travelled, without the newline (key order, spacing and escapes kept),
    except where redaction replaced a value.

**text**
:   any other line (stderr, a non-JSON stdout line) as a JSON string. Invalid
    UTF-8 is replaced by U+FFFD there.

The payload key is always last.

# CRASH SAFETY

Lines are written as they happen, whole: **agentjq record** and **spawn --record**
hand each line to a recorder goroutine, which redacts and writes what has
arrived in one write(2) of whole lines (at most about 1 MiB each), so the file
trails the session by milliseconds. On Linux, when lines arrive faster than
that, batches of about 4 MiB go either through the page cache or with
O_DIRECT straight to the device, whichever the recorder measures faster on
the machine at the time (the page cache costs a copy and, on a VM that
returns free memory to its host, a host page fault for each new page; the
device costs its own speed). With O_DIRECT, the part of a batch after its
last whole 4 KiB block goes through the page cache and the next batch
writes that block again, whole. The file is the same as with write(2) alone
(**AGENTJQ_NO_DIRECT_IO**=1 asks for that). If agentjq is killed, every complete line is valid; the last line
may be cut off. Readers accept a cut-off last line with a warning and ignore
it; a bad line elsewhere is an error naming its line number.

# REDACTION

On by default, before anything reaches the disk (**--no-redact** turns it
off). Removed text is replaced by a placeholder naming what was removed:

    [REDACTED:anthropic-api-key]  [REDACTED:api-key]  [REDACTED:bearer-token]
    [REDACTED:aws-access-key]  [REDACTED:github-token]  [REDACTED:slack-token]
    [REDACTED:google-api-key]  [REDACTED:email]  [REDACTED:organization]
    [REDACTED:env:NAME]  [REDACTED:regex-N]  [REDACTED:path .a.b]

Built in: API keys and tokens by their shape, bearer tokens, the account email
and organization of the initialize response (removed wherever they appear
afterwards), and the values of ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN,
CLAUDE_CODE_OAUTH_TOKEN and a few other credential variables. Added by flags:
**--redact-env NAME** (the variable's value), **--redact REGEX** (RE2),
**--redact-path JQPATH** (.a.b, .a[0], .a[], ."key", .["key"]: the whole
value). Redaction works inside JSON strings (escapes decoded first) and leaves
every other byte of the line as it was. Header argv and cwd are redacted too.

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
