package daemon

import (
	"encoding/json"
	"os"
	"slices"

	"github.com/agentjq/agentjq/approve"
)

// readAllowlist reads the allowlist policy file's allow rules; a missing
// file (create true) is written as {"allow":[],"default":"ask"}.
func readAllowlist(path string, create bool) ([]string, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) && create {
		return nil, writeAllowlist(path, nil, map[string]json.RawMessage{})
	}
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	if _, err := approve.ParseRulesFile(path, b, home); err != nil {
		return nil, err
	}
	var m struct {
		Allow []string `json:"allow"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m.Allow, nil
}

// writeAllowlist writes rules as the file's allow list, keeping its other
// members, after validating the result as a --policy file.
func writeAllowlist(path string, allow []string, rest map[string]json.RawMessage) error {
	if allow == nil {
		allow = []string{}
	}
	a, _ := json.Marshal(allow)
	rest["allow"] = a
	if _, ok := rest["default"]; !ok {
		rest["default"] = json.RawMessage(`"ask"`)
	}
	b, _ := json.MarshalIndent(rest, "", "  ")
	b = append(b, '\n')
	home, _ := os.UserHomeDir()
	if _, err := approve.ParseRulesFile(path, b, home); err != nil {
		return rpcErr(CodeInvalidParams, err.Error(), nil)
	}
	return writeFile0600(path, b)
}

// allowlistEdit adds and removes allow rules.
func (s *Server) allowlistEdit(add, remove []string) error {
	if s.opts.Allowlist == "" {
		return rpcErr(CodeInvalidParams, "the daemon has no allowlist policy file (serve --allowlist FILE)", nil)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rest := map[string]json.RawMessage{}
	if b, err := os.ReadFile(s.opts.Allowlist); err == nil {
		if err := json.Unmarshal(b, &rest); err != nil {
			return rpcErr(CodeInternal, s.opts.Allowlist+": "+err.Error(), nil)
		}
	}
	var allow []string
	if raw, ok := rest["allow"]; ok {
		_ = json.Unmarshal(raw, &allow)
	}
	for _, r := range add {
		if !slices.Contains(allow, r) {
			allow = append(allow, r)
		}
	}
	for _, r := range remove {
		if i := slices.Index(allow, r); i >= 0 {
			allow = slices.Delete(allow, i, i+1)
		} else {
			return rpcErr(CodeNotFound, "no allow rule "+r, nil)
		}
	}
	return writeAllowlist(s.opts.Allowlist, allow, rest)
}
