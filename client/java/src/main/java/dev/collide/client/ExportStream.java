package dev.collide.client;

import dev.collide.v1.ExportSceneRequest;
import dev.collide.v1.SceneExportMessage;
import io.grpc.Context;
import io.grpc.StatusRuntimeException;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * One ExportScene call: the export's messages (a header, body chunks, a trailer) as the server
 * sends them. Iterating throws a {@link CollideException} when the export fails; {@link #close}
 * ends it early.
 */
public final class ExportStream implements Iterator<SceneExportMessage>, AutoCloseable {
  private final Context.CancellableContext context;
  private final Iterator<SceneExportMessage> messages;

  private ExportStream(Context.CancellableContext context, Iterator<SceneExportMessage> messages) {
    this.context = context;
    this.messages = messages;
  }

  static ExportStream open(CollideClient client, String scene, int maxBodiesPerChunk) {
    Context.CancellableContext context = Context.current().withCancellation();
    Context previous = context.attach();
    try {
      return new ExportStream(context, client.blockingStream(scene).exportScene(
          ExportSceneRequest.newBuilder().setScene(scene).setMaxBodiesPerChunk(maxBodiesPerChunk)
              .build()));
    } catch (StatusRuntimeException e) {
      context.cancel(e);
      throw CollideException.from(e);
    } finally {
      context.detach(previous);
    }
  }

  @Override
  public boolean hasNext() {
    try {
      return messages.hasNext();
    } catch (StatusRuntimeException e) {
      context.cancel(e);
      throw CollideException.from(e);
    }
  }

  @Override
  public SceneExportMessage next() {
    if (!hasNext()) {
      throw new NoSuchElementException("export: ended");
    }
    return messages.next();
  }

  @Override
  public void close() {
    context.cancel(null);
  }
}
