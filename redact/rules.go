package redact

// agentjqRules are agentjq's own detectors, for what gitleaks' rule set
// (gitleaks_rules.go) has no rule for: credential formats and encodings
// rather than a provider's token shape, and a few token prefixes it
// lacks. They run in the same engine as gitleaks' rules (keywords in its
// automaton, lower case; a regexp near them; the global allowlists), and
// each has cases in testdata/secrets.json. The secret is the first
// non-empty capture group, or the whole match.
var agentjqRules = []glRule{
	// Token prefixes gitleaks v8.30 has no rule for: Docker Hub personal
	// access tokens, Stripe webhook signing secrets, Replicate and Groq
	// API keys.
	{id: "api-token", regex: `\b(?:dckr_pat_[A-Za-z0-9_\-]{20,}|whsec_[A-Za-z0-9+/=]{24,}|r8_[A-Za-z0-9]{37}|gsk_[A-Za-z0-9]{52})\b`,
		keywords: []string{"dckr_pat_", "whsec_", "r8_", "gsk_"}},
	// .netrc: machine HOST [login USER] [account A] password PASSWORD, on
	// one line or several; a password line on its own (cat ~/.netrc
	// read a line at a time).
	{id: "netrc-password", regex: `(?i)\bmachine\s+\S+(?:\s+(?:login|account)\s+\S+)*\s+password\s+(\S+)`,
		keywords: []string{"machine"}},
	{id: "netrc-password", regex: `(?m)(?:^|\s)password[ \t]+(\S{3,})[ \t]*$`, keywords: []string{"password"}},
	// .pgpass: host:port:database:user:password, with the ports of
	// PostgreSQL and pgbouncer, or a wildcard; a line of its own.
	{id: "pgpass-password", regex: `(?m)(?:^|[\s"'=])[^\s:#"'=]+:(?:543[2-9]|6432|\*):[^\s:]+:[^\s:]+:([^\s"']{3,})(?:$|[\s"'])`,
		keywords: []string{":5432:", ":5433:", ":5434:", ":5435:", ":5436:", ":5437:", ":5438:", ":5439:", ":6432:", ":*:"}},
	// ODBC and ADO connection strings (PWD=), MYSQL_PWD= (not a
	// directory: the shell's PWD=/home/... and OLDPWD=), and the
	// passwords of a command line: mysql -pPASSWORD, sshpass -p, redis-cli -a.
	{id: "password", regex: `(?i)\b(?:[a-z_]*_)?pwd\s*=\s*\\?["'{]?([^\s;"'\\{}/~.][^\s;"'\\{}]{2,})`, keywords: []string{"pwd"}, code: true, assign: true},
	{id: "password", regex: `\bmysql(?:dump|admin|sh|import)?\b[^\n|;&]{0,200}?\s-p([^\s'"\-][^\s'"]{2,})`, keywords: []string{"mysql"}},
	{id: "password", regex: `\bsshpass\s+-p\s*['"]?([^\s'"]{3,})`, keywords: []string{"sshpass"}},
	{id: "password", regex: `\bredis-cli\b[^\n|;&]{0,200}?\s-a\s+['"]?([^\s'"]{3,})`, keywords: []string{"redis-cli"}},
	// Values under names gitleaks' generic rule does not know: an .npmrc
	// _auth (base64 of user:password), a docker config.json "auth", a
	// kubeconfig client-key-data (a base64 PEM key), a passphrase, a
	// pwd, a client key, a cookie. A mnemonic is a run of words.
	{id: "secret", regex: `(?i)(?:^|[^a-z0-9_\-])(?:_auth|passphrase|client[_\-]?key|[a-z]*key[_\-]data|secret[_\-]?key)\\?["']?\s*(?:=>|:=|[:=])[ \t]*\\?["']?([^\s"'\x60,;&|<>(){}\[\]\\$*][^\s"'\x60,;&|<>(){}\[\]\\]{3,})`,
		keywords: []string{"_auth", "passphrase", "clientkey", "client_key", "client-key", "key-data", "key_data", "secretkey", "secret_key", "secret-key"}, code: true, assign: true},
	{id: "mnemonic", regex: `(?i)mnemonic\\?["']?\s*(?:=>|:=|[:=])\s*\\?["']?([a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23})`,
		keywords: []string{"mnemonic"}, assign: true},
	// Cookie and Set-Cookie headers: the cookies, whatever their names.
	{id: "cookie", regex: `(?i)\bcookie:[ \t]*((?:[^=\s;"\\]+=[^;\s"\\]*;?[ \t]*)+)`, keywords: []string{"cookie:"}},
	// Base64 of a credential: of a token with a known prefix (sk-ant-,
	// sk-proj-, ghp_, gho_, ghs_, github_pat_, glpat-, xoxb-, xoxp-,
	// npm_, hf_, AKIA) or of a PEM private key (a kubeconfig's
	// client-key-data, a Kubernetes secret's tls.key).
	{id: "base64-secret", regex: `(?:c2stYW50LW|c2stcHJvai|Z2hwX|Z2hvX|Z2hzX|Z2l0aHViX3BhdF|Z2xwYXQt|eG94Yi|eG94cC|bnBtX|aGZf|QUtJQ|LS0tLS1CRUdJTi[A-Za-z0-9+/]{0,16}UFJJVkFURSBLRVkt|LS0tLS1CRUdJTi[A-Za-z0-9+/]{0,16}QUklWQVRFIEtFWS|LS0tLS1CRUdJTi[A-Za-z0-9+/]{0,16}BSSVZBVEUgS0VZL)[A-Za-z0-9+/]{12,}={0,2}`,
		keywords: []string{"c2styw50lw", "c2stchjvai", "z2hwx", "z2hvx", "z2hzx", "z2l0ahvix3bhdf", "z2xwyxqt", "eg94yi", "eg94cc", "bnbtx", "agzf", "qutjq", "ls0tls1crudjti"}},
	// A private key's body without its armour: OpenSSH (openssh-key-v1),
	// PKCS#8, PKCS#1 RSA and SEC1 EC keys, by the DER header every such
	// key starts with (public keys and certificates start otherwise).
	{id: "private-key", regex: `(?:b3BlbnNzaC1rZXktdjE|MII[A-Za-z0-9+/]{1,4}IBADANBgkqhkiG9w0BAQEFAASC|MII[A-Za-z0-9+/]{2,4}IBAAKC|MHcCAQEEI|MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHB)[A-Za-z0-9+/=\s\\]{16,}`,
		keywords: []string{"b3blbnnzac1rzxktdje", "ibadanbgkqhkig9w0baqefaasc", "ibaakc", "mhccaqeei", "mighageambmgbyqgsm49"}},
	// A PuTTY key file's private lines.
	// (Written with \n escapes in text too; written a line at a time, the
	// Private-Lines that follow go whole: Redactor.textLine.)
	{id: "private-key", regex: `(?s)Private-Lines:[ \t]*\d+[ \t]*(?:\r?\n|(?:\\r)?\\n)(.+?)(?:(?:\r?\n|(?:\\r)?\\n)Private-(?:MAC|Hash)|$)`,
		keywords: []string{"private-lines:"}},
	// An AWS credentials CSV (as the console downloads it): the secret
	// access key follows the key id, with no name of its own.
	// (The key id may be redacted already.)
	{id: "aws-secret-key", regex: `(?:\b(?:AKIA|ASIA)[A-Z0-9]{16}|\[REDACTED:aws-access-key\])[ \t]*[,;\t|][ \t]*([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`,
		keywords: []string{"akia", "asia", "[redacted:aws-access-key]"}},
	// A JSON object inside text (a file read, a command's output) whose
	// key is one of secretKeyExact.
	{id: "secret", regex: `(?i)"(?:_?auth|pwd|passphrase|mnemonic|cookie|session|seed_phrase)"\s*:\s*"([^"\\]{4,})"`,
		keywords: []string{"auth", "pwd", "passphrase", "mnemonic", "cookie", "session", "seed_phrase"}, assign: true},
	// An Azure storage account key on its own: 64 bytes in base64 (88
	// characters, "==" last), not part of a longer base64 run, nor after
	// a digest's name (sha512-, as lockfiles write integrity hashes).
	{id: "azure-key", regex: `(?:^|[^A-Za-z0-9+/\-:_=])([A-Za-z0-9+/]{86}==)(?:[^A-Za-z0-9+/=]|$)`,
		keywords: []string{"=="}},
	// An Azure DevOps personal access token (84 characters, AZDO at 76).
	{id: "azure-devops-pat", regex: `\b[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}\b`, keywords: []string{"azdo"}},
}
