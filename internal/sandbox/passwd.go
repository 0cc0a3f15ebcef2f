package sandbox

import (
	"bytes"
	"strconv"
)

// passwdFile is the user database a program reads its user's login
// shell from (codex's commands run through it).
const passwdFile = "/etc/passwd"

// withShell returns the passwd(5) text db with shell as the login shell
// of every entry of user id uid, and whether one named it. Other lines
// are kept as they are.
func withShell(db []byte, uid int, shell string) ([]byte, bool) {
	id := []byte(strconv.Itoa(uid))
	lines := bytes.SplitAfter(db, []byte("\n"))
	var out bytes.Buffer
	found := false
	for _, line := range lines {
		body, nl := bytes.CutSuffix(line, []byte("\n"))
		f := bytes.Split(body, []byte(":"))
		if len(f) == 7 && bytes.Equal(f[2], id) {
			f[6] = []byte(shell)
			body = bytes.Join(f, []byte(":"))
			found = true
		}
		out.Write(body)
		if nl {
			out.WriteByte('\n')
		}
	}
	return out.Bytes(), found
}
