package daemon

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/jsonrpc"
)

func create(ctx context.Context, c *client, p CreateParams) (any, error) {
	if p.Title != "" {
		if err := checkTitle(p.Title); err != nil {
			return nil, err
		}
	}
	s, err := c.srv.startSession(p)
	if err != nil {
		return nil, err
	}
	if t := strings.TrimSpace(p.Title); t != "" {
		s.setTitle(t)
	}
	return CreateResult{SessionID: s.ID, Recording: s.path}, nil
}

func list(ctx context.Context, c *client, p ListParams) (any, error) {
	c.srv.mu.Lock()
	var out []SessionInfo
	seen := map[string]bool{}
	var live []*Session
	for _, s := range c.srv.sessions {
		live = append(live, s)
	}
	c.srv.mu.Unlock()
	for _, s := range live {
		out = append(out, s.info())
		seen[s.ID] = true
	}
	entries, _ := os.ReadDir(filepath.Join(c.srv.opts.Home, "sessions"))
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".rec")
		if !ok || seen[id] || !validID(id) {
			continue
		}
		if s, err := c.srv.session(id); err == nil {
			out = append(out, s.info())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created < out[j].Created })
	out = slices.DeleteFunc(out, func(si SessionInfo) bool {
		return p.Workdir != "" && filepath.Clean(si.Workdir) != filepath.Clean(p.Workdir) || p.Live && si.Ended
	})
	if len(out) == 0 {
		out = []SessionInfo{}
	}
	return ListResult{Sessions: out}, nil
}

// withParams makes a handler of a method that takes params of type P:
// decoded strictly (unknown fields fail invalid_params) before f runs.
func withParams[P any](f func(ctx context.Context, c *client, p P) (any, error)) handlerFunc {
	return func(ctx context.Context, c *client, req *jsonrpc.Request) (any, error) {
		var p P
		if err := req.DecodeParams(&p); err != nil {
			return nil, err
		}
		return f(ctx, c, p)
	}
}

// sessionParams are the params of a method on one session.
type sessionParams interface{ sessionID() string }

func (p SessionRef) sessionID() string       { return p.SessionID }
func (p SetTitleParams) sessionID() string   { return p.SessionID }
func (p SteerParams) sessionID() string      { return p.SessionID }
func (p ForkParams) sessionID() string       { return p.SessionID }
func (p SubscribeParams) sessionID() string  { return p.SessionID }
func (p ResumeParams) sessionID() string     { return p.SessionID }
func (p PromptParams) sessionID() string     { return p.SessionID }
func (p SetModeParams) sessionID() string    { return p.SessionID }
func (p CommandRunParams) sessionID() string { return p.SessionID }
func (p BackendSetParams) sessionID() string { return p.SessionID }

// onSession makes a handler of a method on the session its params name
// (not_found when there is none); a driving method (live) fails
// session_ended on an ended one, which stays readable.
func onSession[P sessionParams](live bool, f func(ctx context.Context, c *client, s *Session, p P) (any, error)) handlerFunc {
	return withParams(func(ctx context.Context, c *client, p P) (any, error) {
		if p.sessionID() == "" {
			return nil, rpcErr(CodeInvalidParams, "sessionId is required", nil)
		}
		s, err := c.srv.session(p.sessionID())
		if err != nil {
			return nil, err
		}
		if live && (s.readOnly || s.ended()) {
			return nil, rpcErr(CodeSessionEnded, "session "+s.ID+" has ended", nil)
		}
		return f(ctx, c, s, p)
	})
}

func subscribe(ctx context.Context, c *client, s *Session, p SubscribeParams) (any, error) {
	after := s.lastSeq()
	if p.AfterSeq != nil {
		after = *p.AfterSeq
	}
	if after < 0 {
		return nil, rpcErr(CodeInvalidParams, "afterSeq must not be negative", nil)
	}
	return jsonrpc.Async(func() (any, error) { return s.subscribe(ctx, c, after, p.Kinds, p.Filter) }), nil
}

