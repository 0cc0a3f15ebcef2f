package engine

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/sandbox"
)

// What a worker takes from the wire and what it does not (SPEC §22): it
// runs an input only when its key verifies it, and never below its own
// confinement floor; its folder is outside every room.

// RefusedType is the type of the error of an activity whose input the
// worker refused before anything ran: not signed with its key, or asking
// for less confinement than its floor. Like SetupFailureType, it costs
// the task no attempt.
const RefusedType = "runner.worker.refused"

// Sandbox floors of `runner worker --sandbox`.
const (
	FloorAuto     = "auto"
	FloorRequired = "required"
	FloorOff      = "off"
)

// refusedError is an input a worker refuses: nothing of it runs.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

func refuse(format string, args ...any) error {
	return &refusedError{fmt.Errorf(format, args...)}
}

// isRefused reports whether err is an input the worker refused.
func isRefused(err error) bool {
	var re *refusedError
	return errors.As(err, &re)
}

// checkStart settles the worker's floor and refuses to start without a
// key (unless Unprotected), where its floor cannot hold, or in a folder a
// room may write.
func (w *Worker) checkStart() error {
	if w.Key == nil && !w.Unprotected {
		return fmt.Errorf("no engine key: give the file the coordinator signs its iterations with (--key-file, or %s); %s. "+
			"(--unprotected runs without one: then any program that reaches the Temporal service, an agent among them, can have this worker run a command of its choosing)", KeyEnv, MakeKeyHint)
	}
	abi, why := sandbox.ABI()
	switch w.Sandbox {
	case FloorOff:
		w.floor = false
	case FloorRequired:
		if abi < 1 {
			return fmt.Errorf("--sandbox required: this machine cannot confine the agents: %v", why)
		}
		w.floor = true
	case "", FloorAuto:
		w.floor = abi >= 1
	default:
		return fmt.Errorf("--sandbox %q: want auto (confine every iteration where this machine can), required (refuse to start where it cannot) or off (each iteration's [sandbox] decides)", w.Sandbox)
	}
	return checkFolder(w.Dir, &config.Config{}, w.Room)
}

// sayProtection says in the worker's log what protects it, and what
// does not.
func (w *Worker) sayProtection() {
	var open []string
	switch {
	case w.Key == nil:
		open = append(open, "it has no engine key (--unprotected): it runs any iteration submitted to its task queue, and what it sends back can be forged")
	default:
		if ok, why := w.layers(config.DefaultMaxProcesses).HidesPaths(); !ok {
			open = append(open, "its agents may read the engine key: "+why)
		}
	}
	if !w.floor {
		why := "--sandbox off: each iteration's [sandbox] decides"
		if w.Sandbox != FloorOff {
			_, err := sandbox.ABI()
			why = "this machine cannot confine them: " + err.Error()
		}
		open = append(open, "its agents may run unconfined ("+why+")")
	}
	if len(open) == 0 {
		w.logf("runner worker %s: protected: it runs only iterations signed with the engine key, confined", w.Name)
		return
	}
	w.logf("runner worker %s: NOT PROTECTED: %s", w.Name, strings.Join(open, "; "))
}

// admit refuses an iteration whose config asks for less confinement than
// the worker's floor, or whose room may write the worker's folder.
func (w *Worker) admit(cfg *config.Config) error {
	if w.floor && cfg.Sandbox.Mode == config.SandboxOff {
		return refuse(`its config asks for sandbox.mode = "off", below this worker's floor (--sandbox %s: every iteration is confined here); `+
			`start the worker with --sandbox off to let the coordinator's config decide`, orAuto(w.Sandbox))
	}
	if cfg.Sandbox.Mode == config.SandboxOff && !w.floor {
		return nil // unconfined: every path is writable, and the worker said so
	}
	if err := checkFolder(w.Dir, cfg, w.Room); err != nil {
		return &refusedError{err}
	}
	return nil
}

func orAuto(floor string) string {
	if floor == "" {
		return FloorAuto
	}
	return floor
}

// refusal is the activity's error for an input the worker refused.
func refusal(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), RefusedType, err)
}

// inputRefusal says why an input that did not verify was refused.
func inputRefusal(err error) error {
	switch {
	case errors.Is(err, ErrUnsigned):
		err = fmt.Errorf("its input is not signed: the coordinator has no engine key (engine.key_file, or %s), or another program submitted it", KeyEnv)
	case errors.Is(err, ErrBadSignature):
		err = errors.New("its input's signature does not verify with this worker's engine key: the coordinator has another key file, or another program submitted it")
	default:
		err = fmt.Errorf("its input cannot be used: %w", err)
	}
	return &refusedError{err}
}
