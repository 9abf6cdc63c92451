// Package yamlpos places a YAML syntax error in its file: parsers that split
// a multi-document file (kustomize, kyaml) count lines from the start of each
// document, so "line 5" of the second document is not line 5 of the file.
// It does not parse YAML for use; it only explains why a file does not parse.
package yamlpos
