package redact

// Manual is the REDACTION section of agentjq-recording(5), in the markdown
// the man page generator reads: it lives beside the patterns it describes.
const Manual = `# REDACTION

On by default, before anything reaches the disk (**--no-redact** turns it
off). Removed text is replaced by a placeholder naming what was removed, for
example:

    [REDACTED:anthropic-api-key]  [REDACTED:api-key]  [REDACTED:aws-secret-key]
    [REDACTED:private-key]  [REDACTED:url-password]  [REDACTED:secret]
    [REDACTED:email]  [REDACTED:organization]  [REDACTED:env:NAME]
    [REDACTED:regex-N]  [REDACTED:path .a.b]

Built in: gitleaks' default rule set at the version go.mod pins (some 220
provider token formats and NAME = value rules, with their entropy
thresholds and allowlists), and agentjq's own rules: Anthropic and other
sk- keys, AWS key ids and secret access keys, PEM private keys (of every
type, JSON-escaped, cut short without END, or written line by line on
stderr) and key bodies without armour, passwords in URLs whatever they
hold, Authorization: Basic and Bearer credentials, .netrc, .pgpass, ODBC
PWD=, MYSQL_PWD and command-line passwords, base64 of a credential, cookie
headers, and assignments whose name is or ends in a secret's name
(MY_API_KEY=, db_password:, "access_token": "...", CLIENT_SECRET=,
_authToken=). Also the values of ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN,
CLAUDE_CODE_OAUTH_TOKEN and a few other credential variables, and the
account's email and organization in any letter case: read from the agent's
configuration (.claude.json in $CLAUDE_CONFIG_DIR or $HOME, its
oauthAccount) before the header is written, and from the initialize
response. agentjq-record(1) lists what is detected, by class, and what
cannot be without context.

Added by flags: **--redact-env NAME** (the variable's value), **--redact
REGEX** (RE2), **--redact-path JQPATH** (.a.b, .a[0], .a[], ."key", .["key"]:
the whole value). Redaction works inside JSON strings (escapes decoded first)
and leaves every other byte of the line as it was. Text that is not JSON
(stderr, a non-JSON stdout line) is also looked at with its \u, \/ and \"
escapes decoded. Header argv, cwd and session are redacted too; the text of
each --redact expression is removed from them (the header keeps
**regex_count**, not the expressions). agentjq's own echo on stderr of an
agent's non-JSON stdout line goes through the same redaction.
`
