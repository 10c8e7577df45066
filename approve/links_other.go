//go:build !unix

package approve

func hardLinked(string) bool { return false }
