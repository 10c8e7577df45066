package acp

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/jsonrpc"
	"github.com/agentjq/agentjq/recording"
)

// recorded is what the recordings of one session say about it: enough to
// list it and to take it up again in a new agentjq process.
type recorded struct {
	ID      string
	Cwd     string
	Title   string    // the first user turn's text, one line
	Updated time.Time // the last segment's modification time
	// Turns counts the user turns sent to claude. With none, claude has
	// no conversation under the id (it writes its transcript with the
	// first turn), so the session is started afresh with that id rather
	// than resumed.
	Turns int
	// Mode is the permission mode claude was last in: its init lines,
	// and each set_permission_mode it accepted ("" when none is known).
	Mode string
}

// readRecorded reads the segments of session id in dir.
func readRecorded(dir, id string) (recorded, error) {
	r := recorded{ID: id}
	for _, seg := range segments(dir, id) {
		if st, err := os.Stat(seg); err == nil && st.ModTime().After(r.Updated) {
			r.Updated = st.ModTime()
		}
		if err := r.read(seg); err != nil {
			return r, err
		}
	}
	return r, nil
}

func (r *recorded) read(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	rd, h, err := recording.NewReader(f, file)
	if err != nil {
		return err
	}
	if r.Cwd == "" {
		r.Cwd = h.Cwd
	}
	modes := map[string]string{} // set_permission_mode request id → mode
	for {
		e, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			// A segment cut short (agentjq was killed) is read as far as
			// it goes.
			return nil
		}
		var m struct {
			Type      string          `json:"type"`
			Subtype   string          `json:"subtype"`
			RequestID string          `json:"request_id"`
			Mode      string          `json:"permissionMode"`
			Message   json.RawMessage `json:"message"`
			Request   struct {
				Subtype string `json:"subtype"`
				Mode    string `json:"mode"`
			} `json:"request"`
			Response struct {
				Subtype   string `json:"subtype"`
				RequestID string `json:"request_id"`
			} `json:"response"`
		}
		if json.Unmarshal(e.Msg, &m) != nil {
			continue
		}
		switch {
		case e.Dir == protocol.DirIn && m.Type == protocol.TypeUser:
			r.Turns++
			if r.Title == "" {
				r.Title = title(m.Message)
			}
		case e.Dir == protocol.DirIn && m.Type == protocol.TypeControlRequest && m.Request.Subtype == "set_permission_mode":
			modes[m.RequestID] = m.Request.Mode
		case e.Dir == protocol.DirOut && m.Type == protocol.TypeControlResp && m.Response.Subtype == "success" && modes[m.Response.RequestID] != "":
			r.Mode = modes[m.Response.RequestID]
		case e.Dir == protocol.DirOut && m.Type == "system" && m.Subtype == "init" && m.Mode != "":
			r.Mode = m.Mode
		}
	}
}

// title is a user turn's text as one line of at most 80 characters.
func title(raw json.RawMessage) string {
	var s string
	for _, u := range (&Mapper{}).userTurn(raw) {
		if u.Content != nil && u.Content.Type == "text" {
			s += u.Content.Text + " "
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}

// recordedIDs are the sessions recorded in dir.
func recordedIDs(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.ndjson"))
	seen := map[string]bool{}
	var ids []string
	for _, f := range files {
		id, _, _ := strings.Cut(filepath.Base(f), ".")
		if protocol.IsUUID(id) && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// list is session/list: the recorded sessions (in cwd, when given), the
// most recently active first, titled by their first prompt.
func (a *Agent) list(p listSessionsRequest) (any, error) {
	if a.opts.RecordDir == "" {
		return nil, errCode(jsonrpc.CodeMethodNotFound, "session/list needs agentjq acp --record-dir")
	}
	var all []recorded
	for _, id := range recordedIDs(a.opts.RecordDir) {
		r, err := readRecorded(a.opts.RecordDir, id)
		if err != nil || !filepath.IsAbs(r.Cwd) {
			continue
		}
		if p.Cwd != nil && *p.Cwd != "" && filepath.Clean(*p.Cwd) != filepath.Clean(r.Cwd) {
			continue
		}
		all = append(all, r)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Updated.After(all[j].Updated) })
	out := listSessionsResponse{Sessions: []sessionInfo{}}
	for _, r := range all {
		info := sessionInfo{SessionID: r.ID, Cwd: r.Cwd, UpdatedAt: r.Updated.UTC().Format(time.RFC3339)}
		if r.Title != "" {
			t := r.Title
			info.Title = &t
		}
		out.Sessions = append(out.Sessions, info)
	}
	return out, nil
}
