package collide

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	pb "collide.dev/collide/collidepb"
)

// UpdateWriterOptions configure an UpdateWriter; zero fields take the defaults shown.
type UpdateWriterOptions struct {
	// ClientID is the writer's id for deduplication (0: a random non-zero 64-bit id). Reuse an
	// id only with sequences above those already used with it.
	ClientID uint64
	// FirstSequence is the first batch's client_sequence (0: 1).
	FirstSequence uint64
	// MaxPending is the most batches unacknowledged at once; Send waits beyond it (0: 1024).
	MaxPending int
	// InitialBackoff and MaxBackoff bound the reconnection delays, doubling from the first to
	// the second (0: 50 ms and 2 s).
	InitialBackoff, MaxBackoff time.Duration
	// ReconnectTimeout is how long the writer tries to reach the server without a working
	// stream before it fails with codes.Unavailable (0: 60 s); also how long it resends batches
	// refused unapplied by servers that could not write the scene (Error.moved_to, or
	// codes.Unavailable) before it fails with the last such answer (an *Error with its code, and
	// MovedTo naming the server that writes the scene when there is one).
	ReconnectTimeout time.Duration
}

// PendingBatch is one batch sent through an UpdateWriter: its ack once the server answers.
type PendingBatch struct {
	// Sequence is the batch's client_sequence.
	Sequence uint64
	batch    *pb.UpdateBatch
	done     chan struct{}
	ack      *pb.UpdateAck
	err      error
}

// Done is closed once the batch is acknowledged, rejected, or the writer failed.
func (p *PendingBatch) Done() <-chan struct{} { return p.done }

// Wait waits for the batch's ack: the UpdateAck, or an *Error (with Sequence set when the
// server rejected the batch; nothing of it was applied).
func (p *PendingBatch) Wait(ctx context.Context) (*pb.UpdateAck, error) {
	select {
	case <-p.done:
		return p.ack, p.err
	case <-ctx.Done():
		return nil, fromContext(ctx, "update writer: batch %d not acknowledged", p.Sequence)
	}
}

// UpdateWriter sends update batches to one scene over an UpdateStream, exactly once.
//
// Send stamps each batch with the writer's client id and the next client_sequence and keeps it
// until the server acknowledges it; a goroutine reads the acks. When the stream breaks
// (codes.Unavailable, a server restart, the server ending the stream) the writer reconnects
// with exponential backoff and resends the unacknowledged batches in order with the same ids
// and sequences: the server acknowledges those it had applied as duplicates and never applies
// them twice. Other failures (codes.PermissionDenied, ...) are final: every unacknowledged
// batch fails with them, and so do Send and Flush from then on. A rejected batch (an ack with
// an error) is not resent: its PendingBatch fails with an *Error whose Sequence is set, and
// Flush returns it. A batch answered with Error.moved_to (a follower of a replicated scene, or
// a scene moving away, names the server that writes it), counted by Redirected, or with
// codes.Unavailable (the owner cannot write the scene just now: its lease is being renewed, its
// replicated log is not answering, the server is stopping), counted by Unavailable, was not
// applied and is no rejection: the server answers the stream's later batches the same way, so
// the writer ends the stream and resends them all on a new one after its backoff (a router in
// front of the servers sends them to the owner), bounded by ReconnectTimeout like any
// reconnection. Safe for concurrent use.
type UpdateWriter struct {
	client   *Client
	scene    string
	clientID uint64
	options  UpdateWriterOptions
	ctx      context.Context
	cancel   context.CancelFunc
	finished chan struct{}

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced on every change of the fields below
	pending     []*PendingBatch
	sent        int // pending[:sent] were written to the current stream
	next        uint64
	rejected    []*Error
	failure     error
	closing     bool
	version     uint64
	reconnects  int
	redirected  int
	unavailable int
}

// redirection is a session's end when the server answered the oldest batch with the address of
// the server that writes the scene, or with codes.Unavailable: nothing of it, nor of the batches
// behind it on that stream, was applied.
type redirection struct{ answer *Error }

func (r *redirection) Error() string { return r.answer.Error() }

