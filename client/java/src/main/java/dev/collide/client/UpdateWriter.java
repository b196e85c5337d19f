package dev.collide.client;

import dev.collide.v1.UpdateAck;
import dev.collide.v1.UpdateBatch;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Sends update batches to one scene over an UpdateStream, exactly once.
 *
 * <p>{@link #send} stamps each batch with the writer's client id and the next client_sequence and
 * keeps it until the server acknowledges it. When the stream breaks (UNAVAILABLE, a server
 * restart, the server ending the stream) the writer reconnects with exponential backoff and
 * resends the unacknowledged batches in order with the same ids and sequences: the server
 * acknowledges those it had applied as duplicates and never applies them twice. Other failures
 * (PERMISSION_DENIED, ...) are final: every unacknowledged batch fails with them, and so do
 * {@link #send} and {@link #flush} from then on. A rejected batch (an ack with an error) is not
 * resent: its future fails with a {@link CollideException} whose sequence is set, and {@link
 * #flush} throws it. A batch answered with Error.moved_to (a follower of a replicated scene, or a
 * scene moving away, names the server that writes it) or with UNAVAILABLE (the owner cannot write
 * the scene just now: its lease is being renewed, its replicated log is not answering, the server
 * is stopping) was not applied and is no rejection, nor are the batches behind it on the stream
 * (the server answers them the same way): the writer ends the stream and resends them all on a
 * new one after its backoff (a router in front of the servers sends them to the owner), counted
 * by {@link #redirected} and {@link #unavailable}; after {@code reconnectTimeout} without an
 * applied batch it fails with the last such answer ({@link CollideException#getMovedTo} names the
 * server, if any). Thread-safe. {@link #close} flushes and ends the stream.
 */
public final class UpdateWriter implements AutoCloseable {
  /** Options of a writer; {@link #open} starts it. */
  public static final class Builder {
    private final CollideClient client;
    private final String scene;
    private long clientId;
    private long firstSequence = 1;
    private int maxPending = 1024;
    private Duration sendTimeout = Duration.ofSeconds(30);
    private Duration initialBackoff = Duration.ofMillis(50);
    private Duration maxBackoff = Duration.ofSeconds(2);
    private Duration reconnectTimeout = Duration.ofSeconds(60);

    Builder(CollideClient client, String scene) {
      this.client = client;
      this.scene = scene;
    }

    /** The id for deduplication (default: a random non-zero 64-bit id). */
    public Builder clientId(long id) {
      this.clientId = id;
      return this;
    }

    /** The first batch's client_sequence (default 1). */
    public Builder firstSequence(long sequence) {
      this.firstSequence = sequence;
      return this;
    }

    /** The most batches unacknowledged at once; send waits beyond (default 1024). */
    public Builder maxPending(int maxPending) {
      if (maxPending < 1) {
        throw new IllegalArgumentException("maxPending must be >= 1");
      }
      this.maxPending = maxPending;
      return this;
    }

    /** How long send waits for room before DEADLINE_EXCEEDED (default 30 s). */
    public Builder sendTimeout(Duration timeout) {
      this.sendTimeout = timeout;
      return this;
    }

    /** The reconnection delays, doubling from the first to the second (default 50 ms, 2 s). */
    public Builder backoff(Duration initial, Duration max) {
      this.initialBackoff = initial;
      this.maxBackoff = max;
      return this;
    }

    /** Fails with UNAVAILABLE after this long without a working stream (default 60 s). */
    public Builder reconnectTimeout(Duration timeout) {
      this.reconnectTimeout = timeout;
      return this;
    }

    /** Starts the writer (the stream opens in the background). */
    public UpdateWriter open() {
      long id = clientId;
      SecureRandom random = new SecureRandom();
      while (id == 0) {
        id = random.nextLong();
      }
      return new UpdateWriter(this, id);
    }
  }

  private record Pending(long sequence, UpdateBatch batch, CompletableFuture<UpdateAck> future) {}

  private final CollideClient client;
  private final String scene;
  private final long clientId;
  private final Builder options;
  private final ScheduledExecutorService timer;
  private final CountDownLatch finished = new CountDownLatch(1);

  // Guarded by this.
  private final ArrayDeque<Pending> pending = new ArrayDeque<>();
  private final List<CollideException> rejected = new ArrayList<>();
  private long nextSequence;
  private CollideException failure;
  private boolean closing;
  private boolean cancelled;
  private long version;
  private int reconnects;
  private int redirected;
  private int unavailable;
  // The last answer refusing a batch unapplied (Error.moved_to or UNAVAILABLE) since the last
  // applied batch, or null.
  private CollideException redirection;
  private int generation; // the current stream's number
  private ClientCallStreamObserver<UpdateBatch> requests;
  private long brokenSinceNanos; // 0 while the stream works
  private long delayNanos;

  private UpdateWriter(Builder options, long clientId) {
    this.client = options.client;
    this.scene = options.scene;
    this.clientId = clientId;
    this.options = options;
    this.nextSequence = options.firstSequence;
    this.delayNanos = options.initialBackoff.toNanos();
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "collide-update-writer");
      t.setDaemon(true);
      return t;
    });
    synchronized (this) {
      brokenSinceNanos = System.nanoTime();
      openLocked();
    }
  }

  /** The id every batch of the writer carries. */
  public long clientId() {
    return clientId;
  }

  /**
   * Queues one batch (its scene, client_id and client_sequence are set by the writer) and
   * returns the future of its ack. Waits while maxPending batches are unacknowledged, at most
   * the send timeout (then DEADLINE_EXCEEDED). Success means kept, not applied.
   */
  public CompletableFuture<UpdateAck> send(UpdateBatch batch) {
    long give = System.nanoTime() + options.sendTimeout.toNanos();
    synchronized (this) {
      while (true) {
        throwIfUnusableLocked();
        if (pending.size() < options.maxPending) {
          break;
        }
        long left = give - System.nanoTime();
        if (left <= 0) {
          throw new CollideException(Status.Code.DEADLINE_EXCEEDED,
              "update writer: " + pending.size() + " batches unacknowledged");
        }
        waitLocked(left);
      }
      UpdateBatch stamped = batch.toBuilder().setScene(scene).setClientId(clientId)
          .setClientSequence(nextSequence++).build();
      Pending p = new Pending(stamped.getClientSequence(), stamped, new CompletableFuture<>());
      pending.addLast(p);
      if (requests != null) {
        requests.onNext(stamped);
      }
      return p.future;
    }
  }

  /** Sends one batch and waits for its ack (the client's deadline, or 30 s). */
  public UpdateAck apply(UpdateBatch batch) {
    return await(send(batch), client.deadline() != null ? client.deadline() : Duration.ofSeconds(30));
  }

  /** Waits for a future of this writer, throwing its CollideException. */
  static <T> T await(CompletableFuture<T> future, Duration timeout) {
    try {
      return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw e.getCause() instanceof CollideException failed ? failed.again()
          : CollideException.from(e.getCause());
    } catch (java.util.concurrent.TimeoutException e) {
      throw new CollideException(Status.Code.DEADLINE_EXCEEDED, "no answer in " + timeout);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CollideException(Status.Code.CANCELLED, "interrupted");
    }
  }

  /**
   * Waits until every batch sent is acknowledged, then throws the first error not yet thrown by
   * flush: the writer's failure, or a rejected batch. DEADLINE_EXCEEDED after {@code timeout}.
   */
  public void flush(Duration timeout) {
    long give = System.nanoTime() + timeout.toNanos();
    synchronized (this) {
      while (!pending.isEmpty() && failure == null) {
        long left = give - System.nanoTime();
        if (left <= 0) {
          throw new CollideException(Status.Code.DEADLINE_EXCEEDED,
              "update writer: flush: " + pending.size() + " batches unacknowledged");
        }
        waitLocked(left);
      }
      if (failure != null) {
        throw failure.again();
      }
      if (!rejected.isEmpty()) {
        CollideException first = rejected.get(0);
        rejected.clear();
        throw first.again();
      }
    }
  }

  /** Flushes (30 s), then ends the stream. When flush throws, the writer is cancelled. */
  @Override
  public void close() {
    close(Duration.ofSeconds(30));
  }

  /** Flushes, then ends the stream. When flush throws, the writer is cancelled. */
  public void close(Duration timeout) {
    synchronized (this) {
      if (closing || cancelled) {
        return;
      }
    }
    try {
      flush(timeout);
    } catch (CollideException e) {
      cancel();
      throw e;
    }
    synchronized (this) {
      closing = true;
      if (requests != null) {
        requests.onCompleted();
      }
      notifyAll();
    }
    try {
      finished.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    timer.shutdownNow();
  }

  /** Ends the stream now; unacknowledged batches fail with CANCELLED. */
  public void cancel() {
    ClientCallStreamObserver<UpdateBatch> call;
    synchronized (this) {
      cancelled = true;
      call = requests;
      requests = null;
    }
    if (call != null) {
      call.cancel("update writer: cancelled", null);
    }
    fail(new CollideException(Status.Code.CANCELLED, "update writer: cancelled"));
    timer.shutdownNow();
  }

  /** The highest scene version an ack reported (for QueryBatch.min_version). */
  public synchronized long version() {
    return version;
  }

  /** Batches sent and not yet acknowledged. */
  public synchronized int pending() {
    return pending.size();
  }

  /** The client_sequence the next batch gets. */
  public synchronized long nextSequence() {
    return nextSequence;
  }

  /** How many times the stream was opened again after breaking. */
  public synchronized int reconnects() {
    return reconnects;
  }

  /**
   * Batches answered by a server that does not write the scene (Error.moved_to), not applied, and
   * sent again on a new stream.
   */
  public synchronized int redirected() {
    return redirected;
  }

  /**
   * Batches answered UNAVAILABLE (the owner cannot write the scene just now: its lease is being
   * renewed, its replicated log is not answering, the server is stopping) and resent.
   */
  public synchronized int unavailable() {
    return unavailable;
  }

  private void throwIfUnusableLocked() {
    if (failure != null) {
      throw failure.again();
    }
    if (closing || cancelled) {
      throw new CollideException(Status.Code.FAILED_PRECONDITION, "update writer: closed");
    }
  }

  private void waitLocked(long nanos) {
    try {
      TimeUnit.NANOSECONDS.timedWait(this, nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CollideException(Status.Code.CANCELLED, "interrupted");
    }
  }

  /**
   * Opens a stream (waiting for the server) and writes every pending batch on it, in order. The
   * stream counts as working once it is ready with nothing pending, or once an ack comes; after
   * {@code reconnectTimeout} without either since it broke, the writer fails with UNAVAILABLE.
   */
  private void openLocked() {
    int gen = ++generation;
    client.async(scene).withWaitForReady().updateStream(new ClientResponseObserver<UpdateBatch, UpdateAck>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<UpdateBatch> stream) {
        requests = stream; // under the writer's lock: openLocked holds it
        stream.setOnReadyHandler(() -> {
          synchronized (UpdateWriter.this) {
            if (gen == generation && pending.isEmpty()) {
              brokenSinceNanos = 0;
            }
          }
        });
      }

      @Override
      public void onNext(UpdateAck ack) {
        onAck(gen, ack);
      }

      @Override
      public void onError(Throwable error) {
        onBroken(gen, CollideException.from(error));
      }

      @Override
      public void onCompleted() {
        synchronized (UpdateWriter.this) {
          if (closing && pending.isEmpty()) {
            finished.countDown();
            return;
          }
        }
        onBroken(gen, new CollideException(Status.Code.UNAVAILABLE,
            "update writer: the server ended the stream"));
      }
    });
    if (requests != null) {
      for (Pending p : pending) {
        requests.onNext(p.batch);
      }
    }
    poke(gen, options.initialBackoff.toNanos());
    if (brokenSinceNanos != 0) {
      long since = brokenSinceNanos;
      schedule(() -> giveUpIfStillBroken(since),
          Math.max(0, since + options.reconnectTimeout.toNanos() - System.nanoTime()));
    }
  }

  /**
   * While stream {@code gen} waits for the server, asks the channel to reconnect now, then again
   * after doubling delays up to maxBackoff: grpc-java's own backoff grows to 120 s, too long to
   * notice a restarted server.
   */
  private void poke(int gen, long delayNanos) {
    synchronized (this) {
      if (gen != generation || brokenSinceNanos == 0 || failure != null || cancelled) {
        return;
      }
    }
    client.channel().resetConnectBackoff();
    long next = Math.min(delayNanos * 2, options.maxBackoff.toNanos());
    schedule(() -> poke(gen, next), delayNanos);
  }

  /** Runs {@code task} on the writer's timer after {@code nanos} (nothing once it ended). */
  private void schedule(Runnable task, long nanos) {
    try {
      timer.schedule(task, nanos, TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // The writer ended.
    }
  }

  private void giveUpIfStillBroken(long since) {
    ClientCallStreamObserver<UpdateBatch> call;
    CollideException answer;
    synchronized (this) {
      if (brokenSinceNanos != since || failure != null || cancelled) {
        return; // an ack came since: the stream worked
      }
      call = requests;
      requests = null;
      generation++;
      answer = redirection;
    }
    if (call != null) {
      call.cancel("update writer: gave up", null);
    }
    if (answer != null) {
      fail(new CollideException(answer.getCode(),
          "update writer: scene \"" + scene + "\": gave up after " + options.reconnectTimeout
              + " of batches refused unapplied by servers that could not write the scene: "
              + answer.getServerMessage(),
          answer.getMovedTo(), 0, null));
      return;
    }
    fail(new CollideException(Status.Code.UNAVAILABLE,
        "update writer: could not reach the server for " + options.reconnectTimeout));
  }

  /**
   * The oldest batch was answered by a server that does not write the scene (Error.moved_to) or
   * by an owner that cannot write it just now (UNAVAILABLE): nothing of it was applied, nor of
   * the batches behind it on this stream (the server refuses them all). The stream is dropped
   * with its remaining answers, and a new one resends them after the backoff.
   */
  private void redirectLocked(Pending p, UpdateAck ack) {
    if (ack.getError().getMovedTo().isEmpty()) {
      unavailable++;
    } else {
      redirected++;
    }
    redirection = CollideException.from(ack.getError(), p.sequence);
    ClientCallStreamObserver<UpdateBatch> call = requests;
    requests = null;
    generation++;
    if (call != null) {
      call.cancel("update writer: the server could not write the scene", null);
    }
    if (brokenSinceNanos == 0) {
      long since = System.nanoTime();
      brokenSinceNanos = since;
      schedule(() -> giveUpIfStillBroken(since), options.reconnectTimeout.toNanos());
    }
    long delay = delayNanos;
    delayNanos = Math.min(delayNanos * 2, options.maxBackoff.toNanos());
    schedule(this::reconnect, delay);
  }

  private void onAck(int gen, UpdateAck ack) {
    Pending p;
    CollideException error = null;
    synchronized (this) {
      if (gen != generation) {
        return;
      }
      p = pending.peekFirst();
      if (p == null || p.sequence != ack.getClientSequence()) {
        error = new CollideException(Status.Code.DATA_LOSS, "update stream: ack for sequence "
            + Long.toUnsignedString(ack.getClientSequence()) + ", expected "
            + (p == null ? "none" : Long.toUnsignedString(p.sequence)));
      } else if (ack.hasError() && (!ack.getError().getMovedTo().isEmpty()
          || ack.getError().getCode() == Status.Code.UNAVAILABLE.value())) {
        redirectLocked(p, ack);
        return;
      } else {
        pending.removeFirst();
        brokenSinceNanos = 0;
        redirection = null;
        delayNanos = options.initialBackoff.toNanos();
        if (ack.hasError()) {
          rejected.add(CollideException.from(ack.getError(), p.sequence));
        } else {
          version = Math.max(version, ack.getVersion());
        }
        notifyAll();
      }
    }
    if (error != null) {
      fail(error);
      ClientCallStreamObserver<UpdateBatch> call;
      synchronized (this) {
        call = requests;
        requests = null;
        generation++;
      }
      if (call != null) {
        call.cancel("update writer: protocol error", null);
      }
      return;
    }
    if (ack.hasError()) {
      p.future.completeExceptionally(CollideException.from(ack.getError(), p.sequence));
    } else {
      p.future.complete(ack);
    }
  }

  private static boolean retryable(Status.Code code) {
    return code == Status.Code.UNAVAILABLE || code == Status.Code.ABORTED
        || code == Status.Code.INTERNAL || code == Status.Code.UNKNOWN;
  }

  private void onBroken(int gen, CollideException error) {
    synchronized (this) {
      if (gen != generation || cancelled || failure != null) {
        return;
      }
      requests = null;
      if (!retryable(error.getCode())) {
        generation++;
      } else {
        if (brokenSinceNanos == 0) {
          brokenSinceNanos = System.nanoTime();
        }
        long delay = delayNanos;
        delayNanos = Math.min(delayNanos * 2, options.maxBackoff.toNanos());
        schedule(this::reconnect, delay);
        return;
      }
    }
    fail(error);
  }

  private void reconnect() {
    synchronized (this) {
      if (cancelled || failure != null) {
        return;
      }
      if (closing && pending.isEmpty()) {
        finished.countDown();
        return;
      }
      reconnects++;
      openLocked();
    }
  }

  /** Final failure: every pending batch fails with {@code error}, and so does every call. */
  private void fail(CollideException error) {
    List<Pending> failed;
    synchronized (this) {
      if (failure == null && !(closing && pending.isEmpty())) {
        failure = error;
      }
      failed = new ArrayList<>(pending);
      pending.clear();
      notifyAll();
    }
    for (Pending p : failed) {
      p.future.completeExceptionally(error);
    }
    finished.countDown();
  }
}
