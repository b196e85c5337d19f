package collide

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	pb "collide.dev/collide/collidepb"
)

// ExportStream is one ExportScene call: the export's messages (a header, body chunks, a
// trailer) as the server sends them.
type ExportStream struct {
	stream pb.Collide_ExportSceneClient
	cancel context.CancelFunc
}

// ExportScene starts exporting scene, at most maxBodiesPerChunk bodies per chunk (0: the
// server's 4,096). Admin.
func (c *Client) ExportScene(ctx context.Context, scene string, maxBodiesPerChunk uint32) (*ExportStream, error) {
	ctx, cancel := context.WithCancel(c.OutgoingContext(ctx, scene))
	stream, err := c.stub.ExportScene(ctx, &pb.ExportSceneRequest{Scene: scene, MaxBodiesPerChunk: maxBodiesPerChunk})
	if err != nil {
		cancel()
		return nil, fromError(err, nil)
	}
	return &ExportStream{stream: stream, cancel: cancel}, nil
}

// Recv returns the next message, io.EOF after the trailer, or an *Error.
func (e *ExportStream) Recv() (*pb.SceneExportMessage, error) {
	m, err := e.stream.Recv()
	if err == io.EOF {
		e.cancel()
		return nil, io.EOF
	}
	if err != nil {
		e.cancel()
		return nil, fromError(err, e.stream.Trailer())
	}
	return m, nil
}

// Close ends the export (early, when the trailer was not read).
func (e *ExportStream) Close() { e.cancel() }

// ExportSummary says what an export file holds.
type ExportSummary struct {
	// Version and Tick of the exported state (its header's).
	Version, Tick uint64
	// Bodies and Chunks written (the trailer's counts).
	Bodies, Chunks uint64
	// Bytes written to the file.
	Bytes int64
}

// ExportSceneToFile writes the export of scene to a new file at path in format (the format of
// `collide scene export`). On error the file is removed.
func (c *Client) ExportSceneToFile(ctx context.Context, scene, path string, format ExportFormat) (summary *ExportSummary, err error) {
	if err := format.check(); err != nil {
		return nil, err
	}
	stream, err := c.ExportScene(ctx, scene, 0)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			summary = nil
		}
	}()
	writer := NewExportFileWriter(f, format)
	summary = &ExportSummary{}
	for {
		m, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := writer.Write(m); err != nil {
			return nil, err
		}
		if h := m.GetHeader(); h != nil {
			summary.Version, summary.Tick = h.Version, h.Tick
		}
		if t := m.GetTrailer(); t != nil {
			summary.Bodies, summary.Chunks = t.BodyCount, t.ChunkCount
		}
	}
	summary.Bytes = writer.Bytes()
	return summary, nil
}

// ImportOptions say where an import goes.
type ImportOptions struct {
	// Scene is the name of the scene to create ("": the header's name).
	Scene string
	// Replace replaces a scene of that name (else codes.AlreadyExists).
	Replace bool
	// CheckOnly checks the stream as an import and creates nothing.
	CheckOnly bool
}

// ImportScene creates a scene from the messages next returns (io.EOF after the last; another
// ExportStream's Recv, an ExportFileReader's Next), all or nothing, and returns it once it is
// durable. An error from next cancels the import (nothing is created) and is returned. Admin.
func (c *Client) ImportScene(ctx context.Context, next func() (*pb.SceneExportMessage, error), options *ImportOptions) (*pb.SceneInfo, error) {
	if options == nil {
		options = &ImportOptions{}
	}
	ctx, cancel := context.WithCancel(c.OutgoingContext(ctx, options.Scene))
	defer cancel()
	var trailer metadata.MD
	stream, err := c.stub.ImportScene(ctx, grpc.Trailer(&trailer))
	if err != nil {
		return nil, fromError(err, nil)
	}
	first := true
	for {
		m, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			cancel()
			return nil, err
		}
		request := &pb.ImportSceneRequest{Message: m}
		if first {
			request.Scene, request.Replace, request.CheckOnly = options.Scene, options.Replace, options.CheckOnly
			first = false
		}
		if err := stream.Send(request); err != nil {
			break // the server ended the call: CloseAndRecv says why
		}
	}
	response, err := stream.CloseAndRecv()
	if err != nil {
		return nil, fromError(err, trailer)
	}
	return response.GetScene(), nil
}

// ImportSceneFile imports an export file (its format guessed from its first bytes). A file
// that does not parse is codes.InvalidArgument at `messages[i]`, wrapping an *ExportFileError.
func (c *Client) ImportSceneFile(ctx context.Context, path string, options *ImportOptions) (*pb.SceneInfo, error) {
	reader, err := OpenExportFile(path, "")
	if err != nil {
		return nil, err
	}
	defer reader.Close()
	info, err := c.ImportScene(ctx, reader.Next, options)
	var fileErr *ExportFileError
	if errors.As(err, &fileErr) {
		e := errorf(codes.InvalidArgument, "messages[%d]: %s (%s)", fileErr.Index, fileErr.Reason, path)
		e.cause = fileErr
		return nil, e
	}
	return info, err
}

// ExportFileError is a file that is not a well-formed export file.
type ExportFileError struct {
	// Index is the message that could not be read (0 for the first).
	Index  int
	Reason string
}

func (e *ExportFileError) Error() string { return fmt.Sprintf("message %d: %s", e.Index, e.Reason) }
