package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/admin"
	"github.com/acemq-go/acemq/console/preview"
	"github.com/acemq-go/acemq/deadletter"
	"github.com/acemq-go/acemq/transport"
)

// exitInterrupted is the status of a dlq verb stopped by Ctrl-C (128 +
// SIGINT, as shells report it): it finished the messages in hand.
const exitInterrupted = 130

// brokerOptions are the flags every dlq verb has: where the broker is.
type brokerOptions struct {
	url     string
	timeout time.Duration
	tls     tlsFlags
}

func (o *brokerOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.url, "url", "", "the broker's AMQP `URL` (default $ACEMQ_URL or amqp://guest:guest@localhost:5672/)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 30*time.Second, "how long to wait for the broker to answer a connect")
	o.tls.addFlags(cmd)
}

// connect opens a connection named after the verb, as the management UI
// shows it.
func (o brokerOptions) connect(ctx context.Context, verb string) (*acemq.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	return o.tls.connect(ctx, amqpURL(o.url), "acemq dlq "+verb)
}

func newDLQCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "Look at, replay, park, export and purge dead letters",
		Long: `dlq deals with what ends in a queue's dead-letter queue (Q.dlq) and parked
queue (Q.parked). Every move publishes each message mandatory and confirmed
before it acknowledges the original, so a failure or a Ctrl-C leaves the
original where it was: at worst a message is in both queues, never in
neither. A move goes through the queue as it stood when it started; what is
dead-lettered meanwhile waits for the next run.

The broker is --url, else $ACEMQ_URL, else amqp://guest:guest@localhost:5672/.
Long runs show a progress bar on a terminal and progress lines otherwise.
Exit status: 0 done, 2 on any error (what was done is reported), 130 when
stopped by Ctrl-C.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newDLQListCmd(), newDLQShowCmd(), newDLQReplayCmd(), newDLQParkCmd(),
		newDLQExportCmd(), newDLQImportCmd(), newDLQPurgeCmd())
	return cmd
}

func newDLQListCmd() *cobra.Command {
	var (
		o             brokerOptions
		managementURL string
		jsonOut       bool
	)
	cmd := &cobra.Command{
		Use:   "list [--url AMQP_URL] [--management-url URL] [--json]",
		Short: "List every dead-letter and parked queue, with its depth, oldest message and messages on rungs",
		Long: `list finds every queue named Q.dlq or Q.parked in the vhost (through the
management API: --management-url, else $ACEMQ_MANAGEMENT_URL, else the AMQP
host on port 15672) and reports its source queue, the messages ready in it,
how long ago its oldest message was first seen and the class of the reason
that message was set aside for (as show gives it). To read them it looks at
the message at the head of the queue, which goes back to its place marked
redelivered, and only in a classic queue: a quorum queue counts that as a
delivery (towards its x-delivery-limit), so of one the depth alone is
given, and why.

Then, for each source queue Q, its retry rungs of either kind (Q.retry.<d>,
Q.retry.quorum.<d>) and the messages waiting on them: those ready, due home
when their wait is over. A message that has expired from an at-least-once
(quorum) rung but that Q has not yet confirmed is not counted: the
management API counts it in the rung's messages_dlx.`,
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: runE(nil, func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			endpoint, err := managementEndpoint(o.url, managementURL)
			if err != nil {
				return err
			}
			rctx, cancel := context.WithTimeout(ctx, o.timeout)
			defer cancel()
			state, err := admin.Read(rctx, endpoint)
			if err != nil {
				return err
			}
			conn, err := o.connect(ctx, "list")
			if err != nil {
				return err
			}
			defer conn.Close()
			l, err := deadletter.List(ctx, conn, state.Queues, time.Now())
			if err != nil {
				return err
			}
			return writeQueueList(cmd.OutOrStdout(), endpoint, l, jsonOut)
		}),
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&managementURL, "management-url", "", "the management API, such as http://user:password@host:15672 (default $ACEMQ_MANAGEMENT_URL or the AMQP host on port 15672)")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON")
	return cmd
}

