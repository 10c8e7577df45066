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

Built in, by their shape: Anthropic, OpenAI and other sk- keys; AWS access
key ids and secret access keys (aws_secret_access_key=, "SecretAccessKey":);
Stripe sk_/rk_ live, test and prod keys; JWTs; PEM private keys (RSA, EC,
OPENSSH, PGP, PKCS#8; JSON-escaped with \n, in a "private_key" JSON value,
cut short without END, or written line by line on stderr); passwords in URLs
(https://user:PASSWORD@, postgres://, mysql://, redis://:PASSWORD@, amqp://,
mongodb+srv://...); Authorization: Basic and Bearer credentials; assignments
whose name is or ends in a secret's name (MY_API_KEY=, db_password:,
AUTH_TOKEN=, "access_token": "...", passwd:, private_key=, CLIENT_SECRET=,
NPM_TOKEN=, _authToken=); Slack tokens and webhooks; GitHub classic,
fine-grained, OAuth and app tokens; GitLab tokens; Google API keys and OAuth
secrets; Azure storage and service bus keys, SAS signatures and AD client
secrets; SendGrid, Twilio, Telegram, Postman, Grafana, Hugging Face, PyPI,
Square, Alibaba, Artifactory, Atlassian, New Relic, Heroku, 1Password and
age keys. Also the values of ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN,
CLAUDE_CODE_OAUTH_TOKEN and a few other credential variables, and the
account's email and organization in any letter case: read from the agent's
configuration (.claude.json in $CLAUDE_CONFIG_DIR or $HOME, its
oauthAccount) before the header is written, and from the initialize
response.

The formats follow gitleaks' rule set (config/gitleaks.toml), the reference
in this field; agentjq carries its own expressions of them instead of
depending on gitleaks, whose module weighs 72 modules and whose rules, run
as gitleaks runs them, would not keep redaction at the recorder's speed
(see the redact package's documentation). A bare word "secret" counts only
as NAME=value, and an npm token only in an assignment.

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
