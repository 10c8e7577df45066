module github.com/agentjq/agentjq

go 1.26.8

require (
	github.com/alecthomas/kong v1.17.0
	github.com/creack/pty v1.1.24
	github.com/fatih/color v1.19.0
	github.com/itchyny/gojq v0.12.20
	github.com/mattn/go-isatty v0.0.24
	mvdan.cc/sh/v3 v3.14.1
)

require golang.org/x/text v0.44.0

require (
	github.com/coder/websocket v1.8.15
	github.com/itchyny/timefmt-go v0.1.9 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	golang.org/x/sys v0.47.0
)
