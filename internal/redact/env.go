package redact

import "strings"

// AddKey masks a private key: whole, and each line of it but its BEGIN and
// END lines, since a line could be printed alone.
func (s *Set) AddKey(key string) {
	s.Add(key)
	for _, line := range strings.Split(key, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "-----") {
			s.Add(line)
		}
	}
}

// AddArgs masks the user name and password of every URL among a command
// line's arguments (--flag=URL too) and returns those it masked, for a
// warning: a token belongs in the environment.
func (s *Set) AddArgs(args []string) []string {
	var found []string
	for _, a := range args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v
		}
		if strings.Contains(a, "://") && strings.Contains(a, "@") && s.AddURL(a) {
			found = append(found, s.String(a))
		}
	}
	return found
}

// Environment masks the values of the variables always holds in getenv at
// once, and returns getenv masking what it reads later: a value whose
// variable secret names, and the credentials in a URL variable's
// (NAME_URL).
func (s *Set) Environment(getenv func(string) string, always []string, secret func(name string) bool) func(string) string {
	for _, name := range always {
		s.AddKey(getenv(name))
	}
	return func(name string) string {
		v := getenv(name)
		if secret(name) {
			s.AddKey(v)
		}
		if strings.HasSuffix(name, "_URL") {
			s.AddURL(v)
		}
		return v
	}
}
