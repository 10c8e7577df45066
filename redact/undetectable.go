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
