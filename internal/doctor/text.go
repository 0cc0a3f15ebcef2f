package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/inert"
)

// WriteJSON writes r as one JSON object.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes r as lines of "label: what", the configuration's
// indented below its file. What came from outside (versions, paths,
// errors) is made inert.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	line := func(label, text string) {
		fmt.Fprintf(&b, "%-11s %s\n", label+":", text)
	}
	sub := func(label, text string) {
		fmt.Fprintf(&b, "  %-9s %s\n", label+":", text)
	}

	l := r.Landlock
	switch {
	case l.ABI > 0 && l.ABI != l.KernelABI:
		line("landlock", fmt.Sprintf("ABI %d (%s): the kernel's ABI %d lacks the fix of its signal scoping (Landlock errata 2)", l.ABI, l.Summary, l.KernelABI))
	case l.ABI > 0:
		line("landlock", fmt.Sprintf("ABI %d (%s)", l.ABI, l.Summary))
	case l.Hint != "":
		line("landlock", fmt.Sprintf("none: %s (%s)", l.Why, inert.Line(l.Hint)))
	default:
		line("landlock", "none: "+l.Why)
	}
	if len(r.Room) > 0 {
		line("room", "the agent's room, layer by layer")
		for _, l := range r.Room {
			by := l.By
			if by == "" {
				by = "MISSING: " + l.Missing
			}
			fmt.Fprintf(&b, "  %-14s %s\n", l.Name+":", inert.Line(by))
			fmt.Fprintf(&b, "  %-14s closes %s\n", "", l.Closes)
		}
	}
	if r.Cgroup.OK {
		line("cgroup v2", "yes, each command in a cgroup of its own under "+inert.Line(r.Cgroup.Dir))
	} else {
		line("cgroup v2", "no: "+inert.Line(r.Cgroup.Note))
	}
	gt := r.Git
	switch {
	case !gt.Found:
		line("git", fmt.Sprintf("%s (the runner needs git %s or later for its checkpoints)", inert.Line(gt.Error), gt.Needs))
	case gt.OK:
		line("git", fmt.Sprintf("%s (%s; needs %s or later)", inert.Line(gt.Version), inert.Line(gt.Path), gt.Needs))
	case gt.Error == "":
		line("git", fmt.Sprintf("%s (%s; TOO OLD: needs %s or later)", inert.Line(gt.Version), inert.Line(gt.Path), gt.Needs))
	default:
		line("git", fmt.Sprintf("%s (%s; needs %s or later)", inert.Line(gt.Error), inert.Line(gt.Path), gt.Needs))
	}
	for _, t := range r.Agents {
		text := toolText(t)
		if len(t.UsedBy) > 0 {
			text += " ← " + strings.Join(t.UsedBy, ", ")
		}
		line(inert.Line(t.Name), text)
	}

	c := r.Config
	switch {
	case !c.Found:
		line("config", "none: "+inert.Line(c.Note))
	case c.Error != "":
		line("config", inert.Line(c.File)+": CANNOT BE READ")
		for _, e := range strings.Split(strings.TrimSpace(c.Error), "\n") {
			sub("error", inert.Line(e))
		}
	default:
		line("config", inert.Line(c.File))
		sub("sandbox", inert.Line(c.Sandbox.Says))
		if len(c.Sandbox.Writable) > 0 {
			sub("writable", strings.Join(inert.Lines(c.Sandbox.Writable), ", "))
		}
		sub("work", inert.Line(c.Work.Says))
		sub("parallel", c.Parallel.Says)
		if e := c.Engine; e != nil {
			service, workers, remote, key := engineLines(e, time.Now())
			sub("engine", service)
			sub("key", key)
			sub("workers", workers)
			sub("remote", remote)
		}
		for _, n := range c.Notices {
			sub("notice", inert.Line(n))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// toolText is "VERSION (PATH)", or why there is none.
func toolText(t Tool) string {
	switch {
	case !t.Found:
		return inert.Line(t.Error)
	case t.Error != "":
		return fmt.Sprintf("%s (%s)", inert.Line(t.Error), inert.Line(t.Path))
	case t.Version != "":
		return fmt.Sprintf("%s (%s)", inert.Line(t.Version), inert.Line(t.Path))
	}
	return fmt.Sprintf("%s (%s)", inert.Line(t.Note), inert.Line(t.Path))
}