func resume(ctx context.Context, c *client, s *Session, p ResumeParams) (any, error) {
	if p.AfterSeq < 0 {
		return nil, rpcErr(CodeInvalidParams, "afterSeq must not be negative", nil)
	}
	return jsonrpc.Async(func() (any, error) { return s.subscribe(ctx, c, p.AfterSeq, nil, "") }), nil
}

func unsubscribe(ctx context.Context, c *client, s *Session, p SessionRef) (any, error) {
	c.mu.Lock()
	sub := c.subs[s.ID]
	delete(c.subs, s.ID)
	c.mu.Unlock()
	if sub == nil {
		return nil, rpcErr(CodeNotFound, "not subscribed to "+s.ID, nil)
	}
	s.unsubscribe(sub)
	return Empty{}, nil
}

func prompt(ctx context.Context, c *client, s *Session, p PromptParams) (any, error) {
	if (p.Text == "") == (p.Message == nil) {
		return nil, rpcErr(CodeInvalidParams, "give text or message, not both", nil)
	}
	seq, err := s.turn(p.Text, p.Message)
	if err != nil {
		return nil, err
	}
	return PromptResult{FirstSeq: seq}, nil
}

func setTitle(ctx context.Context, c *client, s *Session, p SetTitleParams) (any, error) {
	if err := checkTitle(p.Title); err != nil {
		return nil, err
	}
	s.setTitle(strings.TrimSpace(p.Title))
	return Empty{}, nil
}

func checkTitle(title string) error {
	t := strings.TrimSpace(title)
	if t == "" || strings.ContainsAny(t, "\n\r") || utf8.RuneCountInString(t) > 200 {
		return rpcErr(CodeInvalidParams, "title must be one line of 1 to 200 characters", nil)
	}
	return nil
}

func fork(ctx context.Context, c *client, s *Session, p ForkParams) (any, error) {
	if p.AtMessage != "" && !protocol.IsUUID(p.AtMessage) {
		// It becomes claude's argument: only a message uuid is taken.
		return nil, rpcErr(CodeInvalidParams, "atMessage must be a message uuid", nil)
	}
	if p.Title != "" {
		if err := checkTitle(p.Title); err != nil {
			return nil, err
		}
	}
	info := s.info()
	if info.AgentSessionID == "" {
		return nil, rpcErr(CodeInvalidParams, "session "+s.ID+" has no claude session to fork yet (its agent has not started)", nil)
	}
	cp := s.params
	if cp.Workdir == "" {
		cp = CreateParams{Workdir: info.Workdir, Agent: info.Agent}
	}
	cp.Args = append(withoutResume(cp.Args), "--resume", info.AgentSessionID, "--fork-session")
	if p.AtMessage != "" {
		cp.Args = append(cp.Args, "--resume-session-at", p.AtMessage)
	}
	cp.Title = strings.TrimSpace(p.Title)
	if cp.Title == "" && info.Title != "" {
		cp.Title = info.Title + " (fork)"
		if r := []rune(cp.Title); len(r) > 200 {
			cp.Title = string(r[:199]) + "…"
		}
	}
	return create(ctx, c, cp)
}

// withoutResume drops a --resume/--continue/--fork-session the source was
// started with: the fork names its own.
func withoutResume(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, hasVal := strings.Cut(args[i], "=")
		switch name {
		case "--resume", "-r":
			if !hasVal && i+1 < len(args) {
				i++
			}
			continue
		case "--resume-session-at":
			if !hasVal && i+1 < len(args) {
				i++
			}
			continue
		case "--continue", "-c", "--fork-session":
			continue
		}
		out = append(out, args[i])
	}
	return out
}

func steer(ctx context.Context, c *client, s *Session, p SteerParams) (any, error) {
	if p.Text == "" {
		return nil, rpcErr(CodeInvalidParams, "text is required", nil)
	}
	return jsonrpc.Async(func() (any, error) { return s.steer(ctx, p.Text) }), nil
}

func interrupt(ctx context.Context, c *client, s *Session, p SessionRef) (any, error) {
	return Empty{}, s.interrupt()
}

func setMode(ctx context.Context, c *client, s *Session, p SetModeParams) (any, error) {
	if !validMode(p.Mode) {
		return nil, rpcErr(CodeModeDenied, "unknown permission mode "+p.Mode, nil)
	}
	return Empty{}, s.control("set_permission_mode", map[string]any{"mode": p.Mode})
}

