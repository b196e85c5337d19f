package collide

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "collide.dev/collide/collidepb"
)

// MovedToKey is the trailing metadata key of a unary write refused because its scene moved to
// another server: that server's address.
const MovedToKey = "x-collide-moved-to"

// Error is what every call, stream and writer of this package fails with: the gRPC code, the
// server's message ("<field path>: <reason>" for bad input, for example
// "bodies[2].shape.sphere.radius: must be finite and >= 0") and what can be read from them.
type Error struct {
	// Code is the gRPC status code (codes.InvalidArgument, codes.NotFound, ...).
	Code codes.Code
	// Message is the server's message.
	Message string
	// FieldPath is the field path the message starts with ("ops[2].remove"), or "" without one.
	FieldPath string
	// MovedTo is, for a write refused because its scene moved to another server
	// (codes.FailedPrecondition), that server's address; "" otherwise.
	MovedTo string
	// Sequence is, for an update batch the server rejected, its client_sequence; 0 otherwise.
	Sequence uint64
	cause    error
}

func (e *Error) Error() string {
	if e.Sequence != 0 {
		return fmt.Sprintf("collide: batch %d: %s: %s", e.Sequence, codeName(e.Code), e.Message)
	}
	return fmt.Sprintf("collide: %s: %s", codeName(e.Code), e.Message)
}

// Unwrap returns the error this one was made from (a context's error, a transport's), if any.
func (e *Error) Unwrap() error { return e.cause }

// GRPCStatus lets status.FromError and status.Code read the error's code and message.
func (e *Error) GRPCStatus() *status.Status { return status.New(e.Code, e.Message) }

// codeName is the code's name as the proto spells it (INVALID_ARGUMENT).
func codeName(c codes.Code) string {
	names := map[codes.Code]string{
		codes.OK: "OK", codes.Canceled: "CANCELLED", codes.Unknown: "UNKNOWN",
		codes.InvalidArgument: "INVALID_ARGUMENT", codes.DeadlineExceeded: "DEADLINE_EXCEEDED",
		codes.NotFound: "NOT_FOUND", codes.AlreadyExists: "ALREADY_EXISTS",
		codes.PermissionDenied: "PERMISSION_DENIED", codes.ResourceExhausted: "RESOURCE_EXHAUSTED",
		codes.FailedPrecondition: "FAILED_PRECONDITION", codes.Aborted: "ABORTED",
		codes.OutOfRange: "OUT_OF_RANGE", codes.Unimplemented: "UNIMPLEMENTED",
		codes.Internal: "INTERNAL", codes.Unavailable: "UNAVAILABLE", codes.DataLoss: "DATA_LOSS",
		codes.Unauthenticated: "UNAUTHENTICATED",
	}
	if name, ok := names[c]; ok {
		return name
	}
	return fmt.Sprintf("CODE(%d)", uint32(c))
}

// fieldPath is the field path `message` starts with: the text before the first ": ", when it
// has no space.
func fieldPath(message string) string {
	i := strings.Index(message, ": ")
	if i <= 0 || strings.Contains(message[:i], " ") {
		return ""
	}
	return message[:i]
}

func newError(code codes.Code, message string) *Error {
	return &Error{Code: code, Message: message, FieldPath: fieldPath(message)}
}

// errorf is a client-side error (no server message), for example a full writer.
func errorf(code codes.Code, format string, args ...interface{}) *Error {
	return newError(code, fmt.Sprintf(format, args...))
}

// fromError converts an error of a gRPC call (with its trailing metadata, which may be nil).
func fromError(err error, trailer metadata.MD) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	var e *Error
	if s, ok := status.FromError(err); ok {
		e = newError(s.Code(), s.Message())
	} else if errors.Is(err, context.DeadlineExceeded) {
		e = newError(codes.DeadlineExceeded, err.Error())
	} else if errors.Is(err, context.Canceled) {
		e = newError(codes.Canceled, err.Error())
	} else {
		e = newError(codes.Unknown, err.Error())
	}
	if values := trailer.Get(MovedToKey); len(values) > 0 {
		e.MovedTo = values[0]
	}
	e.cause = err
	return e
}

// fromContext is the error of a wait that `ctx` ended.
func fromContext(ctx context.Context, format string, args ...interface{}) *Error {
	code := codes.Canceled
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		code = codes.DeadlineExceeded
	}
	e := errorf(code, format, args...)
	e.cause = ctx.Err()
	return e
}

// fromProto converts a collide.v1.Error found in a stream's answer.
func fromProto(e *pb.Error) *Error {
	out := newError(codes.Code(uint32(e.GetCode())), e.GetMessage())
	out.MovedTo = e.GetMovedTo()
	return out
}
