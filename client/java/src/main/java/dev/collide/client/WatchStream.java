package dev.collide.client;

import dev.collide.v1.WatchRequest;
import dev.collide.v1.WatchResponse;
import io.grpc.Context;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One open Watch: standing queries (fences and contact watches) on one scene. Its messages are
 * first a snapshot (what every fence holds, every overlapping pair), then one update per applied
 * batch that changed something the watch sees, and a snapshot with resync set whenever the
 * reader fell so far behind that the server replaced the updates it had queued. Iterate it (next
 * throws a {@link CollideException} when the stream ends: NOT_FOUND when the scene is deleted,
 * CANCELLED after close), or give a {@link Listener}.
 */
public final class WatchStream implements Iterator<WatchResponse>, AutoCloseable {
  /** Receives a watch's messages on gRPC's threads. */
  public interface Listener {
    /** One message of the watch. */
    void onMessage(WatchResponse message);

    /** The end of the watch (after close too: CANCELLED). */
    void onEnd(CollideException error);
  }

  private final Context.CancellableContext context;
  private final Iterator<WatchResponse> messages;
  private final ClientCallStreamObserver<WatchRequest> call;

  private WatchStream(Context.CancellableContext context, Iterator<WatchResponse> messages,
      ClientCallStreamObserver<WatchRequest> call) {
    this.context = context;
    this.messages = messages;
    this.call = call;
  }

  static WatchStream open(CollideClient client, WatchRequest request) {
    Context.CancellableContext context = Context.current().withCancellation();
    Context previous = context.attach();
    try {
      return new WatchStream(context,
          client.blockingStream(request.getScene()).watch(request), null);
    } catch (StatusRuntimeException e) {
      context.cancel(e);
      throw CollideException.from(e);
    } finally {
      context.detach(previous);
    }
  }

  static WatchStream open(CollideClient client, WatchRequest request, Listener listener) {
    AtomicReference<ClientCallStreamObserver<WatchRequest>> holder = new AtomicReference<>();
    client.async(request.getScene()).watch(request,
        new ClientResponseObserver<WatchRequest, WatchResponse>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<WatchRequest> stream) {
            holder.set(stream);
          }

          @Override
          public void onNext(WatchResponse message) {
            listener.onMessage(message);
          }

          @Override
          public void onError(Throwable error) {
            listener.onEnd(CollideException.from(error));
          }

          @Override
          public void onCompleted() {
            listener.onEnd(new CollideException(io.grpc.Status.Code.UNAVAILABLE,
                "watch: the server ended the stream"));
          }
        });
    return new WatchStream(null, null, holder.get());
  }

  /** Waits for the stream's next message (only for a watch opened without a listener). */
  @Override
  public boolean hasNext() {
    if (messages == null) {
      throw new IllegalStateException("a watch with a listener is not iterated");
    }
    try {
      return messages.hasNext();
    } catch (StatusRuntimeException e) {
      throw CollideException.from(e);
    }
  }

  /** The next message; a CollideException when the stream ended. */
  @Override
  public WatchResponse next() {
    if (!hasNext()) {
      throw new NoSuchElementException("watch: ended");
    }
    try {
      return messages.next();
    } catch (StatusRuntimeException e) {
      throw CollideException.from(e);
    }
  }

  /** Cancels the stream. */
  @Override
  public void close() {
    if (context != null) {
      context.cancel(null);
    }
    if (call != null) {
      call.cancel("watch: closed", null);
    }
  }
}
