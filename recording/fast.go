package recording

import "bytes"

// splitEntry is the replay hot path: it finds an entry's seq, dir and
// payload without allocating or decoding the payload. ok is false for
// anything ParseEntry would have to judge.
func splitEntry(line []byte) (seq int64, dir, payload []byte, text, ok bool) {
	const pre = `{"seq":`
	if len(line) < len(pre)+2 || string(line[:len(pre)]) != pre || line[len(line)-1] != '}' {
		return
	}
	i := len(pre)
	start := i
	for ; i < len(line) && line[i] >= '0' && line[i] <= '9'; i++ {
		seq = seq*10 + int64(line[i]-'0')
	}
	if i == start || i-start > 18 {
		return
	}
	const ms = `,"ms":`
	if !bytes.HasPrefix(line[i:], []byte(ms)) {
		return
	}
	i += len(ms)
	for i < len(line) && line[i] != ',' {
		i++
	}
	const d = `,"dir":"`
	if !bytes.HasPrefix(line[i:], []byte(d)) {
		return
	}
	i += len(d)
	j := bytes.IndexByte(line[i:min(len(line), i+16)], '"')
	if j < 0 {
		return
	}
	dir = line[i : i+j]
	i += j + 1
	switch {
	case bytes.HasPrefix(line[i:], []byte(`,"msg":`)):
		payload = line[i+len(`,"msg":`) : len(line)-1]
	case bytes.HasPrefix(line[i:], []byte(`,"text":`)):
		payload, text = line[i+len(`,"text":`):len(line)-1], true
	default:
		return
	}
	return seq, dir, payload, text, true
}
