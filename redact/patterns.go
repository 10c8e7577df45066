package redact

import "regexp"

// builtinPatterns are secrets recognisable by their shape, written for
// this package after gitleaks' rule set (see the package comment: the
// formats are the reference, the expressions are ours, each has a case in
// TestBuiltinKinds). Order matters: a specific kind before a generic one
// that would also match it (sk-ant- before sk-, a PEM block before the
// "private_key": assignment that holds it).
//
// hints: one of them is in every match (lower case in a (?i) pattern:
// in any case); keep them long and with a rare letter, they are what the
// pre-filter searches for. next, when set, holds every byte that can
// follow a hint in a match, and a backslash (an escape in raw JSON): a
// hint followed by anything else is no sign of a secret. A pattern with a
// capture group has only the group removed (the name of an assignment
// stays readable).
//
// gitleaks' rule set runs after these (gitleaks.go): a kind stays here
// only where gitleaks has no rule for it, or where its rule wants an
// exact length, alphabet or entropy that a cut, older or newer token
// fails (sk-ant- and sk- keys of any length, AWS key ids outside
// base32, GitHub and GitLab tokens of other lengths, age keys outside
// bech32, a Google key or a Square, Grafana or Hugging Face token that
// its entropy threshold or allowlist lets through), or where the rule
// needs a keyword the text may lack (Telegram, New Relic). Stripe,
// Slack, Twilio and Postman keys are gitleaks' alone.
var builtinPatterns = []struct {
	kind  string
	re    *regexp.Regexp
	hints []string
	next  string
	// also, when set, must be in the text too (searched only once a hint
	// is found: the hint is the rare byte, also the telling one).
	also string
}{
	// PEM first: its body may hold anything the later patterns look for.
	// Without its END line (cut-off output) the base64 that follows goes.
	{"private-key", regexp.MustCompile(`(?s)-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\:,\-]*)`), []string{"PRIVATE KEY"}, "", ""},
	{"anthropic-api-key", regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{8,}`), []string{"sk-ant-"}, "", ""},
	{"api-key", regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{16,}`), []string{"sk-"}, "", ""},
	{"aws-access-key", regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b`), []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"}, "", ""},
	{"aws-secret-key", regexp.MustCompile(`(?i)(?:secret_?access_?key|aws_?secret[a-z_]*)\\?["']?\s*(?:=>|:=|[:=])\s*\\?["']?([A-Za-z0-9/+=]{40,})`), []string{"secret_access_key", "secretaccesskey", "aws_secret", "awssecret"}, "", ""},
	{"github-token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})`), []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, "", ""},
	{"gitlab-token", regexp.MustCompile(`\bgl(?:pat|dt|ft|rt|ptt|oas|cbt|imt|soat|agent|ffct)-[A-Za-z0-9_\-]{20,}`), []string{"glpat-", "gldt-", "glft-", "glrt-", "glptt-", "gloas-", "glcbt-", "glimt-", "glsoat-", "glagent-", "glffct-"}, "", ""},
	{"slack-webhook", regexp.MustCompile(`hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{16,}`), []string{"hooks.slack.com/"}, "", ""},
	{"google-api-key", regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`), []string{"AIza"}, "", ""},
	{"google-oauth", regexp.MustCompile(`\bGOCSPX-[A-Za-z0-9_\-]{20,}|\bya29\.[0-9A-Za-z_\-]{20,}`), []string{"GOCSPX-", "ya29."}, "", ""},
	{"pypi-token", regexp.MustCompile(`pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{40,}`), []string{"pypi-AgEI"}, "", ""},
	{"huggingface-token", regexp.MustCompile(`\bapi_org_[A-Za-z]{34}\b`), []string{"api_org_"}, "", ""},
	{"bearer-token", regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{8,}`), []string{"bearer"}, " \t\n\f\r\\", ""},
	{"jwt", regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*`), []string{".eyJ"}, "", ""},
	{"sendgrid-key", regexp.MustCompile(`\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}`), []string{"SG."}, "", ""},
	{"grafana-token", regexp.MustCompile(`\b(?:glc_[A-Za-z0-9+/]{32,}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})`), []string{"glc_", "glsa_"}, "", ""},
	{"age-secret-key", regexp.MustCompile(`AGE-SECRET-KEY-1[0-9A-Z]{58}`), []string{"AGE-SECRET-KEY-1"}, "", ""},
	{"1password-token", regexp.MustCompile(`\bops_eyJ[A-Za-z0-9+/]{100,}={0,3}|\bA3-[A-Z0-9]{6}-[A-Z0-9\-]{20,}`), []string{"ops_eyJ", "A3-"}, "", ""},
	{"telegram-bot-token", regexp.MustCompile(`\b[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}`), []string{":AA"}, "", ""},
	{"square-token", regexp.MustCompile(`\bEAAA[A-Za-z0-9_\-]{60}`), []string{"EAAA"}, "", ""},
	{"cloud-key", regexp.MustCompile(`\b(?:LTAI[A-Za-z0-9]{20}|AKCp[A-Za-z0-9]{69}|ATATT3[A-Za-z0-9_\-=]{100,}|NRAK-[A-Z0-9]{27}|HRKU-AA[A-Za-z0-9_\-]{58})`), []string{"LTAI", "AKCp", "ATATT3", "NRAK-", "HRKU-AA"}, "", ""},
	{"azure-client-secret", regexp.MustCompile(`\b[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}`), []string{"Q~"}, "", ""},
	// Connection strings: the value of the key part only.
	{"azure-key", regexp.MustCompile(`(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|sig)=([^;"'\s&<>]{16,})`), []string{"accountkey=", "sharedaccesskey=", "sharedaccesssignature=", "sig="}, "", ""},
	// A password in a URL: scheme://user:PASSWORD@host.
	// The password may hold any character but white space, quotes and
	// angle brackets (a / or an @ too: the last @ before a host ends it);
	// one with a / has a non-digit before it, or it would be a port
	// (host:8080/path@x is no password).
	{"url-password", regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@"'<>\\]{0,100}:([0-9]*[^\s0-9/@"'<>\\:][^\s"'<>\\]{0,200}|[^\s/@"'<>\\]{1,200})@[A-Za-z0-9][A-Za-z0-9.\-]*(?:[:/?#\s"'<>\\]|$)`), []string{"@"}, "", "://"},
	{"basic-auth", regexp.MustCompile(`(?i)\bauthorization\\?["']?\s*[:=]\s*\\?["']?basic\s+([A-Za-z0-9+/]{4,}={0,2})`), []string{"authorization"}, "", ""},
	// Assignments: NAME=value, NAME: value, "name": "value", where NAME
	// is or ends in a secret's name (MY_API_KEY, db_password, AUTH_TOKEN,
	// client-secret). A value that starts with $ or { is a reference, not
	// a secret; one that starts with [ was redacted already; one followed
	// by ( is a call.
	{"secret", regexp.MustCompile(`(?i)(?:passw(?:or)?d|secret[_\-]?key|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|auth[_\-]?key)(?:[_.\-][A-Za-z0-9_.\-]*)?\\?["']?\s*(?:=>|:=|[:=])[ \t]*\\?["']?([^\s"'\x60,;&|<>(){}\[\]\\$*][^\s"'\x60,;&|<>(){}\[\]\\]{3,})(?:$|[\s"'\x60,;&|<>)}\]\\])`),
		[]string{"passwd", "password", "secret_key", "secretkey", "secret-key", "token", "apikey", "api_key", "api-key", "accesskey", "access_key", "access-key", "privatekey", "private_key", "private-key", "authkey", "auth_key", "auth-key"},
		"_.-\"' \t\r\n=:\\", ""},
	// A bare "secret" is too common a word to look for everywhere: only
	// as NAME=value (CLIENT_SECRET=, secret = ...), found by its '='.
	{"secret", regexp.MustCompile(`(?i)secret ?=[ \t]*\\?["']?([^\s"'\x60,;&|<>(){}\[\]\\$*][^\s"'\x60,;&|<>(){}\[\]\\]{3,})(?:$|[\s"'\x60,;&|<>)}\]\\])`), []string{"secret=", "secret ="}, "", ""},
}
