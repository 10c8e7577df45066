package fakeagent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// A CorpusSecret is one planted secret of the "secret-corpus" scenario:
// Text is how it stands in the session, Secret the part that must not
// reach the disk (Text itself when empty).
type CorpusSecret struct {
	Kind, Text, Secret string
	// Class groups the kinds of a corpus file; JSON, when set, is a
	// JSON object written as it is, as a line's own value.
	Class string          `json:",omitempty"`
	JSON  json.RawMessage `json:",omitempty"`
}

// LoadCorpus reads a corpus file: a JSON array of CorpusSecret.
func LoadCorpus(path string) ([]CorpusSecret, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var secrets []CorpusSecret
	if err := json.Unmarshal(b, &secrets); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return secrets, nil
}

// Must is what must not survive.
func (c CorpusSecret) Must() string {
	if c.Secret != "" {
		return c.Secret
	}
	return c.Text
}

// The account of the corpus: named by the agent's configuration
// (CorpusConfig), told in other letter case before the initialize
// response, and in it.
const (
	CorpusEmail = "Carol.Lee@Example-Corp.io"
	CorpusOrg   = "Zebra Quantum Holdings"
)

// CorpusConfig is the ~/.claude.json that names the corpus account.
const CorpusConfig = `{"oauthAccount":{"emailAddress":"` + CorpusEmail + `","organizationName":"` + CorpusOrg + `"}}`

const pemBody = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu"

