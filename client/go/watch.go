package collide

import (
	"context"

	pb "collide.dev/collide/collidepb"
)

// WatchStream is one open Watch: standing queries (fences and contact watches) on one scene.
// Recv returns first a snapshot (what every fence holds, every overlapping pair), then one
// update per applied batch that changed something the watch sees, and a snapshot with Resync
// set whenever the reader fell so far behind that the server replaced the updates it had
// queued.
type WatchStream struct {
	stream pb.Collide_WatchClient
	ctx    context.Context
	cancel context.CancelFunc
}

// Watch opens a watch (request.Scene names the scene); ctx bounds the stream. A bad request
// (codes.InvalidArgument with the field path, `fences[3].shape...`) or an unknown scene is the
// first Recv's error.
func (c *Client) Watch(ctx context.Context, request *pb.WatchRequest) (*WatchStream, error) {
	ctx, cancel := context.WithCancel(c.OutgoingContext(ctx, request.GetScene()))
	stream, err := c.stub.Watch(ctx, request)
	if err != nil {
		cancel()
		return nil, fromError(err, nil)
	}
	return &WatchStream{stream: stream, ctx: ctx, cancel: cancel}, nil
}

// Recv waits for the next message. The stream ends with an *Error: codes.NotFound when the
// scene is deleted, codes.Canceled after Close or the end of the context.
func (w *WatchStream) Recv() (*pb.WatchResponse, error) {
	m, err := w.stream.Recv()
	if err != nil {
		return nil, fromError(err, w.stream.Trailer())
	}
	return m, nil
}

// Messages returns a channel of the stream's messages, read by a goroutine until the stream
// ends (or Close); then it sends the ending *Error on errs and closes both channels. Use
// either Messages or Recv, not both.
func (w *WatchStream) Messages() (messages <-chan *pb.WatchResponse, errs <-chan error) {
	m := make(chan *pb.WatchResponse)
	e := make(chan error, 1)
	go func() {
		defer close(m)
		defer close(e)
		for {
			message, err := w.Recv()
			if err != nil {
				e <- err
				return
			}
			select {
			case m <- message:
			case <-w.ctx.Done():
				e <- fromContext(w.ctx, "watch: closed")
				return
			}
		}
	}()
	return m, e
}

// Close cancels the stream.
func (w *WatchStream) Close() { w.cancel() }
