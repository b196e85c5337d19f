package collide

import (
	"context"
	"crypto/tls"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	pb "collide.dev/collide/collidepb"
)

// SceneHeader is the metadata key naming the scene of a call, so that a router can shard by
// scene (docs/SCALING.md).
const SceneHeader = "x-collide-scene"

// DefaultDeadline bounds every unary call whose context has no deadline, unless
// Options.Deadline says otherwise.
const DefaultDeadline = 10 * time.Second

// Options configure a Client. The zero value is a plaintext connection without a token.
type Options struct {
	// Token is sent as `authorization: Bearer <token>` on every call when not empty.
	Token string
	// TLS, when not nil, secures the connection (with client certificates in
	// TLS.Certificates for servers run with --tls_ca).
	TLS *tls.Config
	// Deadline bounds each unary call whose context has no deadline of its own (0:
	// DefaultDeadline; negative: none). Streams have no deadline but their context's.
	Deadline time.Duration
	// MaxReconnectBackoff is the longest wait between the connection's reconnection attempts
	// (0: 1 s, instead of gRPC's 120 s).
	MaxReconnectBackoff time.Duration
	// DialOptions are appended to the client's own.
	DialOptions []grpc.DialOption
}

// Client is one connection to a collide server. It is safe for concurrent use.
type Client struct {
	conn     *grpc.ClientConn
	stub     pb.CollideClient
	token    string
	deadline time.Duration
}

// Dial connects to address ("host:port"). The connection is made in the background: a server
// that is down fails the first calls with codes.Unavailable (streams wait for it).
func Dial(address string, options *Options) (*Client, error) {
	if options == nil {
		options = &Options{}
	}
	transport := grpc.WithInsecure()
	if options.TLS != nil {
		transport = grpc.WithTransportCredentials(credentials.NewTLS(options.TLS))
	}
	maxBackoff := options.MaxReconnectBackoff
	if maxBackoff <= 0 {
		maxBackoff = time.Second
	}
	reconnect := backoff.DefaultConfig
	reconnect.BaseDelay = 50 * time.Millisecond
	reconnect.MaxDelay = maxBackoff
	dial := []grpc.DialOption{
		transport,
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: reconnect, MinConnectTimeout: 20 * time.Second}),
		// Answers such as GetBodies of a large scene may exceed gRPC's 4 MiB default.
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<31-1), grpc.MaxCallSendMsgSize(1<<31-1)),
	}
	conn, err := grpc.Dial(address, append(dial, options.DialOptions...)...)
	if err != nil {
		return nil, fromError(err, nil)
	}
	deadline := options.Deadline
	if deadline == 0 {
		deadline = DefaultDeadline
	}
	return &Client{conn: conn, stub: pb.NewCollideClient(conn), token: options.Token, deadline: deadline}, nil
}

// Close closes the connection; calls and streams still open fail.
func (c *Client) Close() error { return c.conn.Close() }

// Conn is the client's gRPC connection.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Stub is the generated client on the same connection, for rpcs without a method here. Add
// the metadata with OutgoingContext.
func (c *Client) Stub() pb.CollideClient { return c.stub }

// OutgoingContext adds the metadata every call carries: the bearer token, and the scene header
// when scene is not empty.
func (c *Client) OutgoingContext(ctx context.Context, scene string) context.Context {
	var pairs []string
	if c.token != "" {
		pairs = append(pairs, "authorization", "Bearer "+c.token)
	}
	if scene != "" {
		pairs = append(pairs, SceneHeader, scene)
	}
	if len(pairs) == 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, pairs...)
}

// unary runs one unary call with the metadata and the default deadline, and converts its error
// (with the moved-to trailer).
func (c *Client) unary(ctx context.Context, scene string, call func(context.Context, ...grpc.CallOption) error) error {
	if _, ok := ctx.Deadline(); !ok && c.deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.deadline)
		defer cancel()
	}
	var trailer metadata.MD
	return fromError(call(c.OutgoingContext(ctx, scene), grpc.Trailer(&trailer)), trailer)
}

// CreateScene creates an empty scene (options may be nil: the defaults). Admin.
func (c *Client) CreateScene(ctx context.Context, scene string, options *pb.SceneOptions) (*pb.SceneInfo, error) {
	var r *pb.CreateSceneResponse
	err := c.unary(ctx, scene, func(ctx context.Context, o ...grpc.CallOption) (err error) {
		r, err = c.stub.CreateScene(ctx, &pb.CreateSceneRequest{Scene: scene, Options: options}, o...)
		return
	})
	return r.GetScene(), err
}

// DeleteScene deletes a scene and its bodies. Admin.
func (c *Client) DeleteScene(ctx context.Context, scene string) error {
	return c.unary(ctx, scene, func(ctx context.Context, o ...grpc.CallOption) error {
		_, err := c.stub.DeleteScene(ctx, &pb.DeleteSceneRequest{Scene: scene}, o...)
		return err
	})
}

// ListScenes returns every scene the caller may see, sorted by name.
func (c *Client) ListScenes(ctx context.Context) ([]*pb.SceneInfo, error) {
	var r *pb.ListScenesResponse
	err := c.unary(ctx, "", func(ctx context.Context, o ...grpc.CallOption) (err error) {
		r, err = c.stub.ListScenes(ctx, &pb.ListScenesRequest{}, o...)
		return
	})
	return r.GetScenes(), err
}

