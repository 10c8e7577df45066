package suggest

import "testing"

func TestClosest(t *testing.T) {
	tools := []string{"Bash", "Read", "Edit", "Write", "WebFetch", "WebSearch", "NotebookEdit"}
	for _, c := range []struct{ name, want string }{
		{"Bassh", "Bash"},
		{"bash", "Bash"},
		{"Raed", "Read"},
		{"Wirte", "Write"},
		{"WebFecth", "WebFetch"},
		{"NoteBookEdit", "NotebookEdit"},
		{"Deploy", ""},
		{"X", ""},
		{"Bash", ""},
	} {
		if got := Closest(c.name, tools); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}
