package yamlpos

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Error is a YAML syntax error placed in its file.
type Error struct {
	File     string
	Line     int    // in the file, from 1; 0 when the parser gave none
	Document int    // from 1
	Object   string // "Kind name" as far as the broken document shows it
	Msg      string // the parser's message without its line prefix
}

func (e *Error) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	obj := ""
	if e.Object != "" {
		obj = " (" + e.Object + ")"
	}
	return fmt.Sprintf("%s: YAML does not parse: document %d%s: %s", where, e.Document, obj, e.Msg)
}

var (
	lineRe   = regexp.MustCompile(`^yaml: line (\d+): `)
	kindRe   = regexp.MustCompile(`(?m)^kind:[ \t]*["']?([A-Za-z0-9]+)`)
	nameRe   = regexp.MustCompile(`(?m)^metadata:[ \t]*\n(?:[ \t]+.*\n)*?[ \t]+name:[ \t]*["']?([^"'\s#]+)`)
	sepRe    = regexp.MustCompile(`(?m)^---([ \t].*)?$`)
	yamlPref = regexp.MustCompile(`^yaml: `)
)

// Find parses each document of data on its own, as kustomize does, and
// returns the first syntax error placed in file, or nil when every document
// parses.
func Find(file string, data []byte) *Error {
	starts := []int{0} // byte offsets of documents
	for _, m := range sepRe.FindAllIndex(data, -1) {
		starts = append(starts, m[1])
	}
	for i, start := range starts {
		end := len(data)
		if i+1 < len(starts) {
			// the separator line of the next document begins at its match start
			end = bytes.LastIndex(data[:starts[i+1]], []byte("---"))
		}
		doc := data[start:end]
		dec := yaml.NewDecoder(bytes.NewReader(doc))
		var err error
		for {
			var n yaml.Node
			if err = dec.Decode(&n); err != nil {
				break
			}
		}
		if err == nil || errors.Is(err, io.EOF) {
			continue
		}
		e := &Error{File: file, Document: i + 1, Msg: yamlPref.ReplaceAllString(err.Error(), "")}
		if m := lineRe.FindStringSubmatch(err.Error()); m != nil {
			rel, _ := strconv.Atoi(m[1])
			// A later document starts on its separator's line.
			e.Line = bytes.Count(data[:start], []byte("\n")) + rel
			e.Msg = err.Error()[len(m[0]):]
		}
		if m := kindRe.FindSubmatch(doc); m != nil {
			e.Object = string(m[1])
			if n := nameRe.FindSubmatch(doc); n != nil {
				e.Object += " " + string(n[1])
			}
		}
		return e
	}
	return nil
}
