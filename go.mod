module github.com/agentjq/agentjq

go 1.26.8

require (
	github.com/alecthomas/kong v1.17.0
	github.com/mattn/go-isatty v0.0.24
)

require golang.org/x/sys v0.47.0 // indirect
