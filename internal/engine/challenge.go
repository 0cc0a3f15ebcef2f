package engine

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// `runner doctor` asks each worker it sees whether it holds the same key
// as the coordinator, without either side sending it: it sends a random
// nonce to the worker's own task queue (ChallengeQueue), the worker
// answers with its MAC of it (Key.Answer), and doctor compares that
// answer with its own.

// ChallengeName is the workflow a worker answers challenges with.
const ChallengeName = "runner.Challenge"

// ChallengeQueue is the task queue the worker named name, polling queue,
// answers challenges on.
func ChallengeQueue(queue, name string) string { return queue + "@" + name }

// answerChallenges is a second Temporal worker of w's, on its own
// challenge queue: workflow tasks only, each answered in the workflow
// itself (a MAC is deterministic).
func (w *Worker) answerChallenges(c client.Client) worker.Worker {
	wk := worker.New(c, ChallengeQueue(w.queue, w.Name), worker.Options{Identity: w.Name, LocalActivityWorkerOnly: true})
	wk.RegisterWorkflowWithOptions(func(ctx workflow.Context, nonce []byte) ([]byte, error) {
		if w.Key == nil {
			return nil, temporal.NewNonRetryableApplicationError("this worker has no engine key (--unprotected)", RefusedType, nil)
		}
		return w.Key.Answer(w.queue, w.Name, nonce), nil
	}, workflow.RegisterOptions{Name: ChallengeName})
	return wk
}

// Challenge outcomes.
var (
	// ErrKeyDiffers: the worker answered, with another key.
	ErrKeyDiffers = errors.New("it answered with another key: give it the coordinator's key file (or the one it has is not this worker's)")
	// ErrNoAnswer: nothing answered on the worker's challenge queue in
	// time (a worker of an older runner, or one that has stopped).
	ErrNoAnswer = errors.New("it did not answer the challenge (a runner of another version, or it has stopped)")
)

// Challenge asks the worker named name, polling queue, to prove it holds
// key: nil when it does, ErrKeyDiffers or ErrNoAnswer when it does not
// (or another error of the service's, or the worker's refusal).
func Challenge(ctx context.Context, c client.Client, queue, name string, key Key, within time.Duration) error {
	nonce := make([]byte, 32)
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	run, err := c.ExecuteWorkflow(cctx, client.StartWorkflowOptions{
		ID:                       "runner-challenge-" + hex.EncodeToString(nonce[:8]),
		TaskQueue:                ChallengeQueue(queue, name),
		WorkflowExecutionTimeout: within,
	}, ChallengeName, nonce)
	if err != nil {
		return fmt.Errorf("challenge worker %s: %w", name, err)
	}
	var answer []byte
	err = run.Get(cctx, &answer)
	var te *temporal.TimeoutError
	switch {
	case errors.As(err, &te), cctx.Err() != nil:
		return ErrNoAnswer
	case err != nil:
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) {
			return errors.New(ae.Message())
		}
		return fmt.Errorf("challenge worker %s: %w", name, err)
	case !hmac.Equal(answer, key.Answer(queue, name, nonce)):
		return ErrKeyDiffers
	}
	return nil
}
