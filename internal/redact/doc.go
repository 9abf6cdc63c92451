// Package redact is the one place where capirepo keeps secrets out of what
// it prints. Every secret capirepo holds (a token from the environment, the
// password of a URL, a registry credential) is added to a Set; every byte
// capirepo writes to stdout and stderr, -o json included, goes through the
// Set's Writer, which replaces each secret with [REDACTED].
//
// cmd/capirepo makes one Set per run, wraps its output streams with it and
// puts it into the context, so a package that learns a secret later (a
// registry credential resolved from a docker config) adds it with
// redact.Add(ctx, secret).
//
// It is not for deciding what is secret: whoever learns a secret adds it.
package redact
