package contract

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// duplicate is an object a components file holds more than once: the same
// group, kind, namespace and name.
type duplicate struct {
	// copies are the objects in file order; the first is the one kept.
	copies []*object
	// differ says the copies are not all the same object.
	differ bool
}

// mergeDuplicates folds every object a file holds more than once into the
// object the cluster ends up with, in place of its first copy, and returns
// the objects left and the duplicates found. clusterctl init creates the
// first copy and then sends each later one as a JSON merge patch on what the
// server holds (cluster.providerComponents.createObj, client.Merge): a later
// copy's fields win, lists are replaced whole, and map keys only an earlier
// copy has stay. Keeping the first copy, as the checks did, judged an object
// the cluster never sees.
func mergeDuplicates(objs []*object) ([]*object, []duplicate) {
	type key struct{ group, kind, namespace, name string }
	first := map[key]int{}
	var dups []*duplicate
	byKey := map[key]*duplicate{}
	out := make([]*object, 0, len(objs))
	for _, o := range objs {
		if o.name == "" {
			out = append(out, o)
			continue
		}
		k := key{o.group(), o.kind, o.namespace, o.name}
		i, seen := first[k]
		if !seen {
			first[k] = len(out)
			out = append(out, o)
			continue
		}
		d := byKey[k]
		if d == nil {
			d = &duplicate{copies: []*object{out[i]}}
			byKey[k] = d
			dups = append(dups, d)
		}
		prev := d.copies[len(d.copies)-1]
		if !reflect.DeepEqual(prev.m, o.m) {
			d.differ = true
		}
		d.copies = append(d.copies, o)
		out[i] = mergeObject(out[i], o)
	}
	res := make([]duplicate, len(dups))
	for i, d := range dups {
		res[i] = *d
	}
	return out, res
}

// mergeObject returns base with next applied as a JSON merge patch (RFC
// 7386), at base's place in the file. A CRD is decoded again from the
// merged JSON; where that does not decode, next's CRD stands.
func mergeObject(base, next *object) *object {
	m, _ := mergePatch(deepCopyJSON(base.m), next.m).(map[string]any)
	o := &object{doc: base.doc, raw: next.raw, m: m, kind: next.kind, apiVersion: next.apiVersion, name: next.name, namespace: next.namespace}
	if next.crd == nil && next.crdJSON == nil {
		return o
	}
	o.crd, o.crdJSON = next.crd, next.crdJSON
	if j, err := json.Marshal(m); err == nil {
		crd := new(apiextensionsv1.CustomResourceDefinition)
		if err := json.Unmarshal(j, crd); err == nil {
			o.crd, o.crdJSON = crd, nil
		}
	}
	return o
}

// mergePatch applies patch to target as RFC 7386 says: objects merge key by
// key, null removes a key, anything else replaces.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

func deepCopyJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = deepCopyJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = deepCopyJSON(e)
		}
		return s
	default:
		return v
	}
}

// message says which documents hold the object and what the cluster ends
// up with.
func (d duplicate) message() string {
	docs := make([]string, len(d.copies))
	for i, c := range d.copies {
		docs[i] = strconv.Itoa(c.doc + 1)
	}
	last := docs[len(docs)-1]
	where := "documents " + strings.Join(docs[:len(docs)-1], ", ") + " and " + last
	if !d.differ {
		return fmt.Sprintf("%s is in %s, the same object each time: clusterctl applies every copy; remove all but one", d.copies[0].ID(), where)
	}
	return fmt.Sprintf("%s is in %s, and the copies differ: clusterctl applies them in order, each later one as a merge patch on the one before, so the cluster holds document %s's fields (and an earlier copy's map keys that document %s leaves out), which is what the other checks judge; keep one copy, the one you mean",
		d.copies[0].ID(), where, last, last)
}

// lintDuplicates reports the objects a components file holds more than once
// and returns the objects as the cluster ends up with them.
func (l *linter) lintDuplicates(file string, objs []*object) []*object {
	out, dups := mergeDuplicates(objs)
	for _, d := range dups {
		last := d.copies[len(d.copies)-1]
		l.add(RuleDuplicateObject, file, last.ID(), "metadata.name", "%s", d.message())
	}
	return out
}
