package rehearse

import (
	"fmt"
	"io"
	"strings"

	"github.com/capirepo/capirepo/internal/markdown"
	"github.com/capirepo/capirepo/internal/text"
)

// WriteMarkdown prints the report for a CI job summary (inside verify's and
// release's reports): the verdict, the releases and where core Cluster API
// and cert-manager came from, a row per step, what failed in clusterctl's
// or the server's words and the state it left, the objects the upgrade
// refused or changed and those not created (unfolded), what the
// repository served differently (folded), what was left behind, and what
// a rehearsal does not judge.
func (r *Report) WriteMarkdown(w io.Writer) error {
	verdict := "upgraded"
	if r.Failure != nil {
		verdict = "failed at " + r.Failure.Step
	}
	m := &markdown.Writer{W: w}
	m.Printf("### Upgrade rehearsal %s → %s: %s\n\n", markdown.Text(r.Old), markdown.Text(r.New), markdown.Text(verdict))
	provs := make([]string, len(r.Providers))
	for i, p := range r.Providers {
		provs[i] = markdown.Code(p)
	}
	m.Printf("%s on %s, through clusterctl's client in process. **%d objects created from %s's templates, %d refused after the upgrade**; %.1fs in all.\n\n",
		strings.Join(provs, ", "), markdown.Code(r.Server), r.CreatedObjects(), markdown.Text(r.Old), r.Refusals(), r.Seconds)
	if len(r.Core) > 0 {
		core := make([]string, len(r.Core))
		for i, c := range r.Core {
			core[i] = markdown.Code(c)
		}
		m.Printf("- core: %s\n", strings.Join(core, ", "))
	}
	switch r.CertManager {
	case "":
	case "cluster":
		m.Printf("- cert-manager: the cluster's CRDs\n")
	default:
		m.Printf("- cert-manager: %s, installed by clusterctl from the rehearsal's repository\n", markdown.Text(r.CertManager))
	}
	if len(r.StandIns) > 0 {
		ins := make([]string, len(r.StandIns))
		for i, v := range r.StandIns {
			ins[i] = markdown.Code(v)
		}
		m.Printf("- stand-ins (no real value given): %s\n", strings.Join(ins, ", "))
	}
	if len(r.Core) > 0 || r.CertManager != "" || len(r.StandIns) > 0 {
		m.Printf("\n")
	}
	steps := make([][]string, len(r.Steps))
	for i, s := range r.Steps {
		steps[i] = []string{markdown.Text(s.Name), markdown.Text(s.Status), fmt.Sprintf("%.1fs", s.Seconds), markdown.Text(s.Detail)}
	}
	m.Do(func(w io.Writer) error { return markdown.Table(w, []string{"step", "status", "time", "detail"}, steps) })
	if f := r.Failure; f != nil {
		m.Printf("**Failed at %s:** %s\n\n**State:** %s\n\n", markdown.Text(f.Step), markdown.Text(f.Message), markdown.Text(f.State))
	}
	var objs [][]string
	for _, o := range r.Objects {
		switch {
		case !o.Created:
			objs = append(objs, []string{markdown.Code(o.Object), markdown.Code(o.File), "not created", markdown.Text(o.NotCreated)})
		case o.Refused:
			objs = append(objs, []string{markdown.Code(o.Object), markdown.Code(o.File), "refused", markdown.Text("read back: " + o.ReadBack + "; no-op apply: " + o.NoOp)})
		case o.Changed != "":
			objs = append(objs, []string{markdown.Code(o.Object), markdown.Code(o.File), "changed", markdown.Code(o.Changed)})
		}
	}
	if len(objs) > 0 {
		m.Do(func(w io.Writer) error {
			return markdown.Details(w, text.Plural(len(objs), "object refused, changed or not created", "objects refused, changed or not created"), true, func(w io.Writer) error {
				return markdown.Table(w, []string{"object", "file", "what", "detail"}, objs)
			})
		})
	}
	var served [][]string
	for _, s := range r.Served {
		if s.Changed() {
			served = append(served, []string{markdown.Code(s.Provider + "/" + s.Version + "/" + s.File),
				fmt.Sprint(len(s.Removed)), fmt.Sprint(len(s.NoConversion)), fmt.Sprint(len(s.ScaledDown))})
		}
	}
	if len(served) > 0 {
		m.Do(func(w io.Writer) error {
			return markdown.Details(w, text.Plural(len(served), "components file served without webhooks", "components files served without webhooks"), false, func(w io.Writer) error {
				return markdown.Table(w, []string{"file", "webhook configurations taken out", "conversion webhooks set to None", "workloads that run no Pod"}, served)
			})
		})
	}
	if len(r.Left) > 0 {
		left := make([]string, len(r.Left))
		for i, l := range r.Left {
			left[i] = markdown.Text(l)
		}
		m.Printf("**Left behind:** %s\n\n", strings.Join(left, ", "))
	}
	m.Printf("Not judged: no controller ran and no webhook was called (conversion included): the server's validation and clusterctl's upgrade only.\n\n")
	return m.Err
}
