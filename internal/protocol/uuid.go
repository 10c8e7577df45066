package protocol

import (
	"crypto/rand"
	"fmt"
)

// NewUUID returns a random UUID (version 4), the form claude gives
// session ids and the uuid of a user message.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// IsUUID reports whether s is a UUID in the lower-case form claude writes
// (session ids, message uuids).
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9' || 'a' <= c && c <= 'f':
		default:
			return false
		}
	}
	return true
}
