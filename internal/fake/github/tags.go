package github

// AddTag creates a bare tag with no release, as a push of a git tag does:
// it is in Tags, never in the releases list.
func (s *Server) AddTag(owner, name, tag, commitish string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[owner+"/"+name]
	if rp == nil {
		s.t.Fatalf("fake github: AddTag to unknown repo %s/%s", owner, name)
	}
	rp.tags[tag] = commitish
}
