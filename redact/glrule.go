package redact

// glRule is one rule of gitleaks' rule set as gengitleaks writes it
// (gitleaks_rules.go).
type glRule struct {
	id, desc string
	regex    string
	// path: the rule applies to files whose path matches; a recording has
	// no path, so such a rule is left out (GitleaksSkipped).
	path string
	// group is the capture group that is the secret (0: the first
	// non-empty group, or the whole match).
	group   int
	entropy float64
	// keywords, lower case: one of them is in every match.
	keywords []string
	// required: a composite rule, reported only with findings of these
	// rules nearby.
	required []string
	allow    []glAllow
	// code (agentjq's rules only): the secret is the value of an
	// assignment; one that is code is no finding (codeValue).
	code bool
	// assign (agentjq's rules only): an operator follows the keyword in
	// every match, as in gitleaks' NAME = value template (operatorAfter).
	assign bool
}

// glAllow is one of gitleaks' allowlists: a finding is allowed (kept as
// it is) when its target matches a regex or the secret holds a stopword;
// with and, when every criterion holds (and a recording has no path or
// commit to satisfy those).
type glAllow struct {
	and       bool
	target    string // "": the secret; "match"; "line"
	paths     int
	commits   int
	regexes   []string
	stopwords []string
}
