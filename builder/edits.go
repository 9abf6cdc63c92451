package builder

import (
	"fmt"
	"slices"
	"strings"
)

// Edit is one change the build made to what the tree renders: a field set
// on some containers, with what asked for it. Every edit is said once in
// the build's output with its count (pipeline prints Result.Edits beside
// the warnings); the provider labels the build adds or replaces are said
// as lint findings (CAPI203), where waivers apply.
type Edit struct {
	Provider string `json:"provider"`
	// File is the release file edited.
	File string `json:"file"`
	// Field is the container field set: image or imagePullPolicy.
	Field string `json:"field"`
	Value string `json:"value"`
	// Was is the image name the tree gave the containers ("" unknown).
	Was string `json:"was,omitempty"`
	// Count is how many containers were set; Containers names them by
	// object, "Kind namespace/name container(s) a, b".
	Count      int      `json:"count"`
	Containers []string `json:"containers"`
	// By is what asked for it: a capirepo.yaml key, --image, or the
	// build's default (the version as the manager image's tag).
	By string `json:"by"`
}

func (e Edit) String() string {
	was := ""
	if e.Was != "" {
		was = " in place of the tree's " + e.Was
	}
	return fmt.Sprintf("%s %s: %s %s set on %s%s (%s): %s", e.Provider, e.File, e.Field, e.Value,
		plural(e.Count, "1 container", fmt.Sprintf("%d containers", e.Count)), was, e.By, strings.Join(e.Containers, "; "))
}

// containerNames names containers as an Edit does, grouped by object:
// "Deployment ns/name container a", "Deployment ns/name containers a, b".
func containerNames(cs []container) []string {
	var objs []string
	by := map[string][]string{}
	for _, c := range cs {
		o := objName(c.owner)
		if _, ok := by[o]; !ok {
			objs = append(objs, o)
		}
		if n := c.name(); !slices.Contains(by[o], n) {
			by[o] = append(by[o], n)
		}
	}
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = fmt.Sprintf("%s %s %s", o, plural(len(by[o]), "container", "containers"), strings.Join(by[o], ", "))
	}
	return out
}

// edit is an Edit of the containers cs.
func edit(provider, file, field, value, was, by string, cs []container) Edit {
	return Edit{Provider: provider, File: file, Field: field, Value: value, Was: was, Count: len(cs), Containers: containerNames(cs), By: by}
}