// OpenUpdateWriter starts a writer for scene (options may be nil). The stream opens in the
// background; ctx bounds the writer's whole life (its end cancels the writer).
func (c *Client) OpenUpdateWriter(ctx context.Context, scene string, options *UpdateWriterOptions) (*UpdateWriter, error) {
	o := UpdateWriterOptions{}
	if options != nil {
		o = *options
	}
	if o.MaxPending < 0 {
		return nil, errorf(codes.InvalidArgument, "max_pending: must be >= 1, got %d", o.MaxPending)
	}
	if o.MaxPending == 0 {
		o.MaxPending = 1024
	}
	if o.InitialBackoff <= 0 {
		o.InitialBackoff = 50 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 2 * time.Second
	}
	if o.ReconnectTimeout <= 0 {
		o.ReconnectTimeout = 60 * time.Second
	}
	if o.FirstSequence == 0 {
		o.FirstSequence = 1
	}
	id := o.ClientID
	for id == 0 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, errorf(codes.Internal, "client_id: %v", err)
		}
		id = binary.LittleEndian.Uint64(b[:])
	}
	w := &UpdateWriter{client: c, scene: scene, clientID: id, options: o, finished: make(chan struct{}),
		changed: make(chan struct{}), next: o.FirstSequence}
	w.ctx, w.cancel = context.WithCancel(ctx)
	go w.run()
	return w, nil
}

// ClientID is the id every batch of the writer carries.
func (w *UpdateWriter) ClientID() uint64 { return w.clientID }

// Scene is the scene the writer updates.
func (w *UpdateWriter) Scene() string { return w.scene }

// Send queues one batch (its scene, client_id and client_sequence are set by the writer; the
// caller's message is not changed) and returns its PendingBatch. It waits while MaxPending
// batches are unacknowledged, until ctx ends (then codes.DeadlineExceeded or codes.Canceled).
// Success means kept, not applied: wait on the PendingBatch, or Flush.
func (w *UpdateWriter) Send(ctx context.Context, batch *pb.UpdateBatch) (*PendingBatch, error) {
	b := proto.Clone(batch).(*pb.UpdateBatch)
	b.Scene = w.scene
	b.ClientId = w.clientID
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if w.failure != nil {
			return nil, w.failure
		}
		if w.closing {
			return nil, errorf(codes.FailedPrecondition, "update writer: closed")
		}
		if len(w.pending) < w.options.MaxPending {
			break
		}
		if !w.waitLocked(ctx) {
			return nil, fromContext(ctx, "update writer: %d batches unacknowledged", len(w.pending))
		}
	}
	b.ClientSequence = w.next
	w.next++
	p := &PendingBatch{Sequence: b.ClientSequence, batch: b, done: make(chan struct{})}
	w.pending = append(w.pending, p)
	w.broadcastLocked()
	return p, nil
}

// Apply sends one batch and waits for its ack.
func (w *UpdateWriter) Apply(ctx context.Context, batch *pb.UpdateBatch) (*pb.UpdateAck, error) {
	p, err := w.Send(ctx, batch)
	if err != nil {
		return nil, err
	}
	return p.Wait(ctx)
}

// Flush waits until every batch sent is acknowledged, then returns the first error not yet
// returned by Flush: the writer's failure, or a rejected batch (Flush forgets the rejections it
// reports). codes.DeadlineExceeded when ctx ends first.
func (w *UpdateWriter) Flush(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.pending) > 0 && w.failure == nil {
		if !w.waitLocked(ctx) {
			return fromContext(ctx, "update writer: flush: %d batches unacknowledged", len(w.pending))
		}
	}
	if w.failure != nil {
		return w.failure
	}
	if len(w.rejected) > 0 {
		first := w.rejected[0]
		w.rejected = nil
		return first
	}
	return nil
}

// Close flushes, then ends the stream and waits for the writer's goroutine. When Flush fails,
// the writer is cancelled and Close returns Flush's error.
func (w *UpdateWriter) Close(ctx context.Context) error {
	if err := w.Flush(ctx); err != nil {
		w.Cancel()
		return err
	}
	w.mu.Lock()
	w.closing = true
	w.broadcastLocked()
	w.mu.Unlock()
	select {
	case <-w.finished:
		return nil
	case <-ctx.Done():
		w.Cancel()
		return fromContext(ctx, "update writer: close")
	}
}

