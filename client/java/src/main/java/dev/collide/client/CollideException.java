package dev.collide.client;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;

/**
 * What every call, stream and writer of the client fails with: the gRPC code, the server's
 * message ({@code "<field path>: <reason>"} for bad input, for example {@code
 * "bodies[2].shape.sphere.radius: must be finite and >= 0"}) and what can be read from them.
 */
public class CollideException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The trailing metadata key of a write refused because its scene moved: the new address. */
  public static final Metadata.Key<String> MOVED_TO_KEY =
      Metadata.Key.of("x-collide-moved-to", Metadata.ASCII_STRING_MARSHALLER);

  private final Status.Code code;
  private final String serverMessage;
  private final String movedTo;
  private final long sequence;

  public CollideException(Status.Code code, String message, String movedTo, long sequence,
      Throwable cause) {
    super(describe(code, message, sequence), cause);
    this.code = code;
    this.serverMessage = message;
    this.movedTo = movedTo == null ? "" : movedTo;
    this.sequence = sequence;
  }

  public CollideException(Status.Code code, String message) {
    this(code, message, "", 0, null);
  }

  private static String describe(Status.Code code, String message, long sequence) {
    String text = code + ": " + message;
    return sequence != 0 ? "batch " + Long.toUnsignedString(sequence) + ": " + text : text;
  }

  /** The gRPC status code. */
  public Status.Code getCode() {
    return code;
  }

  /** The server's message, "<field path>: <reason>" for bad input. */
  public String getServerMessage() {
    return serverMessage;
  }

  /** The field path the message starts with ("ops[2].remove"), or "" without one. */
  public String getFieldPath() {
    int i = serverMessage.indexOf(": ");
    if (i <= 0 || serverMessage.substring(0, i).contains(" ")) {
      return "";
    }
    return serverMessage.substring(0, i);
  }

  /**
   * For a write refused because its scene moved to another server (FAILED_PRECONDITION), that
   * server's address; "" otherwise.
   */
  public String getMovedTo() {
    return movedTo;
  }

  /** For an update batch the server rejected, its client_sequence; 0 otherwise. */
  public long getSequence() {
    return sequence;
  }

  /**
   * Converts an error of a gRPC call (a StatusRuntimeException keeps its moved-to trailer). A
   * call written on a connection the server just closed is UNAVAILABLE, as any other call to a
   * server that went away: grpc-java's netty transport says UNKNOWN "channel closed" when the
   * socket closes as the call is written (its ClosedChannelException), UNAVAILABLE otherwise.
   */
  public static CollideException from(Throwable error) {
    if (error instanceof CollideException e) {
      return e;
    }
    Status status = Status.fromThrowable(error);
    if (status.getCode() == Status.Code.UNKNOWN && causedByClosedChannel(status.getCause())) {
      status = Status.UNAVAILABLE.withDescription(
          "channel closed: the connection to the server closed").withCause(status.getCause());
    }
    Metadata trailers = Status.trailersFromThrowable(error);
    String movedTo = trailers != null ? trailers.get(MOVED_TO_KEY) : null;
    String message = status.getDescription() != null ? status.getDescription() : "";
    if (!(error instanceof StatusRuntimeException || error instanceof StatusException)
        && message.isEmpty()) {
      message = String.valueOf(error);
    }
    return new CollideException(status.getCode(), message, movedTo, 0, error);
  }

  /**
   * The same error as a new exception whose cause is this one, for a failure reported more than
   * once (a writer's final failure from send, flush and close): try-with-resources cannot add an
   * exception to itself as suppressed, so throwing one instance twice would hide it.
   */
  CollideException again() {
    return new CollideException(code, serverMessage, movedTo, sequence, this);
  }

  private static boolean causedByClosedChannel(Throwable cause) {
    for (int depth = 0; cause != null && depth < 8; depth++, cause = cause.getCause()) {
      if (cause instanceof java.nio.channels.ClosedChannelException) {
        return true;
      }
    }
    return false;
  }

    /** Converts a collide.v1.Error found in a stream's answer. */
  public static CollideException from(dev.collide.v1.Error error, long sequence) {
    return new CollideException(Status.fromCodeValue(error.getCode()).getCode(),
        error.getMessage(), error.getMovedTo(), sequence, null);
  }
}
