//go:build linux

package proc

import (
	"context"
	"testing"
)

// BenchmarkRun measures one Run of a command that exits at once (true):
// started directly, under the supervisor without a cgroup, and with one.
//
//	go test ./internal/proc -run '^$' -bench Run -benchtime 200x
func BenchmarkRun(b *testing.B) {
	sc := supervisorConfig.Load()
	modes := []struct {
		name string
		conf *supervisorConf
	}{{"direct", nil}}
	if sc != nil {
		modes = append(modes, struct {
			name string
			conf *supervisorConf
		}{"supervised-no-cgroup", &supervisorConf{path: sc.path, arg0: sc.arg0, noCgroup: true}})
		if !sc.noCgroup {
			modes = append(modes, struct {
				name string
				conf *supervisorConf
			}{"supervised-cgroup", sc})
		}
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			supervisorConfig.Store(m.conf)
			defer supervisorConfig.Store(sc)
			for i := 0; i < b.N; i++ {
				if r := Run(context.Background(), Spec{Argv: []string{"true"}}); r.ExitCode != 0 {
					b.Fatalf("Run = %+v", r)
				}
			}
		})
	}
}