// Cancel ends the stream now; unacknowledged batches fail with codes.Canceled.
func (w *UpdateWriter) Cancel() {
	w.cancel()
	<-w.finished
}

// Version is the highest scene version an ack reported: a QueryBatch with this min_version
// sees every batch acknowledged so far.
func (w *UpdateWriter) Version() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.version
}

// Pending is the number of batches sent and not yet acknowledged.
func (w *UpdateWriter) Pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

// NextSequence is the client_sequence the next batch gets.
func (w *UpdateWriter) NextSequence() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.next
}

// Reconnects counts the times the stream was opened again after breaking.
func (w *UpdateWriter) Reconnects() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reconnects
}

// Redirected counts the batches answered by a server that does not write the scene
// (Error.moved_to), not applied, and sent again on a new stream.
func (w *UpdateWriter) Redirected() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.redirected
}

// Unavailable counts the batches answered UNAVAILABLE (the owner cannot write the scene just
// now: its lease is being renewed, its replicated log is not answering, the server is
// stopping), not applied, and sent again on a new stream.
func (w *UpdateWriter) Unavailable() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.unavailable
}

// Err is the writer's final failure, or nil while it works.
func (w *UpdateWriter) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failure
}

func (w *UpdateWriter) broadcastLocked() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// waitLocked waits (unlocking meanwhile) for a change or the end of ctx; false when ctx ended.
func (w *UpdateWriter) waitLocked(ctx context.Context) bool {
	changed := w.changed
	w.mu.Unlock()
	defer w.mu.Lock()
	select {
	case <-changed:
		return true
	case <-ctx.Done():
		return false
	}
}

// retryable tells whether a broken stream is reopened (anything else is final).
func retryable(code codes.Code) bool {
	switch code {
	case codes.Unavailable, codes.Aborted, codes.Internal, codes.Unknown:
		return true
	}
	return false
}

// run owns the stream: opens it, reads the acks, reconnects with backoff, fails the writer.
func (w *UpdateWriter) run() {
	defer close(w.finished)
	delay := w.options.InitialBackoff
	brokenSince := time.Now() // no working stream yet
	// The last answer refusing a batch unapplied (Error.moved_to, or codes.Unavailable) since
	// the last applied batch, if any.
	var redirected *Error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			select {
			case <-time.After(delay):
			case <-w.ctx.Done():
				w.fail(errorf(codes.Canceled, "update writer: cancelled"))
				return
			}
			delay *= 2
			if delay > w.options.MaxBackoff {
				delay = w.options.MaxBackoff
			}
		}
		remaining := w.options.ReconnectTimeout - time.Since(brokenSince)
		if remaining <= 0 {
			if redirected != nil {
				w.fail(&Error{Code: redirected.Code, Message: fmt.Sprintf(
					"update writer: scene %q: gave up after %v of batches refused unapplied by servers "+
						"that could not write it: %s",
					w.scene, w.options.ReconnectTimeout, redirected.Message),
					MovedTo: redirected.MovedTo})
				return
			}
			w.fail(errorf(codes.Unavailable, "update writer: could not reach the server for %v", w.options.ReconnectTimeout))
			return
		}
		progressed, err := w.session(attempt > 0, remaining)
		if progressed {
			delay = w.options.InitialBackoff
			brokenSince = time.Now()
			redirected = nil
		}
		if err == nil {
			return // closed cleanly
		}
		if w.ctx.Err() != nil {
			w.fail(errorf(codes.Canceled, "update writer: cancelled"))
			return
		}
		var r *redirection
		if errors.As(err, &r) {
			redirected = r.answer
			continue
		}
		var e *Error
		if !errors.As(err, &e) || !retryable(e.Code) {
			w.fail(err)
			return
		}
	}
}

