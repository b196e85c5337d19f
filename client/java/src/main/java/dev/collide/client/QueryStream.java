package dev.collide.client;

import dev.collide.v1.QueryBatch;
import dev.collide.v1.QueryBatchResult;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Sends query batches for one scene over a QueryStream rpc and matches the answers, which come
 * in order, to them: {@link #submit} pipelines batches (at most maxPending unanswered; it waits
 * beyond, up to the client's deadline), {@link #query} waits for one. A rejected query has its
 * QueryResult error set; a rejected batch fails its future with a {@link CollideException}. When
 * the stream breaks, the batches in flight fail with its error and the next submit opens a new
 * stream (queries only read: send them again). Thread-safe.
 */
public final class QueryStream implements AutoCloseable {
  private final CollideClient client;
  private final String scene;
  private final int maxPending;

  /** One QueryStream call and the answers it owes, in order. */
  private final class Call {
    ClientCallStreamObserver<QueryBatch> requests;
    final ArrayDeque<CompletableFuture<QueryBatchResult>> inFlight = new ArrayDeque<>();
    boolean ended;
  }

  // Guarded by this.
  private Call call;
  private boolean closed;

  QueryStream(CollideClient client, String scene, int maxPending) {
    this.client = client;
    this.scene = scene;
    this.maxPending = maxPending;
  }

  /** Sends one batch (its scene set to the stream's); the future of its answer. */
  public CompletableFuture<QueryBatchResult> submit(QueryBatch batch) {
    Duration wait = client.deadline() != null ? client.deadline() : Duration.ofSeconds(30);
    long give = System.nanoTime() + wait.toNanos();
    QueryBatch stamped = batch.toBuilder().setScene(scene).build();
    synchronized (this) {
      while (true) {
        if (closed) {
          throw new CollideException(Status.Code.FAILED_PRECONDITION, "query stream: closed");
        }
        if (call == null || call.inFlight.size() < maxPending) {
          break;
        }
        long left = give - System.nanoTime();
        if (left <= 0) {
          throw new CollideException(Status.Code.DEADLINE_EXCEEDED,
              "query stream: " + maxPending + " batches unanswered");
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(this, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new CollideException(Status.Code.CANCELLED, "interrupted");
        }
      }
      if (call == null) {
        call = open();
      }
      CompletableFuture<QueryBatchResult> answer = new CompletableFuture<>();
      call.inFlight.addLast(answer);
      call.requests.onNext(stamped);
      return answer;
    }
  }

  /** Sends one batch and waits for its answer (the client's deadline, or 30 s). */
  public QueryBatchResult query(QueryBatch batch) {
    return UpdateWriter.await(submit(batch),
        client.deadline() != null ? client.deadline() : Duration.ofSeconds(30));
  }

  /** Ends the stream once the batches in flight are answered. */
  @Override
  public void close() {
    Call c;
    synchronized (this) {
      closed = true;
      c = call;
      if (c != null) {
        c.requests.onCompleted();
      }
    }
    if (c != null) {
      List<CompletableFuture<QueryBatchResult>> left;
      synchronized (this) {
        left = new ArrayList<>(c.inFlight);
      }
      for (var answer : left) {
        try {
          answer.get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
          // Its caller sees the failure.
        }
      }
    }
  }

  private Call open() {
    Call c = new Call();
    client.async(scene).queryStream(new ClientResponseObserver<QueryBatch, QueryBatchResult>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<QueryBatch> stream) {
        c.requests = stream;
      }

      @Override
      public void onNext(QueryBatchResult result) {
        CompletableFuture<QueryBatchResult> answer;
        synchronized (QueryStream.this) {
          answer = c.inFlight.pollFirst();
          QueryStream.this.notifyAll();
        }
        if (answer == null) {
          c.requests.cancel("query stream: an answer to no batch", null);
          return;
        }
        if (result.hasError()) {
          answer.completeExceptionally(CollideException.from(result.getError(), 0));
        } else {
          answer.complete(result);
        }
      }

      @Override
      public void onError(Throwable error) {
        end(c, CollideException.from(error));
      }

      @Override
      public void onCompleted() {
        end(c, new CollideException(Status.Code.UNAVAILABLE,
            "query stream: ended with batches unanswered"));
      }
    });
    return c;
  }

  private void end(Call c, CollideException error) {
    List<CompletableFuture<QueryBatchResult>> left;
    synchronized (this) {
      c.ended = true;
      left = new ArrayList<>(c.inFlight);
      c.inFlight.clear();
      if (call == c) {
        call = null;
      }
      notifyAll();
    }
    for (var answer : left) {
      answer.completeExceptionally(error);
    }
  }
}
