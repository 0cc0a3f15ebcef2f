package cli

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/serve"
)

// tokenEnv is the environment variable that gives `runner serve` its
// token when --token does not (a flag shows in the process list).
const tokenEnv = "RUNNER_SERVE_TOKEN"

type serveOptions struct {
	Addr  string
	Token string
}

func newServeCmd(g *globals) *cobra.Command {
	opts := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve a read-only web dashboard of the run",
		Long: `Serve a local, read-only web dashboard of this repository's run: the task tree
with statuses and the questions of blocked tasks, the iteration in flight, the
history (task, outcome, duration, cost), and for each iteration its prompt, the
head and tail of its logs, its guard results and its commit. The page follows
the run live; GET /api/status returns what "runner status --json" prints, and
GET /events streams a server-sent event on every change.

It only reads: it takes no lock and writes nothing under .runner/, so it can
run beside "runner run", before it and after it.

Without a token it listens on loopback only (the default 127.0.0.1:7777) and
answers only requests addressed to localhost. With --token (or the
RUNNER_SERVE_TOKEN environment variable) it may listen on any address, and
every request must carry "Authorization: Bearer TOKEN"; a browser opens
/?token=TOKEN once, which sets a session cookie and drops the token from the
address. Plain HTTP: beyond a trusted network, put it behind an SSH tunnel or
a TLS proxy.

Ctrl-C stops it (exit status 0).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), g, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", serve.DefaultAddr, "address to listen on (HOST:PORT; a port of 0 picks a free one)")
	cmd.Flags().StringVar(&opts.Token, "token", "", "require this token of every request (default: $"+tokenEnv+")")
	return cmd
}

func runServe(ctx context.Context, g *globals, opts *serveOptions) error {
	token := opts.Token
	if token == "" {
		token = os.Getenv(tokenEnv)
	}
	if err := serve.CheckAddr(opts.Addr, token); err != nil {
		return err
	}
	p, err := g.paths()
	if err != nil {
		return err
	}
	s, err := serve.New(serve.Options{Paths: p, Token: token, Logger: g.logger})
	if err != nil {
		return err
	}
	defer s.Close()
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(g.streams.Out, "runner: the dashboard of %s is at %s\n", inert.Line(p.Root), url)
	if token != "" {
		fmt.Fprintf(g.streams.Out, "runner: open %s?token=… (the token) once in a browser; scripts send Authorization: Bearer …\n", url)
	}
	return s.Serve(ctx, ln)
}
