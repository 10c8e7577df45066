package daemon

import _ "embed"

//go:embed protocol.json
var schemaJSON []byte

// SchemaJSON is the generated protocol.json, byte for byte (GET /protocol.json).
func SchemaJSON() []byte { return schemaJSON }
