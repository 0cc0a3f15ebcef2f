package state

import (
	"crypto/rand"
	"sync"
)

// Life is this runner process's life: a token drawn once per process,
// kept beside its pid wherever the runner notes who started an
// iteration. A pid alone does not tell two runners apart: a runner
// started again in a container is pid 1 each time, and pids are
// reused. Two deaths with the same pid and different lives are two
// deaths (RunState.Death).
var Life = sync.OnceValue(func() string { return rand.Text()[:16] })