func compact(ctx context.Context, c *client, s *Session, p SessionRef) (any, error) {
	seq, err := s.turn("/compact", nil)
	if err != nil {
		return nil, err
	}
	return PromptResult{FirstSeq: seq}, nil
}

func closeSession(ctx context.Context, c *client, s *Session, p SessionRef) (any, error) {
	s.close()
	return Empty{}, nil
}

func deleteSaved(ctx context.Context, c *client, s *Session, p SessionRef) (any, error) {
	if !s.readOnly && !s.ended() {
		return nil, rpcErr(CodeInvalidParams, "session "+s.ID+" is running; close it first", nil)
	}
	if err := os.Remove(c.srv.recordingPath(s.ID)); err != nil {
		return nil, rpcErr(CodeNotFound, err.Error(), nil)
	}
	c.srv.mu.Lock()
	delete(c.srv.sessions, s.ID)
	c.srv.mu.Unlock()
	return Empty{}, nil
}

func commandList(ctx context.Context, c *client, s *Session, p SessionRef) (any, error) {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	return CommandListResult{Commands: append([]CommandInfo{}, s.commands...)}, nil
}

func commandRun(ctx context.Context, c *client, s *Session, p CommandRunParams) (any, error) {
	name := strings.TrimPrefix(p.Command, "/")
	if name == "" || strings.ContainsAny(name, " \n") {
		return nil, rpcErr(CodeInvalidParams, "command must be a slash command's name", nil)
	}
	text := "/" + name
	if p.Args != "" {
		text += " " + p.Args
	}
	seq, err := s.turn(text, nil)
	if err != nil {
		return nil, err
	}
	return PromptResult{FirstSeq: seq}, nil
}

func toolList(ctx context.Context, c *client, s *Session, p SessionRef) (any, error) {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	return ToolListResult{Tools: append([]string{}, s.tools...)}, nil
}

func backendSet(ctx context.Context, c *client, s *Session, p BackendSetParams) (any, error) {
	if p.Model == "" {
		return nil, rpcErr(CodeInvalidParams, "model is required", nil)
	}
	return Empty{}, s.control("set_model", map[string]any{"model": p.Model})
}

func approvalList(ctx context.Context, c *client, p ApprovalListParams) (any, error) {
	out := c.srv.approvals.list(p.SessionID)
	if out == nil {
		out = []ApprovalInfo{}
	}
	return ApprovalListResult{Approvals: out}, nil
}

func approvalRespond(ctx context.Context, c *client, p RespondParams) (any, error) {
	return c.srv.approvals.respond(p.ID, c.who(), Decision{Decision: p.Decision, Scope: p.Scope, Message: p.Message, UpdatedInput: p.UpdatedInput})
}

func allowlistResult(s *Server) (any, error) {
	if s.opts.Allowlist == "" {
		return nil, rpcErr(CodeInvalidParams, "the daemon has no allowlist policy file (serve --allowlist FILE)", nil)
	}
	allow, err := readAllowlist(s.opts.Allowlist, false)
	if err != nil {
		return nil, rpcErr(CodeInternal, err.Error(), nil)
	}
	if allow == nil {
		allow = []string{}
	}
	return AllowlistResult{Policy: s.opts.Allowlist, Allow: allow}, nil
}

func allowlistList(ctx context.Context, c *client, p Empty) (any, error) {
	return allowlistResult(c.srv)
}

func allowlistAdd(ctx context.Context, c *client, p AllowlistParams) (any, error) {
	if strings.TrimSpace(p.Rule) == "" {
		return nil, rpcErr(CodeInvalidParams, "rule is required", nil)
	}
	if err := c.srv.allowlistEdit([]string{p.Rule}, nil); err != nil {
		return nil, err
	}
	return allowlistResult(c.srv)
}

func allowlistRemove(ctx context.Context, c *client, p AllowlistParams) (any, error) {
	if err := c.srv.allowlistEdit(nil, []string{p.Rule}); err != nil {
		return nil, err
	}
	return allowlistResult(c.srv)
}
