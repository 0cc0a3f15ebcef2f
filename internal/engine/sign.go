package engine

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Coordinator and workers trust only each other, never the network they
// share with the agents (SPEC §22): every message between them is signed
// with the engine's key, which both read at start (LoadKey). Temporal's
// dev server has no authentication, and an agent on a worker reaches it:
// without the signatures it could submit an iteration of its own, or
// poll the task queue and answer for another.
//
// What is signed is bytes, not a structure: a Signed message carries the
// JSON of an Input or an Output as it was signed, and the other side
// checks the MAC before it decodes a byte of it. Each MAC is the
// HMAC-SHA256 of the message's purpose, the workflow's id (the run and
// the iteration) and the body: a message signed for one purpose or one
// iteration is no good for another.

// Key is the engine's shared secret; nil when none was given (the engine
// is then unprotected, and says so).
type Key []byte

// Purposes of the MACs.
const (
	purposeInput     = "runner engine input v3"
	purposeOutput    = "runner engine output v3"
	purposeChallenge = "runner engine challenge v3"
)

// Signed is a message between the coordinator and the workers: Body, the
// JSON of an Input or an Output, and its MAC. Protocol is outside the
// signature so that a runner of another version is told apart from a
// forgery.
type Signed struct {
	Protocol int
	Body     json.RawMessage
	MAC      []byte `json:",omitempty"`
}

// mac is the MAC of body for purpose in the workflow id.
func (k Key) mac(purpose, id string, body []byte) []byte {
	h := hmac.New(sha256.New, k)
	for _, part := range [][]byte{[]byte(purpose), []byte(id)} {
		h.Write([]byte(strconv.Itoa(len(part)) + ":"))
		h.Write(part)
	}
	h.Write(body)
	return h.Sum(nil)
}

// sign encodes v as the body of a message for purpose in workflow id,
// signed when k is set.
func (k Key) sign(purpose, id string, v any) (*Signed, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s := &Signed{Protocol: Protocol, Body: body}
	if k != nil {
		s.MAC = k.mac(purpose, id, body)
	}
	return s, nil
}

// Errors of a message that cannot be verified.
var (
	// ErrUnsigned: the message carries no MAC, and this side has a key.
	ErrUnsigned = errors.New("it is not signed")
	// ErrBadSignature: its MAC is not the one this side's key gives: it
	// was made with another key, for another iteration, or changed.
	ErrBadSignature = errors.New("its signature does not verify with this side's engine key")
)

// open checks s, a message for purpose in workflow id, and decodes its
// body into v. Without a key nothing can be checked: the body is decoded
// as it is.
func (k Key) open(purpose, id string, s *Signed, v any) error {
	if s == nil {
		return errors.New("the message is empty")
	}
	if s.Protocol != Protocol {
		return fmt.Errorf("it speaks the runner's engine protocol %d, this side %d: run the same version of runner on the coordinator and the workers", s.Protocol, Protocol)
	}
	if k != nil {
		if len(s.MAC) == 0 {
			return ErrUnsigned
		}
		if !hmac.Equal(s.MAC, k.mac(purpose, id, s.Body)) {
			return ErrBadSignature
		}
	}
	if err := json.Unmarshal(s.Body, v); err != nil {
		return fmt.Errorf("its body does not decode: %w", err)
	}
	return nil
}

// SignInput is in, signed for its workflow (WorkflowID).
func (k Key) SignInput(in Input) (*Signed, error) {
	return k.sign(purposeInput, WorkflowID(in.Run, in.Iteration, in.Retry), in)
}

// OpenInput checks s, the input of workflow id, and decodes it: it must
// be signed with k for that workflow, and name the run and iteration the
// id is made of.
func (k Key) OpenInput(id string, s *Signed) (Input, error) {
	var in Input
	if err := k.open(purposeInput, id, s, &in); err != nil {
		return Input{}, err
	}
	if want := WorkflowID(in.Run, in.Iteration, in.Retry); want != id {
		return Input{}, fmt.Errorf("it is the input of workflow %s, submitted as %s", want, id)
	}
	return in, nil
}

// signOutput is out, the output of iteration in (workflow id), signed.
func (k Key) signOutput(id string, in Input, out *Output) (*Signed, error) {
	out.Node, out.Attempt = in.Node, in.Attempt
	return k.sign(purposeOutput, id, out)
}

// OpenOutput checks s, the output of workflow id for the agent run of
// node on attempt, and decodes it. An output that cannot be verified is
// an error that Unverified matches: the iteration has no result.
func (k Key) OpenOutput(id, node string, attempt int, s *Signed) (*Output, error) {
	var out Output
	if err := k.open(purposeOutput, id, s, &out); err != nil {
		return nil, &unverifiedError{id: id, err: err}
	}
	if k != nil && (out.Node != node || out.Attempt != attempt) {
		return nil, &unverifiedError{id: id, err: fmt.Errorf("it answers for task %s, attempt %d, not %s, attempt %d", out.Node, out.Attempt, node, attempt)}
	}
	return &out, nil
}

// Answer is a worker's answer to a challenge: the MAC of nonce for the
// worker named name on task queue queue. Comparing it with one's own
// tells whether both sides hold the same key, without sending it.
func (k Key) Answer(queue, name string, nonce []byte) []byte {
	return k.mac(purposeChallenge, queue+"\x00"+name, nonce)
}

// unverifiedError is a worker's output the coordinator could not verify.
type unverifiedError struct {
	id  string
	err error
	// worker is the identity of whoever took the activity, by its own
	// account (WorkerOf).
	worker string
}

func (e *unverifiedError) Error() string {
	return fmt.Sprintf("workflow %s: its result was refused: %v", e.id, e.err)
}
func (e *unverifiedError) Unwrap() error { return e.err }

// Unverified reports whether err is a result that could not be verified
// with the engine's key (OpenOutput): forged by another program on the
// task queue, or sent by a worker with another key. The iteration is
// lost, neither done nor charged.
func Unverified(err error) bool {
	var ue *unverifiedError
	return errors.As(err, &ue)
}
