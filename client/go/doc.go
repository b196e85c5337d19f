// Package collide is the Go client of collide, a networked collision query server.
//
// One Client holds one gRPC connection. Its methods map onto the rpcs of
// proto/collide/v1/collide.proto (package collidepb, generated from it by the build): unary
// calls take a context.Context (the client's default deadline applies when the context has
// none) and return the proto's messages. Streams have their own types: UpdateWriter (exactly-once
// update batches that survive reconnects and server restarts), QueryStream (pipelined query
// batches), WatchStream (standing queries) and ExportStream (a scene's export). Every error is,
// or wraps, an *Error with the gRPC code and the server's field path; use errors.As:
//
//	var cerr *collide.Error
//	if errors.As(err, &cerr) && cerr.Code == codes.InvalidArgument {
//		log.Printf("bad field %s", cerr.FieldPath)
//	}
//
// Client.Stub gives the generated client for any rpc without a method here.
package collide
