package redact

// An UndetectableKind is a kind of secret that the built-in redaction
// cannot tell from ordinary text without context, and why.
type UndetectableKind struct{ Kind, What, Why string }

// Undetectable lists them: agentjq-record(1) prints the list, and the
// secret corpus test (testdata/secrets.json) expects exactly these kinds
// to survive. Under a name that says what they are (TWILIO_AUTH_TOKEN=,
// "token":, a pat= assignment) they go like any other value.
var Undetectable = []UndetectableKind{
	{"twilio-auth-token-bare", "a Twilio auth token on its own",
		"32 hexadecimal digits, the shape of an MD5 digest, a trace id or a build hash"},
	{"azure-devops-pat-old", "an Azure DevOps personal access token of the old format on its own",
		"52 characters of lower-case base32, with no prefix or check digits to tell it from an identifier"},
}

// A DetectedClass is one class of what the built-in redaction removes,
// as agentjq-record(1) lists it.
type DetectedClass struct{ Class, What string }

// Detected lists the classes (gitleaks' rules are counted and named by
// GitleaksRuleIDs).
var Detected = []DetectedClass{
	{"Provider tokens (gitleaks)", "gitleaks' default rule set at the version go.mod pins: tokens with a known prefix or shape " +
		"(npm, Hugging Face, Shopify, DigitalOcean, Vault, Databricks, Notion, Linear, Sentry, Doppler, Pulumi, GitHub, GitLab, " +
		"Slack, Stripe, Twilio, SendGrid, AWS, GCP, Azure AD and some 200 more), and NAME = value assignments whose name is a " +
		"provider's or a generic secret's, with each rule's entropy threshold, stop words and allowlists."},
	{"Provider tokens (agentjq)", "Anthropic sk-ant- and other sk- keys of any length, AWS key ids, GitHub, GitLab, Google, " +
		"Square, Grafana, Hugging Face, PyPI, Telegram, Alibaba, Artifactory, Atlassian, New Relic, Heroku, 1Password and age " +
		"keys where gitleaks wants an exact length, alphabet or keyword; Docker Hub (dckr_pat_), Stripe webhook (whsec_), " +
		"Replicate (r8_) and Groq (gsk_) keys, which it has no rule for; JWTs; Azure storage and service bus keys, SAS " +
		"signatures and AD client secrets."},
	{"Private keys", "PEM blocks of every type (cut short, JSON-escaped, or written a line at a time); key bodies without " +
		"their armour (openssh-key-v1, PKCS#8, PKCS#1 RSA, SEC1 EC, by their DER header); PuTTY .ppk private lines."},
	{"Credential formats", ".netrc (machine ... password, on one line or several), .pgpass lines (ports 5432-5439, 6432 or *), " +
		"ODBC and ADO PWD=, MYSQL_PWD=, mysql -p, sshpass -p, redis-cli -a, curl -u and --user, wget --password, " +
		"Authorization: Basic and Bearer, Cookie and Set-Cookie headers, and a password in a URL whatever it holds " +
		"(scheme://user:PASSWORD@host, a / or an @ included)."},
	{"Encoded credentials", "base64 of a known token (sk-ant-, sk-proj-, ghp_, github_pat_, glpat-, xoxb-, npm_, hf_, AKIA) " +
		"or of a PEM private key; an .npmrc _auth, a docker config.json \"auth\", a kubeconfig client-key-data."},
	{"Values with no keyword", "an AWS secret access key after its key id in a credentials CSV; an Azure storage account key " +
		"(88 characters of base64) and an Azure DevOps personal access token on their own."},
	{"Secret names", "the value of a JSON key that is or ends in password, passwd, secret, token, credential(s), api key, " +
		"access key, private key, auth key, secret key, client key, key data or passphrase, or is auth, _auth, pwd, " +
		"mnemonic, cookie or session; NAME=value and NAME: value where NAME is or ends in such a name, unless the value is " +
		"code (an unquoted identifier such as password: string, or a short number)."},
	{"The session's own", "the values of ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, " +
		"AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, OPENAI_API_KEY, GITHUB_TOKEN and GH_TOKEN; the account's email and " +
		"organization, in any letter case."},
}