// GetScene returns one scene's settings and counters.
func (c *Client) GetScene(ctx context.Context, scene string) (*pb.SceneInfo, error) {
	var r *pb.GetSceneResponse
	err := c.unary(ctx, scene, func(ctx context.Context, o ...grpc.CallOption) (err error) {
		r, err = c.stub.GetScene(ctx, &pb.GetSceneRequest{Scene: scene}, o...)
		return
	})
	return r.GetScene(), err
}

// UpsertBodies creates or replaces bodies as one batch. Writer.
func (c *Client) UpsertBodies(ctx context.Context, scene string, bodies ...*pb.Body) (*pb.WriteResponse, error) {
	var r *pb.WriteResponse
	err := c.unary(ctx, scene, func(ctx context.Context, o ...grpc.CallOption) (err error) {
		r, err = c.stub.UpsertBodies(ctx, &pb.UpsertBodiesRequest{Scene: scene, Bodies: bodies}, o...)
		return
	})
	return r, err
}

// RemoveBodies removes bodies (each must exist) as one batch. Writer.
func (c *Client) RemoveBodies(ctx context.Context, scene string, ids ...uint64) (*pb.WriteResponse, error) {
	var r *pb.WriteResponse
	err := c.unary(ctx, scene, func(ctx context.Context, o ...grpc.CallOption) (err error) {
		r, err = c.stub.RemoveBodies(ctx, &pb.RemoveBodiesRequest{Scene: scene, Ids: ids}, o...)
		return
	})
	return r, err
}

// GetBodies reads bodies (no ids: every body of the scene).
func (c *Client) GetBodies(ctx context.Context, scene string, ids ...uint64) (*pb.GetBodiesResponse, error) {
	var r *pb.GetBodiesResponse
	err := c.unary(ctx, scene, func(ctx context.Context, o ...grpc.CallOption) (err error) {
		r, err = c.stub.GetBodies(ctx, &pb.GetBodiesRequest{Scene: scene, Ids: ids}, o...)
		return
	})
	return r, err
}

// Raycast runs one ray query (request.Scene names the scene).
func (c *Client) Raycast(ctx context.Context, request *pb.RaycastRequest) (*pb.QueryResponse, error) {
	var r *pb.QueryResponse
	err := c.unary(ctx, request.GetScene(), func(ctx context.Context, o ...grpc.CallOption) (err error) {
		r, err = c.stub.Raycast(ctx, request, o...)
		return
	})
	return r, err
}

// SphereCast runs one sphere cast.
func (c *Client) SphereCast(ctx context.Context, request *pb.SphereCastRequest) (*pb.QueryResponse, error) {
	var r *pb.QueryResponse
	err := c.unary(ctx, request.GetScene(), func(ctx context.Context, o ...grpc.CallOption) (err error) {
		r, err = c.stub.SphereCast(ctx, request, o...)
		return
	})
	return r, err
}

// Overlap runs one overlap query.
func (c *Client) Overlap(ctx context.Context, request *pb.OverlapRequest) (*pb.QueryResponse, error) {
	var r *pb.QueryResponse
	err := c.unary(ctx, request.GetScene(), func(ctx context.Context, o ...grpc.CallOption) (err error) {
		r, err = c.stub.Overlap(ctx, request, o...)
		return
	})
	return r, err
}

// GetServerStats returns the server's build, uptime, memory, counters and at most maxScenes
// scenes' figures (negative: the server's default, 100). Admin.
func (c *Client) GetServerStats(ctx context.Context, maxScenes int) (*pb.GetServerStatsResponse, error) {
	request := &pb.GetServerStatsRequest{}
	if maxScenes >= 0 {
		n := uint32(maxScenes)
		request.MaxScenes = &n
	}
	var r *pb.GetServerStatsResponse
	err := c.unary(ctx, "", func(ctx context.Context, o ...grpc.CallOption) (err error) {
		r, err = c.stub.GetServerStats(ctx, request, o...)
		return
	})
	return r, err
}

// SetSceneMoving marks a scene as moving to destination: writes to it are then refused with
// codes.FailedPrecondition and Error.MovedTo = destination. Admin.
func (c *Client) SetSceneMoving(ctx context.Context, scene, destination string) (*pb.SceneInfo, error) {
	return c.setSceneMoving(ctx, &pb.SetSceneMovingRequest{Scene: scene, Destination: destination})
}

// ClearSceneMoving clears the mark of SetSceneMoving (a failed move's rollback). Admin.
func (c *Client) ClearSceneMoving(ctx context.Context, scene string) (*pb.SceneInfo, error) {
	return c.setSceneMoving(ctx, &pb.SetSceneMovingRequest{Scene: scene, Clear: true})
}

func (c *Client) setSceneMoving(ctx context.Context, request *pb.SetSceneMovingRequest) (*pb.SceneInfo, error) {
	var r *pb.SetSceneMovingResponse
	err := c.unary(ctx, request.Scene, func(ctx context.Context, o ...grpc.CallOption) (err error) {
		r, err = c.stub.SetSceneMoving(ctx, request, o...)
		return
	})
	return r.GetScene(), err
}
