// Package yamlsafe refuses YAML whose aliases would expand into far more
// nodes than the text holds (a "billion laughs" document). Parsers keep
// aliases as pointers, but kustomize expands every anchor into copies, so an
// unchecked file of a few KB can take all memory and time.
//
// It is not a parser: it checks a file before a parser that expands aliases
// reads it.
package yamlsafe
