package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

// builtinCases: for every built-in pattern, text that holds a secret of
// its kind, and the part that must go. The values are made up.
var builtinCases = []struct{ kind, text, secret string }{
	{"private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n-----END RSA PRIVATE KEY-----", "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu"},
	{"private-key", `{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvgIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"}`, "MIIEvgIBADANBgkqhkiG9w0BAQEFAASC"},
	{"private-key", "cut short: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU"},
	{"anthropic-api-key", "key sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3", "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3"},
	{"api-key", "OPENAI sk-proj-Ab12Cd34Ef56Gh78Ij90Kl", "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl"},
	{"stripe-access-token", "stripe rk_live_51Ab2Cd3Ef4Gh5Ij6", "rk_live_51Ab2Cd3Ef4Gh5Ij6"},
	{"stripe-access-token", "stripe sk_test_51Ab2Cd3Ef4Gh5Ij6", "sk_test_51Ab2Cd3Ef4Gh5Ij6"},
	{"aws-access-key", "id AKIA2B3C4D5E6F7G8H9J", "AKIA2B3C4D5E6F7G8H9J"},
	{"aws-secret-key", `aws_secret_access_key=Ab1/Cd2+Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3`, "Ab1/Cd2+Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3"},
	{"aws-secret-key", `"SecretAccessKey": "Ab1/Cd2+Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3"`, "Ab1/Cd2+Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3"},
	{"github-token", "gh auth ghu_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2", "ghu_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2"},
	{"github-token", "github_pat_11AAAAAAA0bbbbbbbbbbbb_ccccccccccccccccccccccccccccc", "github_pat_11AAAAAAA0bbbbbbbbbbbb_ccccccccccccccccccccccccccccc"},
	{"gitlab-token", "glpat-Ab1Cd2Ef3Gh4Ij5Kl6Mn7", "glpat-Ab1Cd2Ef3Gh4Ij5Kl6Mn7"},
	{"slack-bot-token", "xoxb-1111111111-2222222222-AbCdEfGhIjKl", "xoxb-1111111111-2222222222-AbCdEfGhIjKl"},
	{"slack-app-token", "xapp-1-A0BCDEFGH-1234567890-abcdef", "xapp-1-A0BCDEFGH-1234567890-abcdef"},
	{"slack-webhook", "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX", "T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX"},
	{"google-api-key", "AIzaSyAbCdEfGhIjKlMnOpQrStUvWxYz0123456", "AIzaSyAbCdEfGhIjKlMnOpQrStUvWxYz0123456"},
	{"google-oauth", "ya29.a0AfH6SMBabcdefghijklmnopqrstuvwxyz", "ya29.a0AfH6SMBabcdefghijklmnopqrstuvwxyz"},
	{"google-oauth", "GOCSPX-AbCdEfGhIjKlMnOpQrStUvWxYz12", "GOCSPX-AbCdEfGhIjKlMnOpQrStUvWxYz12"},
	{"secret", "NPM_TOKEN=npm_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2", "npm_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2"},
	{"secret", "//registry.npmjs.org/:_authToken=npm_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2", "npm_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2"},
	{"secret", "client_secret = cs-123456789", "cs-123456789"},
	{"secret", "SECRET_KEY: sk-0123456789", "sk-0123456789"},
	{"pypi-token", "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5ejAxMjM0", "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5ejAxMjM0"},
	{"huggingface-token", "api_org_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "api_org_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"},
	{"bearer-token", "Authorization: Bearer abc.def-ghi_jkl", "abc.def-ghi_jkl"},
	{"jwt", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk", "eyJzdWIiOiIxMjM0In0"},
	{"sendgrid-key", "SG.AbCdEfGhIjKlMnOpQr.StUvWxYz0123456789AbCd", "SG.AbCdEfGhIjKlMnOpQr.StUvWxYz0123456789AbCd"},
	{"twilio-api-key", "SKabcdef0123456789abcdef0123456789", "SKabcdef0123456789abcdef0123456789"},
	{"postman-api-token", "PMAK-0123456789abcdef01234567-0123456789abcdef0123456789abcdef01", "PMAK-0123456789abcdef01234567-0123456789abcdef0123456789abcdef01"},
	{"grafana-token", "glsa_AbCdEfGhIjKlMnOpQrStUvWxYz012345_0123abcd", "glsa_AbCdEfGhIjKlMnOpQrStUvWxYz012345_0123abcd"},
	{"age-secret-key", "AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ", "AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ"},
	{"1password-token", "A3-ABC123-DEF456GHI78-JKL90-MNO12-PQR34", "A3-ABC123-DEF456GHI78-JKL90-MNO12-PQR34"},
	{"telegram-bot-token", "123456789:AAAbCdEfGhIjKlMnOpQrStUvWxYz0123456", "123456789:AAAbCdEfGhIjKlMnOpQrStUvWxYz0123456"},
	{"square-token", "EAAAEAbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvWx", "EAAAEAbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvWx"},
	{"cloud-key", "LTAIAbCdEfGhIjKlMnOpQrSt", "LTAIAbCdEfGhIjKlMnOpQrSt"},
	{"azure-client-secret", "abc8Q~AbCdEfGhIjKlMnOpQrStUvWxYz0123456", "abc8Q~AbCdEfGhIjKlMnOpQrStUvWxYz0123456"},
	{"azure-key", "AccountName=x;AccountKey=AbCdEfGhIjKlMnOpQrStUvWx==;EndpointSuffix=core", "AbCdEfGhIjKlMnOpQrStUvWx=="},
	{"url-password", "psql postgresql://admin:hunter2hunter2@db:5432/x", "hunter2hunter2"},
	{"url-password", "amqps://user:Rabbit-Pw-9@mq/", "Rabbit-Pw-9"},
	{"basic-auth", `"Authorization": "Basic dXNlcjpwYXNzd29yZA=="`, "dXNlcjpwYXNzd29yZA=="},
	{"secret", "export MY_SERVICE_API_KEY=abcdef123456", "abcdef123456"},
	{"secret", "password = 'p4ss-w0rd'", "p4ss-w0rd"},
	{"secret", "Passwd: letmein99", "letmein99"},
	{"secret", "CLIENT_SECRET=cs-123456789", "cs-123456789"},
	{"secret", `{"access_token": "at-0123456789"}`, "at-0123456789"},
	{"secret", "gitlab_token: glXtok99887766", "glXtok99887766"},
	{"secret", "private_key=pk0123456789", "pk0123456789"},
	{"secret", "x-api-key: 0123456789abcdef", "0123456789abcdef"},
}

// TestBuiltinKinds: every built-in pattern has a case, and each case's
// secret is gone from the text, from a JSON line holding it (raw and with
// a \u escape) and from a non-JSON line; the rest of the text is kept.
func TestBuiltinKinds(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range builtinCases {
		covered[c.kind] = true
	}
	for _, p := range builtinPatterns {
		if !covered[p.kind] {
			t.Errorf("no case for the built-in pattern %s", p.kind)
		}
	}
	r, err := NewRedactor(RedactSpec{Builtin: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	slow := slowRedactor(r)
	for _, c := range builtinCases {
		got := r.String(c.text)
		if strings.Contains(got, c.secret) {
			t.Errorf("%s: the secret survived: %q", c.kind, got)
		}
		if !strings.Contains(got, Placeholder(c.kind)) {
			t.Errorf("%s: no %s in %q", c.kind, Placeholder(c.kind), got)
		}
		enc, _ := json.Marshal(c.text)
		escaped := strings.Replace(string(enc), c.secret[:1], `\u00`+hex2(c.secret[0]), 1)
		for _, line := range []string{`{"t":` + string(enc) + `}`, `{"t":` + escaped + `}`} {
			out := r.Line(protocol.DirOut, []byte(line))
			if !json.Valid(out) {
				t.Errorf("%s: invalid JSON %s", c.kind, out)
			}
			var v struct{ T string }
			json.Unmarshal(out, &v)
			if strings.Contains(v.T, c.secret) || bytes.Contains(out, []byte(c.secret)) {
				t.Errorf("%s: the secret survived in %s", c.kind, out)
			}
			if want := slow.Line(protocol.DirOut, []byte(line)); !bytes.Equal(out, want) {
				t.Errorf("%s: the hints disagree with the patterns:\n fast %s\n slow %s", c.kind, out, want)
			}
		}
		if out := r.Line(protocol.DirErr, []byte("stderr: "+strings.ReplaceAll(c.text, "\n", `\n`))); bytes.Contains(out, []byte(c.secret)) {
			t.Errorf("%s: the secret survived on a text line: %s", c.kind, out)
		}
	}
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// TestOrdinaryTextSurvives: what a normal session is made of stays byte
// for byte: a redact-everything implementation fails here.
func TestOrdinaryTextSurvives(t *testing.T) {
	r, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
	for _, s := range []string{
		"commit 9fceb02d0ae598e95dc970b74764c5d2a7e6d2c1",
		"id 3f2b8c1e-7d4a-4e9b-a6c5-0b1d2e3f4a5b",
		"aGVsbG8gd29ybGQsIHRoaXMgaXMgbm90IGEgc2VjcmV0Cg==",
		"func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {",
		"max_tokens: 4096, input_tokens=12",
		"The password field is validated; a secretary keeps the tokens.",
		"see https://github.com/agentjq/agentjq/pull/42 and mailto:someone@example.com",
		"token = getToken()",
		"password: ${DB_PASSWORD}",
		"SKIP the basic understanding of bearer bonds",
		"ssh git@github.com:agentjq/agentjq.git",
		`{"apiKeySource":"ANTHROPIC_API_KEY","tokenSource":"none"}`,
	} {
		if got := r.String(s); got != s {
			t.Errorf("ordinary text changed:\n %s\n %s", s, got)
		}
	}
}

// TestPEMAcrossTextLines: a key written line by line on stderr loses its
// body lines; the lines after END are kept.
func TestPEMAcrossTextLines(t *testing.T) {
	r, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
	lines := []string{"-----BEGIN EC PRIVATE KEY-----", "MHcCAQEEIBkgW3r9PMkkBv2h3dLZNfUw", "AwEHoUQDQgAEq3oR0cLBaVdmFbYx1uNh", "-----END EC PRIVATE KEY-----", "after the key"}
	var got []string
	for _, l := range lines {
		got = append(got, string(r.Line(protocol.DirErr, []byte(l))))
	}
	joined := strings.Join(got, "\n")
	if strings.Contains(joined, "MHcCAQ") || strings.Contains(joined, "AwEHoU") {
		t.Errorf("the key's body survived:\n%s", joined)
	}
	if got[4] != "after the key" || !strings.Contains(got[3], "-----END") {
		t.Errorf("lines after the key changed:\n%s", joined)
	}
	// The echo keeps its own state. (A body's first line, MHcCAQEEI...,
	// is a key's DER header and goes by its own shape: a later line is
	// what the state alone would take.)
	if out := string(r.Text([]byte("AwEHoUQDQgAEq3oR0cLBaVdmFbYx1uNh"))); out != "AwEHoUQDQgAEq3oR0cLBaVdmFbYx1uNh" {
		t.Errorf("a text line after the key was taken for its body: %s", out)
	}
}

// TestRedactExpressionLeavesTheHeader: the text of --redact EXPR goes from
// the header's argv, and the spec the header stores keeps only the count.
func TestRedactExpressionLeavesTheHeader(t *testing.T) {
	r, err := NewRedactor(RedactSpec{Builtin: true, Regex: []string{`hunter[0-9]`}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{`--redact=hunter[0-9]`, `hunter[0-9]`} {
		if got := r.String(arg); strings.Contains(got, "hunter") {
			t.Errorf("argv %q kept as %q", arg, got)
		}
	}
	if s := r.Spec(); len(s.Regex) != 0 || s.RegexCount != 1 {
		t.Errorf("header spec %+v", s)
	}
}

// TestAccountInAnyCase: the account is removed in any letter case, from
// before the initialize response when the configuration named it.
func TestAccountInAnyCase(t *testing.T) {
	r, _ := NewRedactor(RedactSpec{Builtin: true}, nil)
	r.LearnAccount(AccountFromConfig([]byte(`{"oauthAccount":{"emailAddress":"Dana@Example.org","organizationName":"Blue Heron Labs"}}`)))
	for _, s := range []string{"mail dana@example.org", "MAIL DANA@EXAMPLE.ORG", "org BLUE HERON LABS", "org blue heron labs"} {
		if got := r.String(s); strings.Contains(strings.ToLower(got), "dana@") || strings.Contains(strings.ToLower(got), "heron") {
			t.Errorf("%q kept as %q", s, got)
		}
		line := `{"type":"system","subtype":"init","note":"` + s + `"}`
		if got := r.Line(protocol.DirOut, []byte(line)); bytes.Contains(bytes.ToLower(got), []byte("dana@")) || bytes.Contains(bytes.ToLower(got), []byte("heron")) {
			t.Errorf("%s kept as %s", line, got)
		}
	}
}

// TestSecretNamedKeys: in JSON the name and the secret are two strings
// ({"password": "..."}, a tool input or a config file read by the agent):
// the value of a key that names a secret goes whole, whatever its shape;
// a reference, a short word, a number or a key of another name stays. (A
// key named only "secret" or "credentials" is judged so only when the line
// is looked at for another reason: the pre-filter has no rare byte for
// those words; see the package comment.)
func TestSecretNamedKeys(t *testing.T) {
	r, err := NewRedactor(RedactSpec{Builtin: true}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ line, gone string }{
		{`{"type":"assistant","message":{"content":[{"type":"tool_use","input":{"password":"hunter2xyz"}}]}}`, "hunter2xyz"},
		{`{"input":{"db_password" : "s3cr3t value!"}}`, "s3cr3t value!"},
		{`{"config":{"openai_api_key":"Zm9vYmFyYmF6"}}`, "Zm9vYmFyYmF6"},
		{`{"env":{"AUTH_TOKEN":"abc.def.ghi"}}`, "abc.def.ghi"},
		{`{"creds":{"PASSWD":"user:pass-word"}}`, "user:pass-word"},
	} {
		got := string(r.Line(protocol.DirOut, []byte(tc.line)))
		if strings.Contains(got, tc.gone) || !json.Valid([]byte(got)) {
			t.Errorf("%s -> %s", tc.line, got)
		}
	}
	for _, keep := range []string{
		`{"usage":{"output_tokens":12,"input_tokens":3}}`,
		`{"input":{"password":"$DB_PASSWORD"}}`,
		`{"input":{"token":"abc"}}`,
		`{"input":{"tokenizer":"cl100k_base"}}`,
		`{"a":["password","visible-value"]}`,
	} {
		if got := string(r.Line(protocol.DirOut, []byte(keep))); got != keep {
			t.Errorf("%s -> %s", keep, got)
		}
	}
}