// CorpusSecrets are the secrets of the corpus, one or more of each kind.
// They are made up: right in shape, valid nowhere.
var CorpusSecrets = []CorpusSecret{
	{Kind: "anthropic", Text: "sk-ant-api03-Qw3rTy9UiOpAsDfGhJkLzXcVbNm1234567890-_QwErTyUiOpAA"},
	{Kind: "openai-project", Text: "sk-proj-Z9y8X7w6V5u4T3s2R1q0PoNmLkJiHgFeDcBa"},
	{Kind: "openai-legacy", Text: "sk-A1b2C3d4E5f6G7h8I9j0T3BlbkFJK1l2M3n4O5p6Q7r8"},
	{Kind: "aws-access-key", Text: "AKIAZ7Q4M2XW8RT5YB3N"},
	{Kind: "aws-sts-key", Text: "ASIAY3H8K2L9P4Q7W1E5"},
	{Kind: "aws-secret-assign", Text: "aws_secret_access_key = Vq9+T2mLx7Rk4Np8Wd3Zs6Jh1Fc5Gb0Ye2Ua8Io3", Secret: "Vq9+T2mLx7Rk4Np8Wd3Zs6Jh1Fc5Gb0Ye2Ua8Io3"},
	{Kind: "aws-secret-env", Text: "AWS_SECRET_ACCESS_KEY=Hk3/Lp9Qw2Er7Ty5Ui1Op4As8Df6Gh0Jk3Lz7Xc9V", Secret: "Hk3/Lp9Qw2Er7Ty5Ui1Op4As8Df6Gh0Jk3Lz7Xc9V"},
	{Kind: "aws-secret-json", Text: `{"AccessKeyId": "ASIAQ2W3E4R5T6Y7U8I9", "SecretAccessKey": "Mn8/Bv7Cx6Zl5Kj4Hg3Fd2Sa1Qw9Er8Ty7Ui6Op5", "SessionToken": "FwoGZXIvYXdzEJr//////////wEaDH7example9SessTok"}`, Secret: "Mn8/Bv7Cx6Zl5Kj4Hg3Fd2Sa1Qw9Er8Ty7Ui6Op5"},
	{Kind: "stripe-live", Text: "sk_live_51Hq2Rt8Yu7Io6Pa5Sd4Fg3Hj2Kl1"},
	{Kind: "stripe-restricted", Text: "rk_live_51Mn2Bv3Cx4Zl5Kj6Hg7Fd8Sa9Qw0"},
	{Kind: "stripe-test", Text: "sk_test_4eC39HqLyjWDarjtT1zdp7dcXz"},
	{Kind: "jwt", Text: "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjYXJvbCIsImV4cCI6MTk5OTk5OTk5OX0.Sfl9KxwRJSMeKKF2QT4fwpMeJf36POk6yJVadQssw5c"},
	{Kind: "pem-rsa", Text: "-----BEGIN RSA PRIVATE KEY-----\n" + pemBody + "\n-----END RSA PRIVATE KEY-----", Secret: "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"},
	{Kind: "pem-openssh", Text: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----", Secret: "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"},
	{Kind: "pem-in-json", Text: `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi\nJ8yWk3bPq2Lr5Nd7Tf1Hg4\n-----END PRIVATE KEY-----\n", "client_email": "bot@proj.iam.gserviceaccount.com"}`, Secret: "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi"},
	{Kind: "url-https", Text: "https://deploy:Tr0ub4dor-and-3@git.example.org/repo.git", Secret: "Tr0ub4dor-and-3"},
	{Kind: "url-postgres", Text: "postgres://app:pg-S3cr3t-Pw9@db.internal:5432/prod", Secret: "pg-S3cr3t-Pw9"},
	{Kind: "url-mysql", Text: "mysql://root:My5ql-Root-Pw@10.0.0.7/app", Secret: "My5ql-Root-Pw"},
	{Kind: "url-redis", Text: "redis://:R3dis-Auth-Token-77@cache:6379/0", Secret: "R3dis-Auth-Token-77"},
	{Kind: "url-amqp", Text: "amqp://guest:Amqp-Pw-4417@mq.local:5672/", Secret: "Amqp-Pw-4417"},
	{Kind: "url-mongodb", Text: "mongodb+srv://svc:M0ngo-Pw-x81@cluster0.mongodb.net/db", Secret: "M0ngo-Pw-x81"},
	{Kind: "basic-auth", Text: "Authorization: Basic ZGVwbG95OlRyMHViNGRvci1zZWNyZXQ=", Secret: "ZGVwbG95OlRyMHViNGRvci1zZWNyZXQ="},
	{Kind: "name-api-key", Text: "ACME_SERVICE_API_KEY=acmeKey-7f3e9b2c1d", Secret: "acmeKey-7f3e9b2c1d"},
	{Kind: "x-api-key", Text: "x-api-key: xk-live-59d2c7a1b8e4f6", Secret: "xk-live-59d2c7a1b8e4f6"},
	{Kind: "password-assign", Text: "password=CorrectHorse42", Secret: "CorrectHorse42"},
	{Kind: "passwd-yaml", Text: "passwd: Batt3ry-Stap1e", Secret: "Batt3ry-Stap1e"},
	{Kind: "db-password-env", Text: `DB_PASSWORD="Pl@inT3xt-Pw"`, Secret: "Pl@inT3xt-Pw"},
	{Kind: "secret-assign", Text: "client_secret = cs-8g7f6e5d4c3b2a1", Secret: "cs-8g7f6e5d4c3b2a1"},
	{Kind: "token-assign", Text: "HF_TOKEN=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", Secret: "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"},
	{Kind: "npmrc-token", Text: "//registry.npmjs.org/:_authToken=npm_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", Secret: "npm_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"},
	{Kind: "npm-token-env", Text: "NPM_TOKEN=npm_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2", Secret: "npm_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"},
	{Kind: "slack-bot", Text: "xoxb-2048204820-4096409640-QwErTyUiOpAsDfGhJkLzXcVb"},
	{Kind: "slack-user", Text: "xoxp-1234567890-1234567890-1234567890-abcdef0123456789abcdef0123456789"},
	{Kind: "slack-webhook", Text: "https://hooks.slack.com/services/T0ABCDEFG/B0HIJKLMN/QwErTyUiOpAsDfGhJkLzXcVb", Secret: "T0ABCDEFG/B0HIJKLMN/QwErTyUiOpAsDfGhJkLzXcVb"},
	{Kind: "github-pat", Text: "ghp_R2d2C3poBb8Hk4Lm6Np9Qs1Tv3Wx5Yz7Ab9Cd"},
	{Kind: "github-fine-grained", Text: "github_pat_11ABCDEFG0aBcDeFgHiJkL_MnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrSt"},
	{Kind: "github-app", Text: "ghs_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Y"},
	{Kind: "github-oauth", Text: "gho_Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8B"},
	{Kind: "gitlab-pat", Text: "glpat-Xy7Zw8Vu9Ts0Rq1Po2Nm3L"},
	{Kind: "gitlab-runner", Text: "glrt-Ab3Cd4Ef5Gh6Ij7Kl8Mn9O"},
	{Kind: "google-api-key", Text: "AIzaSyD3x4mPl3K3y-Qw3rTy_UiOp1234567890"},
	{Kind: "google-oauth-secret", Text: "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"},
	{Kind: "azure-storage", Text: "DefaultEndpointsProtocol=https;AccountName=acmestore;AccountKey=Zm9vYmFyYmF6cXV4cXV1eA0KZm9vYmFyYmF6cXV4cXV1eA==;EndpointSuffix=core.windows.net", Secret: "Zm9vYmFyYmF6cXV4cXV1eA0KZm9vYmFyYmF6cXV4cXV1eA=="},
	{Kind: "azure-servicebus", Text: "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=Qw3rTyUiOpAsDfGhJkLzXcVbNm1234567890AbCdE=", Secret: "Qw3rTyUiOpAsDfGhJkLzXcVbNm1234567890AbCdE="},
	{Kind: "azure-sas", Text: "https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sr=b&sig=Qw3rTy%2BUiOp%2FAsDfGhJkLzXcVbNm12%3D", Secret: "Qw3rTy%2BUiOp%2FAsDfGhJkLzXcVbNm12%3D"},
	{Kind: "azure-ad-secret", Text: "Xy98Q~AbCdEfGhIjKlMnOpQrStUvWxYz0123456"},
	{Kind: "sendgrid", Text: "SG.Qw3rTyUiOpAsDfGhJkLz.Xc1Vb2Nm3Qw4Er5Ty6Ui7Op8As9Df0GhJkLzXcVbNm1"},
	{Kind: "twilio", Text: "SK0123456789abcdef0123456789abcdef"},
	{Kind: "telegram", Text: "7123456789:AAQw3rTyUiOpAsDfGhJkLzXcVbNm1234567"},
	{Kind: "age", Text: "AGE-SECRET-KEY-1QW3RTYUIOPASDFGHJKLZXCVBNM1234567890QW3RTYUIOPASDFGHJKLZXC"},
	{Kind: "bearer", Text: "Authorization: Bearer tok.Qw3rTy-UiOp_AsDf", Secret: "tok.Qw3rTy-UiOp_AsDf"},
	{Kind: "env-anthropic", Text: CorpusEnvKey},
	{Kind: "user-regex", Text: "ticket CORP-731944-X", Secret: "CORP-731944-X"},
	{Kind: "account-email", Text: "mail " + CorpusEmail, Secret: CorpusEmail},
	{Kind: "account-email-upper", Text: "MAIL " + strings.ToUpper(CorpusEmail), Secret: CorpusEmail},
	{Kind: "account-org", Text: "org " + strings.ToLower(CorpusOrg), Secret: CorpusOrg},
}

// CorpusEnvKey is the ANTHROPIC_API_KEY of the corpus session: a value
// of no known shape, removed because the variable names it.
const CorpusEnvKey = "plain-anthropic-env-value-31337"

// CorpusUserRegex is the --redact expression of the corpus session.
const CorpusUserRegex = `CORP-[0-9]{6}-X`

// CorpusOrdinary are values of a normal session that redaction must keep.
var CorpusOrdinary = []string{
	"9fceb02d0ae598e95dc970b74764c5d2a7e6d2c1",         // a git SHA
	"3f2b8c1e-7d4a-4e9b-a6c5-0b1d2e3f4a5b",             // a UUID
	"aGVsbG8gd29ybGQsIHRoaXMgaXMgbm90IGEgc2VjcmV0Cg==", // base64 of a sentence
	"func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {",
	"for i := 0; i < len(tokens); i++ { total += tokens[i] }",
	"The password field is validated on the server.",
	"git log --oneline -3 && go test ./...",
	"https://github.com/agentjq/agentjq/pull/42",
	"max_tokens: 4096",
}

// corpusText is every corpus secret, one a line.
func corpusText(secrets []CorpusSecret) string {
	var b strings.Builder
	for _, s := range secrets {
		b.WriteString(s.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// escapeSecond JSON-encodes s with the second byte of every line written
// as a \u escape and every / as \/: what a JSON encoder may legally
// write, and a secret's raw bytes no longer show it.
func escapeSecond(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, line := range strings.Split(s, "\n") {
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case i == 1 && c < 0x80:
				fmt.Fprintf(&b, `\u%04x`, c)
			case c == '/':
				b.WriteString(`\/`)
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteString(`\n`)
	}
	b.WriteByte('"')
	return b.String()
}

func jstr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// secretCorpus plays the "secret-corpus" scenario: the secrets before the
// initialize response (stderr, system/init), in it, in assistant text, a
// tool input, a can_use_tool request, a tool result next to ordinary
// values, split by escapes, on non-JSON stdout (plain and \u-escaped),
// as a PEM key over several stderr lines, and inside a 3 MiB line.
func secretCorpus(out io.Writer, readLine func() ([]byte, bool), waitResponse func(string) bool) int {
	return secretCorpusOf(CorpusSecrets, 3<<20, out, readLine, waitResponse)
}

// secretCorpusOf plays secretCorpus with secrets and a line of about
// big bytes; a secret with JSON is also written as the value of a line's
// "data" key.
func secretCorpusOf(secrets []CorpusSecret, big int, out io.Writer, readLine func() ([]byte, bool), waitResponse func(string) bool) int {
	all := corpusText(secrets)
	w := bufio.NewWriterSize(out, 1<<20)
	defer w.Flush()
	emit := func(s string) {
		w.WriteString(s)
		w.WriteByte('\n')
		w.Flush()
	}
	for _, s := range secrets {
		for _, l := range strings.Split(s.Text, "\n") {
			fmt.Fprintln(os.Stderr, "warn: "+l)
		}
	}
	emit(`{"type":"system","subtype":"init","session_id":"c1","claude_code_version":"2.1.328","note":` + jstr("account "+strings.ToUpper(CorpusEmail)+" of "+strings.ToUpper(CorpusOrg)) + `}`)
	for {
		line, ok := readLine()
		if !ok {
			return 0
		}
		m, _ := parseMessage(line)
		if m.Type == "control_request" && m.Request.Subtype == "initialize" {
			emit(`{"type":"control_response","response":{"subtype":"success","request_id":` + jstr(m.RequestID) +
				`,"response":{"commands":[{"name":"deploy","description":` + jstr(all) + `}],"account":{"email":` + jstr(CorpusEmail) +
				`,"organization":` + jstr(CorpusOrg) + `,"tokenSource":"none"}}}}`)
			continue
		}
		if m.Type == "user" {
			break
		}
	}
	emit(`{"type":"assistant","message":{"content":[{"type":"text","text":` + jstr(all) + `}]}}`)
	emit(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"tu1","name":"Bash","input":{"command":` + jstr(all) + `}}]}}`)
	emit(`{"type":"control_request","request_id":"perm-1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":` + jstr(all) + `},"tool_use_id":"tu1"}}`)
	if !waitResponse("perm-1") {
		return 1
	}
	ordinary := strings.Join(CorpusOrdinary, "\n")
	emit(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":` + jstr(ordinary+"\n"+all) + `}]}}`)
	emit(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu2","content":` + jstr(ordinary) + `}]}}`)
	emit(`{"type":"assistant","message":{"content":[{"type":"text","text":` + escapeSecond(all) + `}]}}`)
	for _, s := range secrets {
		if len(s.JSON) > 0 {
			emit(`{"type":"system","subtype":"corpus","data":` + string(s.JSON) + `}`)
		}
		one := strings.ReplaceAll(s.Text, "\n", `\n`)
		emit("plain text " + one)
		e := escapeSecond(s.Text)
		emit("escaped " + e[1:len(e)-1])
	}
	emit("-----BEGIN EC PRIVATE KEY-----")
	emit("MHcCAQEEIBkgW3r9PMkkBv2h3dLZNfUwVdH0zJmK8eTqXpLsYfOaoAoGCCqGSM49")
	emit("AwEHoUQDQgAEq3oR0cLBaVdmFbYx1uNh7e2Zj8k5VwXyTfPq9sOp4nU2mLrAaBcD")
	emit("-----END EC PRIVATE KEY-----")
	filler := strings.Repeat("lorem ipsum dolor sit amet ", big/27/2)
	emit(`{"type":"assistant","message":{"content":[{"type":"text","text":` + jstr(filler+all+filler) + `}]}}`)
	emit(`{"type":"result","subtype":"success","is_error":false,"result":"done","num_turns":1}`)
	for {
		if _, ok := readLine(); !ok {
			return 0
		}
	}
}

// CorpusPEMLines are the body lines of the PEM key written line by line
// on stdout.
var CorpusPEMLines = []string{
	"MHcCAQEEIBkgW3r9PMkkBv2h3dLZNfUwVdH0zJmK8eTqXpLsYfOaoAoGCCqGSM49",
	"AwEHoUQDQgAEq3oR0cLBaVdmFbYx1uNh7e2Zj8k5VwXyTfPq9sOp4nU2mLrAaBcD",
}