func writeQueueList(w io.Writer, endpoint admin.Endpoint, l deadletter.Listing, jsonOut bool) error {
	if jsonOut {
		type entry struct {
			deadletter.QueueInfo
			// OldestSeconds is absent when not known.
			OldestSeconds *float64 `json:"oldestSeconds,omitempty"`
		}
		out := struct {
			Queues  []entry                 `json:"queues"`
			Sources []deadletter.SourceInfo `json:"sources"`
		}{make([]entry, len(l.Queues)), l.Sources}
		for i, q := range l.Queues {
			out.Queues[i].QueueInfo = q
			if q.Oldest >= 0 {
				s := q.Oldest.Round(time.Millisecond).Seconds()
				out.Queues[i].OldestSeconds = &s
			}
		}
		return writeJSON(w, out)
	}
	if len(l.Queues) == 0 {
		_, err := fmt.Fprintf(w, "no dead-letter or parked queues in %s\n", endpoint)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tSOURCE\tMESSAGES\tOLDEST\tHEAD CLASS")
	for _, q := range l.Queues {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", q.Name, q.Source, q.Messages, formatAge(q.Oldest), orDefault(string(q.HeadClass), "-"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "SOURCE\tRUNGS\tWAITING ON RUNGS")
	for _, s := range l.Sources {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", s.Source, len(s.Rungs), s.Waiting)
	}
	return tw.Flush()
}

// formatAge renders an age to the second, or "-" when it is not known.
func formatAge(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return d.Truncate(time.Second).String()
}

func newDLQShowCmd() *cobra.Command {
	var (
		o       brokerOptions
		po      previewOptions
		limit   int
		jsonOut bool
		reasons bool
	)
	cmd := &cobra.Command{
		Use:   "show QUEUE [--limit N] [--json] [--reasons] [--keys FILE] [--avro-schema FILE] [--schema-registry PATH|URL] [--claim-store DIR]",
		Short: "Show the messages of a queue without removing them",
		Long: `show prints the messages of QUEUE in order, the first --limit of them (10
by default; 0 for all): id, type, attempt, age since first seen, why it was
set aside and the class of that reason, application headers and the start
of the body. --reasons counts the whole queue's messages per reason class
and per reason instead. Nothing is removed: each message goes back to its
place, which RabbitMQ marks redelivered.

The reason is x-acemq-error, classed by the wording of every AceMQ library
(exhausted, too_old, rejected, fatal, panicked, parked, undecodable,
no_decision, interceptor). A message in Q.dlq or Q.parked without one was
dead-lettered by the broker itself; the reason then says from which queue
and why, after x-death: delivery_limit (returned to a quorum queue more
times than its delivery limit allows; RabbitMQ 4 gives every quorum queue a
limit of 20), maxlen, expired or rejected (a plain consumer's reject). With
no word from anyone the class is unknown.

The body is read through its layers and shown as text: JSON, YAML, TOML,
XML and text as they are; protobuf, without its schema, as a dump of its
wire format ({1: "o-1", 2: 4250}); fixed-schema Avro (avro/*) as JSON with
--avro-schema FILE; registered Avro (application/vnd.acemq.avro) by the
schema id it carries, decoded with --schema-registry (a SQLite file or a
postgres:// URL); an encrypted body (application/vnd.acemq.encrypted) by
its key id, decrypted with the keyring of --keys FILE or $ACEMQ_KEYS
(lines of "id base64-key [current]") and its plaintext read by these
rules; a claim check unwrapped when inline, and fetched from --claim-store
DIR when offloaded. "decoded:" says how it was read, and what is missing
when it could not be. No key is ever printed: only key ids.`,
		Example: `  acemq dlq show orders.new.dlq
  acemq dlq show orders.new.dlq --reasons
  acemq dlq show orders.new.dlq --limit 0 --json
  ACEMQ_KEYS="$(cat keys.txt)" acemq dlq show payments.parked --schema-registry registry.db`,
		Args:                  exactArgs("QUEUE"),
		DisableFlagsInUseLine: true,
		RunE: runE(func(*cobra.Command, []string) error {
			if limit < 0 {
				return fmt.Errorf("--limit must be 0 (all) or more, found %d", limit)
			}
			return nil
		}, func(cmd *cobra.Command, args []string) error {
			ctx, queue := cmd.Context(), args[0]
			reader, closeReader, err := po.open(ctx)
			if err != nil {
				return err
			}
			defer closeReader()
			conn, err := o.connect(ctx, "show")
			if err != nil {
				return err
			}
			defer conn.Close()
			if reasons {
				counts, err := deadletter.Reasons(ctx, conn, queue)
				if err != nil {
					return err
				}
				return writeReasons(cmd.OutOrStdout(), queue, counts, jsonOut)
			}
			now := time.Now()
			shown := []shownMessage{}
			err = deadletter.Browse(ctx, conn, queue, limit, func(m transport.Message) error {
				shown = append(shown, showMessage(ctx, reader, queue, m, now))
				return nil
			})
			if err != nil {
				return err
			}
			if jsonOut {
				return writeJSON(cmd.OutOrStdout(), shown)
			}
			return writeShown(cmd.OutOrStdout(), queue, shown)
		}),
	}
	o.addFlags(cmd)
	po.addFlags(cmd)
	cmd.Flags().IntVar(&limit, "limit", 10, "show at most `N` messages; 0 shows all")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON")
	cmd.Flags().BoolVar(&reasons, "reasons", false, "count the messages per reason class and per reason instead")
	return cmd
}

// previewBytes is how much of a body show prints.
const previewBytes = preview.DefaultLimit

// shownMessage is a message as show prints it.
type shownMessage struct {
	ID          string               `json:"id"`
	Type        string               `json:"type"`
	Attempt     int                  `json:"attempt"`
	FirstSeen   *time.Time           `json:"firstSeen,omitempty"`
	AgeSeconds  *float64             `json:"ageSeconds,omitempty"`
	Reason      string               `json:"reason,omitempty"`
	ReasonClass string               `json:"reasonClass,omitempty"`
	Replay      *deadletter.Replayed `json:"replay,omitempty"`
	Headers     transport.Table      `json:"headers"`
	ContentType string               `json:"contentType,omitempty"`
	BodyBytes   int                  `json:"bodyBytes"`
	// BodyPreview is the body's own first bytes when they are text, as
	// show printed before it read bodies through their layers.
	BodyPreview string `json:"bodyPreview,omitempty"`
	shownBody
}

func showMessage(ctx context.Context, reader *preview.Reader, queue string, m transport.Message, now time.Time) shownMessage {
	e, r := acemq.ReadEnvelope(m), deadletter.ReasonOf(queue, m)
	s := shownMessage{ID: e.ID, Type: e.Type, Attempt: e.Attempt, Reason: r.Text, ReasonClass: string(r.Class),
		Headers: e.Headers, ContentType: m.ContentType, BodyBytes: len(m.Body), BodyPreview: bodyStart(m.Body),
		shownBody: showBody(reader.Body(ctx, m.ContentType, m.Body))}
	if !e.FirstSeen.IsZero() {
		first, age := e.FirstSeen.UTC(), e.Age(now).Round(time.Millisecond).Seconds()
		s.FirstSeen, s.AgeSeconds = &first, &age
	}
	if r := deadletter.ReadReplayed(m.Headers); r != (deadletter.Replayed{}) {
		s.Replay = &r
	}
	return s
}

// bodyStart is the start of body when it is text, else "".
func bodyStart(body []byte) string {
	cut := body[:min(len(body), previewBytes)]
	for len(cut) > 0 && !utf8.Valid(cut) && len(body) > previewBytes {
		cut = cut[:len(cut)-1] // a rune split at the cut
	}
	if !utf8.Valid(cut) {
		return ""
	}
	return string(cut)
}

func writeShown(w io.Writer, queue string, shown []shownMessage) error {
	var b strings.Builder
	if len(shown) == 0 {
		fmt.Fprintf(&b, "%s is empty\n", queue)
	}
	for i, s := range shown {
		age := "unknown"
		if s.AgeSeconds != nil {
			age = formatAge(time.Duration(*s.AgeSeconds * float64(time.Second)))
		}
		fmt.Fprintf(&b, "%d. %s  type %s  attempt %d  age %s\n", i+1, orDefault(s.ID, "(no id)"), orDefault(s.Type, "-"), s.Attempt, age)
		fmt.Fprintf(&b, "   reason:  %s\n", orDefault(s.Reason, "(none)"))
		if s.ReasonClass != "" {
			fmt.Fprintf(&b, "   class:   %s\n", s.ReasonClass)
		}
		if s.Replay != nil {
			fmt.Fprintf(&b, "   replayed %d time%s, last from %s\n", s.Replay.Count, plural(s.Replay.Count), s.Replay.From)
		}
		if len(s.Headers) > 0 {
			fmt.Fprintf(&b, "   headers: %s\n", transport.FormatTable(s.Headers))
		}
		writeBody(&b, s)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeReasons(w io.Writer, queue string, counts deadletter.ReasonCounts, jsonOut bool) error {
	if jsonOut {
		return writeJSON(w, counts)
	}
	if len(counts.Reasons) == 0 {
		_, err := fmt.Fprintf(w, "%s is empty\n", queue)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "COUNT\tCLASS")
	for _, c := range counts.Classes {
		fmt.Fprintf(tw, "%d\t%s\n", c.Count, orDefault(string(c.Class), "(none)"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "COUNT\tCLASS\tREASON")
	for _, c := range counts.Reasons {
		fmt.Fprintf(tw, "%d\t%s\t%s\n", c.Count, orDefault(string(c.Class), "(none)"), orDefault(c.Text, "(none)"))
	}
	return tw.Flush()
}

// moveOptions are the flags of the verbs that move messages.
type moveOptions struct {
	brokerOptions
	limit  int
	match  string
	rate   float64
	dryRun bool

	matcher *deadletter.Matcher // --match, compiled by check
}

func (o *moveOptions) addFlags(cmd *cobra.Command, withDryRun bool) {
	o.brokerOptions.addFlags(cmd)
	cmd.Flags().IntVar(&o.limit, "limit", 0, "move at most `N` messages; 0 moves all")
	cmd.Flags().StringVar(&o.match, "match", "", "move only the messages this `EXPR` holds for, such as 'reason contains \"timeout\" && attempt >= 3' or 'reasonClass == \"delivery_limit\"' (see docs/operators.md)")
	cmd.Flags().Float64Var(&o.rate, "rate", 0, "move at most `N` messages a second; 0 is as fast as the broker confirms")
	if withDryRun {
		cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "go through the queue and count what would move; move nothing")
	}
}

// check refuses bad values before anything connects.
func (o *moveOptions) check(*cobra.Command, []string) error {
	if o.limit < 0 {
		return fmt.Errorf("--limit must be 0 (all) or more, found %d", o.limit)
	}
	if o.rate < 0 {
		return fmt.Errorf("--rate must be 0 (unlimited) or more, found %g", o.rate)
	}
	if o.match != "" {
		m, err := deadletter.Compile(o.match)
		if err != nil {
			return err
		}
		o.matcher = m
	}
	return nil
}

// options are the library's options for these flags, reporting progress to
// stderr.
func (o moveOptions) options(progress *progress) deadletter.Options {
	return deadletter.Options{Limit: o.limit, Match: o.matcher, Rate: o.rate, DryRun: o.dryRun, Progress: progress.update}
}

func newDLQReplayCmd() *cobra.Command {
	var (
		o  moveOptions
		to string
	)
	cmd := &cobra.Command{
		Use:   "replay QUEUE [--to Q] [--limit N] [--match EXPR] [--rate N] [--dry-run]",
		Short: "Move messages back to their source queue for another try",
		Long: `replay moves the messages of QUEUE (a Q.dlq or Q.parked) back to Q, or to
--to, for their handlers to try again: attempt 1, first-seen kept,
x-acemq-error removed, and acemq-replayed-from, acemq-replayed-at and
acemq-replay-count set. Each is published mandatory and confirmed before
its original is acknowledged; the first failure stops the replay, leaving
that message and the rest where they were.`,
		Example: `  acemq dlq replay orders.new.dlq --dry-run
  acemq dlq replay orders.new.dlq --match 'reason contains "timeout"' --rate 100
  acemq dlq replay orders.new.parked --to orders.new.manual --limit 10`,
		Args:                  exactArgs("QUEUE"),
		DisableFlagsInUseLine: true,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if err := o.check(cmd, args); err != nil {
				return err
			}
			if to == args[0] {
				return fmt.Errorf("--to names %s itself: a queue cannot be replayed into itself", to)
			}
			if to == "" {
				if _, ok := deadletter.Source(args[0]); !ok {
					return fmt.Errorf("%s ends in neither .dlq nor .parked, so its source queue is not known: name the target with --to", args[0])
				}
			}
			return nil
		}, func(cmd *cobra.Command, args []string) error {
			return runMove(cmd, o, "replay", args[0], func(ctx context.Context, c *acemq.Conn, opts deadletter.Options) (deadletter.Progress, error) {
				return deadletter.Replay(ctx, c, args[0], to, opts)
			})
		}),
	}
	o.addFlags(cmd, true)
	cmd.Flags().StringVar(&to, "to", "", "the `QUEUE` to replay into (default: the source, QUEUE without .dlq or .parked)")
	return cmd
}

func newDLQParkCmd() *cobra.Command {
	var o moveOptions
	cmd := &cobra.Command{
		Use:   "park QUEUE.dlq [--match EXPR] [--limit N] [--rate N] [--dry-run]",
		Short: "Move messages from a dead-letter queue to its parked queue",
		Long: `park moves messages of Q.dlq, unchanged, to Q.parked: out of the way of
replays of the dead-letter queue, kept for a person. Each is published
mandatory and confirmed before its original is acknowledged.`,
		Example:               `  acemq dlq park orders.new.dlq --match 'reason contains "schema"'`,
		Args:                  exactArgs("QUEUE.dlq"),
		DisableFlagsInUseLine: true,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if err := o.check(cmd, args); err != nil {
				return err
			}
			if !deadletter.IsDeadLetterQueue(args[0]) {
				return fmt.Errorf("park moves a dead-letter queue (a name ending in .dlq) to its parked queue; %s is not one", args[0])
			}
			return nil
		}, func(cmd *cobra.Command, args []string) error {
			return runMove(cmd, o, "park", args[0], func(ctx context.Context, c *acemq.Conn, opts deadletter.Options) (deadletter.Progress, error) {
				return deadletter.Park(ctx, c, args[0], opts)
			})
		}),
	}
	o.addFlags(cmd, true)
	return cmd
}

func newDLQExportCmd() *cobra.Command {
	var (
		o      moveOptions
		out    string
		remove bool
	)
	cmd := &cobra.Command{
		Use:   "export QUEUE --out FILE.jsonl [--remove] [--match EXPR] [--limit N]",
		Short: "Save the messages of a queue to a file, exactly",
		Long: `export writes the messages of QUEUE to FILE, one JSON object per line:
the body's bytes, every header with its AMQP type and every property, so
that import restores them exactly. The messages stay in the queue, unless
--remove takes each out once its line is on disk. FILE must not exist.`,
		Example: `  acemq dlq export orders.new.dlq --out orders-dlq.jsonl
  acemq dlq export orders.new.parked --out parked.jsonl --remove`,
		Args:                  exactArgs("QUEUE"),
		DisableFlagsInUseLine: true,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("export needs --out FILE")
			}
			return o.check(cmd, args)
		}, func(cmd *cobra.Command, args []string) error {
			// O_EXCL: an export never overwrites an earlier one.
			f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return err
			}
			err = runMove(cmd, o, "export", args[0], func(ctx context.Context, c *acemq.Conn, opts deadletter.Options) (deadletter.Progress, error) {
				return deadletter.Export(ctx, c, args[0], f, remove, opts)
			})
			return errors.Join(err, f.Close())
		}),
	}
	o.addFlags(cmd, false)
	cmd.Flags().StringVar(&out, "out", "", "the `FILE` to write (JSON lines); it must not exist")
	cmd.Flags().BoolVar(&remove, "remove", false, "take each message out of the queue once it is written")
	return cmd
}

