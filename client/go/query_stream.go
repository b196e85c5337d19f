package collide

import (
	"context"
	"io"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	pb "collide.dev/collide/collidepb"
)

// QueryStreamOptions configure a QueryStream; zero fields take the defaults shown.
type QueryStreamOptions struct {
	// MaxPending is the most batches sent and not yet answered; Submit waits beyond it
	// (0: 1024).
	MaxPending int
}

// QueryAnswer is the answer to one batch of a QueryStream, once it comes.
type QueryAnswer struct {
	done   chan struct{}
	result *pb.QueryBatchResult
	err    error
}

// Done is closed once the batch is answered or failed.
func (a *QueryAnswer) Done() <-chan struct{} { return a.done }

// Wait waits for the batch's answer: every result computed against one scene version. A
// rejected query has its QueryResult.Error set; a rejected batch (unknown scene, too many
// queries, min_version not reached in time) or a broken stream is an *Error.
func (a *QueryAnswer) Wait(ctx context.Context) (*pb.QueryBatchResult, error) {
	select {
	case <-a.done:
		return a.result, a.err
	case <-ctx.Done():
		return nil, fromContext(ctx, "query stream: no answer")
	}
}

func (a *QueryAnswer) resolve(result *pb.QueryBatchResult, err error) {
	a.result, a.err = result, err
	close(a.done)
}

// queryCall is one QueryStream call and the answers it owes, in order.
type queryCall struct {
	stream   pb.Collide_QueryStreamClient
	cancel   context.CancelFunc
	inFlight []*QueryAnswer
	finished chan struct{}
}

// QueryStream sends query batches for one scene over a QueryStream rpc and matches the answers,
// which come in order, to them: Submit pipelines batches (at most MaxPending unanswered), Query
// waits for one. When the stream breaks, the batches in flight fail with its error and the next
// Submit opens a new stream (queries only read: send them again). Safe for concurrent use.
type QueryStream struct {
	client     *Client
	scene      string
	ctx        context.Context
	maxPending int

	sendMu sync.Mutex // orders Submit's append and write; held while waiting for room
	mu     sync.Mutex
	room   chan struct{} // closed and replaced when an answer makes room
	call   *queryCall
	closed bool
}

// OpenQueryStream returns a QueryStream for scene (options may be nil); the rpc opens with the
// first batch, under ctx (its end ends the stream).
func (c *Client) OpenQueryStream(ctx context.Context, scene string, options *QueryStreamOptions) *QueryStream {
	max := 1024
	if options != nil && options.MaxPending > 0 {
		max = options.MaxPending
	}
	return &QueryStream{client: c, scene: scene, ctx: ctx, maxPending: max, room: make(chan struct{})}
}

// Submit sends one batch (its scene is set to the stream's; the caller's message is not
// changed) and returns its QueryAnswer. It waits while MaxPending batches are unanswered,
// until ctx ends.
func (s *QueryStream) Submit(ctx context.Context, batch *pb.QueryBatch) (*QueryAnswer, error) {
	b := proto.Clone(batch).(*pb.QueryBatch)
	b.Scene = s.scene
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	for {
		if s.closed {
			s.mu.Unlock()
			return nil, errorf(codes.FailedPrecondition, "query stream: closed")
		}
		if s.call == nil || len(s.call.inFlight) < s.maxPending {
			break
		}
		room := s.room
		s.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return nil, fromContext(ctx, "query stream: %d batches unanswered", s.maxPending)
		}
		s.mu.Lock()
	}
	if s.call == nil {
		if err := s.openLocked(); err != nil {
			s.mu.Unlock()
			return nil, err
		}
	}
	call := s.call
	answer := &QueryAnswer{done: make(chan struct{})}
	call.inFlight = append(call.inFlight, answer)
	s.mu.Unlock()
	// A failed write shows as the reader's error, which fails this answer too.
	_ = call.stream.Send(b)
	return answer, nil
}

// Query sends one batch and waits for its answer. When ctx has no deadline, the client's
// default deadline bounds the wait.
func (s *QueryStream) Query(ctx context.Context, batch *pb.QueryBatch) (*pb.QueryBatchResult, error) {
	if _, ok := ctx.Deadline(); !ok && s.client.deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.client.deadline)
		defer cancel()
	}
	answer, err := s.Submit(ctx, batch)
	if err != nil {
		return nil, err
	}
	return answer.Wait(ctx)
}

// Close ends the stream once the batches in flight are answered, and waits for them.
func (s *QueryStream) Close() error {
	s.sendMu.Lock()
	s.mu.Lock()
	s.closed = true
	call := s.call
	s.mu.Unlock()
	if call != nil {
		_ = call.stream.CloseSend()
	}
	s.sendMu.Unlock()
	if call != nil {
		<-call.finished
		call.cancel()
	}
	return nil
}

func (s *QueryStream) openLocked() error {
	ctx, cancel := context.WithCancel(s.client.OutgoingContext(s.ctx, s.scene))
	stream, err := s.client.stub.QueryStream(ctx)
	if err != nil {
		cancel()
		return fromError(err, nil)
	}
	call := &queryCall{stream: stream, cancel: cancel, finished: make(chan struct{})}
	s.call = call
	go s.read(call)
	return nil
}

// read takes the answers of one call until it ends, then fails what is left.
func (s *QueryStream) read(call *queryCall) {
	defer close(call.finished)
	var failure error
	for {
		result, err := call.stream.Recv()
		if err != nil {
			if err != io.EOF {
				failure = fromError(err, call.stream.Trailer())
			}
			break
		}
		s.mu.Lock()
		if len(call.inFlight) == 0 {
			s.mu.Unlock()
			failure = errorf(codes.DataLoss, "query stream: an answer to no batch")
			call.cancel()
			break
		}
		answer := call.inFlight[0]
		call.inFlight[0] = nil
		call.inFlight = call.inFlight[1:]
		close(s.room)
		s.room = make(chan struct{})
		s.mu.Unlock()
		if result.Error != nil {
			answer.resolve(nil, fromProto(result.Error))
		} else {
			answer.resolve(result, nil)
		}
	}
	s.mu.Lock()
	left := call.inFlight
	call.inFlight = nil
	if s.call == call {
		s.call = nil
	}
	close(s.room)
	s.room = make(chan struct{})
	s.mu.Unlock()
	if failure == nil {
		failure = errorf(codes.Unavailable, "query stream: ended with batches unanswered")
	}
	for _, answer := range left {
		answer.resolve(nil, failure)
	}
	call.cancel()
}
