package redact

//go:generate go run ../internal/tools/gengitleaks -o gitleaks_rules.go