// session opens one stream (waiting at most openWait for the server), writes the pending
// batches on it and reads acks until it breaks. It returns whether the stream worked (an ack
// came, or it opened with nothing pending), and nil when the writer was closed cleanly.
func (w *UpdateWriter) session(reconnect bool, openWait time.Duration) (bool, error) {
	ctx, cancel := context.WithCancel(w.client.OutgoingContext(w.ctx, w.scene))
	defer cancel()
	timer := time.AfterFunc(openWait, cancel)
	stream, err := w.client.stub.UpdateStream(ctx, grpc.WaitForReady(true))
	if !timer.Stop() {
		return false, errorf(codes.Unavailable, "update writer: could not reach the server for %v", w.options.ReconnectTimeout)
	}
	if err != nil {
		return false, fromError(err, nil)
	}
	w.mu.Lock()
	w.sent = 0
	if reconnect {
		w.reconnects++
	}
	// A stream that opens with nothing to resend works: an idle writer's time without acks
	// is no sign of a server that is gone.
	progressed := len(w.pending) == 0
	w.mu.Unlock()
	sender := make(chan struct{})
	go func() {
		defer close(sender)
		w.sendLoop(ctx, stream)
	}()
	defer func() { cancel(); <-sender }()
	for {
		ack, err := stream.Recv()
		if err == io.EOF {
			w.mu.Lock()
			clean := w.closing && len(w.pending) == 0
			w.mu.Unlock()
			if clean {
				return progressed, nil
			}
			return progressed, errorf(codes.Unavailable, "update writer: the server ended the stream")
		}
		if err != nil {
			return progressed, fromError(err, stream.Trailer())
		}
		if err := w.onAck(ack); err != nil {
			return progressed, err
		}
		progressed = true
	}
}

// sendLoop writes the pending batches not yet written to this stream, in order, and half-closes
// it once the writer is closing with nothing pending.
func (w *UpdateWriter) sendLoop(ctx context.Context, stream pb.Collide_UpdateStreamClient) {
	w.mu.Lock()
	for {
		if ctx.Err() != nil {
			w.mu.Unlock()
			return
		}
		if w.closing && len(w.pending) == 0 {
			w.mu.Unlock()
			_ = stream.CloseSend()
			return
		}
		if w.sent < len(w.pending) {
			batch := w.pending[w.sent].batch
			w.sent++
			w.mu.Unlock()
			if stream.Send(batch) != nil {
				return // the reader sees why
			}
			w.mu.Lock()
			continue
		}
		w.waitLocked(ctx)
	}
}

// onAck matches an ack with the oldest pending batch.
func (w *UpdateWriter) onAck(ack *pb.UpdateAck) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return errorf(codes.DataLoss, "update stream: ack for sequence %d, no batch unacknowledged", ack.ClientSequence)
	}
	p := w.pending[0]
	if ack.ClientSequence != p.Sequence {
		return errorf(codes.DataLoss, "update stream: ack for sequence %d, expected %d", ack.ClientSequence, p.Sequence)
	}
	moved := ack.Error != nil && ack.Error.MovedTo != ""
	unavailable := ack.Error != nil && codes.Code(uint32(ack.Error.Code)) == codes.Unavailable
	if moved || unavailable {
		// Not applied: another server writes the scene, or its owner cannot write it just now.
		// Kept: the stream ends and the next one resends from this batch.
		if moved {
			w.redirected++
		} else {
			w.unavailable++
		}
		w.broadcastLocked()
		e := fromProto(ack.Error)
		e.Sequence = p.Sequence
		return &redirection{answer: e}
	}
	w.pending[0] = nil
	w.pending = w.pending[1:]
	if w.sent > 0 {
		w.sent--
	}
	if ack.Error != nil {
		e := fromProto(ack.Error)
		e.Sequence = p.Sequence
		w.rejected = append(w.rejected, e)
		p.err = e
	} else {
		if ack.Version > w.version {
			w.version = ack.Version
		}
		p.ack = ack
	}
	close(p.done)
	w.broadcastLocked()
	return nil
}

// fail ends the writer: every pending batch fails with err, and so does every later call.
func (w *UpdateWriter) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failure == nil && !(w.closing && len(w.pending) == 0) {
		w.failure = err
	}
	for _, p := range w.pending {
		p.err = err
		close(p.done)
	}
	w.pending = nil
	w.sent = 0
	w.broadcastLocked()
}
