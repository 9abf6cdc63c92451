// Package clusterctlvars finds the ${VAR}s of a template or components file
// exactly as clusterctl's yamlprocessor.SimpleProcessor does (same envsubst
// parser, same legacy "${ VAR }" rewrite), fast enough for large components.
// The builder lists a release's variables with it and the contract lint checks
// them; neither needs clusterctl's whole-file regular expression.
//
// It finds names only: it substitutes no values (clusterctl does, at install
// time) and checks nothing about them (the lint's rules do).
package clusterctlvars