func newDLQImportCmd() *cobra.Command {
	var (
		o  moveOptions
		to string
	)
	cmd := &cobra.Command{
		Use:   "import FILE.jsonl --to QUEUE [--match EXPR] [--limit N] [--rate N] [--dry-run]",
		Short: "Publish the messages of an export file to a queue, exactly",
		Long: `import publishes every message of an export file ("-" reads the standard
input) to QUEUE, exactly as it was exported, mandatory and confirmed. It
stops at the first message the broker does not take and says how many went
before it.`,
		Example:               `  acemq dlq import orders-dlq.jsonl --to orders.new.dlq`,
		Args:                  exactArgs("FILE"),
		DisableFlagsInUseLine: true,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if to == "" {
				return errors.New("import needs --to QUEUE")
			}
			return o.check(cmd, args)
		}, func(cmd *cobra.Command, args []string) error {
			in := cmd.InOrStdin()
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			return runMove(cmd, o, "import", args[0], func(ctx context.Context, c *acemq.Conn, opts deadletter.Options) (deadletter.Progress, error) {
				return deadletter.Import(ctx, c, in, to, opts)
			})
		}),
	}
	o.addFlags(cmd, true)
	cmd.Flags().StringVar(&to, "to", "", "the `QUEUE` to publish to")
	return cmd
}

