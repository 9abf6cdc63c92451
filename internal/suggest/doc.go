// Package suggest finds the name a user most likely meant when they typed
// one that does not exist: a command, a flag, a config key, a provider
// label. One rule for every "did you mean" capirepo prints.
//
// It is not for fixing what a user typed: it only names a candidate for the
// error message to offer.
package suggest