func newDLQPurgeCmd() *cobra.Command {
	var (
		o   brokerOptions
		yes bool
	)
	cmd := &cobra.Command{
		Use:   "purge QUEUE --yes",
		Short: "Delete every ready message of a queue",
		Long: `purge deletes every message ready in QUEUE, for good. It asks for --yes;
export the queue first to keep a copy.`,
		Example:               `  acemq dlq export orders.new.dlq --out saved.jsonl && acemq dlq purge orders.new.dlq --yes`,
		Args:                  exactArgs("QUEUE"),
		DisableFlagsInUseLine: true,
		RunE: runE(func(*cobra.Command, []string) error {
			if !yes {
				return errors.New("purge deletes messages for good: add --yes (and export them first to keep a copy)")
			}
			return nil
		}, func(cmd *cobra.Command, args []string) error {
			conn, err := o.connect(cmd.Context(), "purge")
			if err != nil {
				return err
			}
			defer conn.Close()
			n, err := conn.PurgeQueue(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "purged %s: %d message%s deleted\n", args[0], n, plural(n))
			return err
		}),
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm that the messages are to be deleted")
	return cmd
}

// runMove connects, runs a move with progress on stderr and reports what it
// did on stdout, also when it stopped early.
func runMove(cmd *cobra.Command, o moveOptions, verb, queue string, move func(context.Context, *acemq.Conn, deadletter.Options) (deadletter.Progress, error)) error {
	ctx := cmd.Context()
	conn, err := o.connect(ctx, verb)
	if err != nil {
		return err
	}
	defer conn.Close()
	progress := newProgress(cmd.ErrOrStderr(), verb+" "+queue)
	p, err := move(ctx, conn, o.options(progress))
	progress.finish()
	if err == nil || p.Taken > 0 {
		if _, werr := io.WriteString(cmd.OutOrStdout(), deadletter.Summary(verb, queue, o.dryRun, p)+"\n"); werr != nil {
			return werr
		}
	}
	if err != nil && ctx.Err() != nil {
		return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted: %s stopped after the messages in hand; the rest are where they were", verb)}
	}
	return err
}
