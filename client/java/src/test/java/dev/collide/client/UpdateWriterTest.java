package dev.collide.client;

import static dev.collide.client.Builders.*;
import static dev.collide.client.ClientTest.expectError;
import static org.junit.jupiter.api.Assertions.*;

import dev.collide.v1.Body;
import dev.collide.v1.UpdateAck;
import dev.collide.v1.UpdateBatch;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class UpdateWriterTest {
  static final int BODIES = 10;

  /** The move batch n makes: body n % 10 + 1 to (n, -n, 0.5). */
  static UpdateBatch moveOf(int n) {
    return moves(List.of((long) (n % BODIES + 1)), List.of((float) n, (float) -n, 0.5f, 0f, 0f, 0f, 1f));
  }

  static void createWithBodies(CollideClient c, String scene) {
    c.createScene(scene, null);
    List<Body> bodies = new ArrayList<>();
    for (int id = 1; id <= BODIES; id++) {
      bodies.add(body(id, sphere(0.5f), at(0, 0, 0)));
    }
    c.upsertBodies(scene, bodies);
  }

  static <T> T await(CompletableFuture<T> future) {
    return UpdateWriter.await(future, Duration.ofSeconds(30));
  }

  @Test
  void batchesAreAcknowledgedInOrderAndRejectionsCarryFieldPaths() throws Exception {
    try (ServerProcess server = new ServerProcess(); CollideClient c = server.client()) {
      c.createScene("s", null);
      UpdateWriter w = c.updateWriter("s").clientId(77).firstSequence(10).open();
      var created = w.send(UpdateBatch.newBuilder().addOps(upsert(body(1, sphere(1), at(0, 0, 0))))
          .addOps(upsert(body(2, sphere(1), at(0, 0, 0)))).build());
      var badMove = w.send(moves(List.of(1L, 5L), List.of(0f, 0f, 0f, 0f, 0f, 0f, 1f, 0f, 0f, 0f,
          0f, 0f, 0f, 1f)));
      var moved = w.send(UpdateBatch.newBuilder().addOps(setPose(1, at(1, 2, 3))).setTick(4).build());
      UpdateAck first = await(created);
      assertEquals(10, first.getClientSequence());
      assertEquals(1, first.getVersion());
      CollideException rejected = expectError(Status.Code.NOT_FOUND, "moves.ids[1]",
          () -> await(badMove));
      assertEquals(11, rejected.getSequence());
      assertEquals(2, await(moved).getVersion());
      expectError(Status.Code.NOT_FOUND, "moves.ids[1]", () -> w.flush(Duration.ofSeconds(10)));
      w.flush(Duration.ofSeconds(10)); // reported once
      assertEquals(13, w.nextSequence());
      assertEquals(2, w.version());
      w.close();
      assertEquals(at(1, 2, 3).getPosition(), c.getBodies("s", List.of(1L)).getBodies(0).getPose()
          .getPosition());
      assertEquals(4, c.getScene("s").getStats().getTick());
      // Another writer with the same id replays sequence 12: acknowledged, not applied again.
      try (UpdateWriter replay = c.updateWriter("s").clientId(77).firstSequence(12).open()) {
        UpdateAck again = replay.apply(UpdateBatch.newBuilder().addOps(setPose(1, at(9, 9, 9))).build());
        assertTrue(again.getDuplicate());
        assertEquals(2, again.getVersion());
      }
      assertEquals(at(1, 2, 3).getPosition(), c.getBodies("s", List.of(1L)).getBodies(0).getPose()
          .getPosition());
      UpdateWriter a = c.updateWriter("s").open(), b = c.updateWriter("s").open();
      assertNotEquals(0, a.clientId());
      assertNotEquals(a.clientId(), b.clientId());
      a.cancel();
      b.cancel();
      UpdateWriter missing = c.updateWriter("missing").open();
      expectError(Status.Code.NOT_FOUND, "scene",
          () -> missing.apply(UpdateBatch.newBuilder().addOps(remove(1)).build()));
      missing.cancel();
    }
  }

  /**
   * Kills the server with SIGKILL twice in the middle of a stream of 600 batches (some sent while
   * it is down) and restarts it on the same port and data: every batch is acknowledged once, the
   * scene's version grew by exactly the number of batches, every body is where the last batch
   * put it.
   */
  @Test
  void everyBatchIsAppliedOnceAcrossServerKills() throws Exception {
    int total = 600;
    try (ServerProcess server = new ServerProcess("--durability=always");
        CollideClient c = server.client()) {
      createWithBodies(c, "s");
      UpdateWriter w = c.updateWriter("s").maxPending(total)
          .backoff(Duration.ofMillis(20), Duration.ofMillis(500)).open();
      ConcurrentHashMap<Long, AtomicInteger> acked = new ConcurrentHashMap<>();
      List<CompletableFuture<UpdateAck>> futures = new ArrayList<>();
      java.util.function.BiConsumer<Integer, Integer> sendRange = (from, to) -> {
        for (int n = from; n < to; n++) {
          var f = w.send(moveOf(n));
          f.thenAccept(ack -> acked.computeIfAbsent(ack.getClientSequence(),
              k -> new AtomicInteger()).incrementAndGet());
          futures.add(f);
          try {
            Thread.sleep(1);
          } catch (InterruptedException e) {
            throw new RuntimeException(e);
          }
        }
      };
      for (int[] bounds : new int[][] {{1, 200}, {200, 400}}) {
        sendRange.accept(bounds[0], bounds[0] + 100);
        server.kill();
        sendRange.accept(bounds[0] + 100, bounds[1]);
        assertTrue(w.pending() > 0, "nothing pending while the server is down");
        server.restartSamePort();
        w.flush(Duration.ofSeconds(60)); // resent: the next kill breaks a working stream
      }
      sendRange.accept(400, total + 1);
      w.flush(Duration.ofSeconds(60));
      for (var f : futures) {
        await(f);
      }
      w.close();
      assertTrue(w.reconnects() >= 2, w.reconnects() + " reconnects");
      assertEquals(total, acked.size());
      acked.forEach((seq, n) -> assertEquals(1, n.get(), "sequence " + seq));
      assertEquals(total + 1, c.getScene("s").getStats().getVersion(),
          "a batch was applied twice or lost");
      for (Body b : c.getBodies("s", List.of()).getBodiesList()) {
        int last = 0;
        for (int n = 1; n <= total; n++) {
          if (n % BODIES + 1 == b.getId()) {
            last = n;
          }
        }
        assertEquals(vec(last, -last, 0.5f), b.getPose().getPosition(), "body " + b.getId());
      }
    }
  }

  @Test
  void theWriterFailsWhenTheServerDoesNotComeBack() throws Exception {
    try (ServerProcess server = new ServerProcess(); CollideClient c = server.client()) {
      createWithBodies(c, "s");
      UpdateWriter w = c.updateWriter("s").reconnectTimeout(Duration.ofSeconds(2)).open();
      w.apply(moveOf(1));
      server.kill();
      var pending = w.send(moveOf(2));
      long started = System.nanoTime();
      CollideException e = expectError(Status.Code.UNAVAILABLE, "",
          () -> w.flush(Duration.ofSeconds(30)));
      assertTrue(System.nanoTime() - started < 15_000_000_000L);
      // The batch failed with the writer's failure (each report a new exception caused by it).
      assertSame(e.getCause(),
          assertThrows(CollideException.class, () -> await(pending)).getCause());
      expectError(Status.Code.UNAVAILABLE, "", () -> w.send(moveOf(3)));
      w.cancel();
    }
  }

  @Test
  void aBatchAnsweredWithMovedToIsResentUntilItAppliesOnce() throws Exception {
    try (ServerProcess server = new ServerProcess(); CollideClient c = server.client()) {
      createWithBodies(c, "s");
      UpdateWriter w = c.updateWriter("s").backoff(Duration.ofMillis(50), Duration.ofMillis(100))
          .open();
      assertEquals(2, w.apply(moveOf(1)).getVersion());
      // Marked as moving, the server answers the scene's batches with Error.moved_to (as a
      // follower of a replicated scene names its owner) and applies none.
      c.setSceneMoving("s", "10.0.0.4:50051");
      var second = w.send(moveOf(2));
      var third = w.send(moveOf(3));
      for (long give = System.nanoTime() + 10_000_000_000L;
          w.redirected() < 2 && System.nanoTime() < give;) {
        Thread.sleep(20);
      }
      assertTrue(w.redirected() >= 2, "redirected " + w.redirected());
      assertEquals(2, w.pending());
      assertEquals(2, c.getScene("s").getStats().getVersion());
      // The mark cleared: both batches apply, once each, and none was rejected.
      c.clearSceneMoving("s");
      w.flush(Duration.ofSeconds(20));
      assertEquals(3, await(second).getVersion());
      assertEquals(4, await(third).getVersion());
      assertFalse(await(second).getDuplicate() || await(third).getDuplicate());
      w.close();
      assertEquals(4, c.getScene("s").getStats().getVersion());
      assertEquals(at(2, -2, 0.5f).getPosition(),
          c.getBodies("s", List.of(3L)).getBodies(0).getPose().getPosition());
      assertEquals(at(3, -3, 0.5f).getPosition(),
          c.getBodies("s", List.of(4L)).getBodies(0).getPose().getPosition());
    }
  }

  @Test
  void aWriterAnsweredWithMovedToForTooLongFailsNamingTheServer() throws Exception {
    try (ServerProcess server = new ServerProcess(); CollideClient c = server.client()) {
      createWithBodies(c, "s");
      c.setSceneMoving("s", "10.0.0.4:50051");
      UpdateWriter w = c.updateWriter("s").backoff(Duration.ofMillis(50), Duration.ofMillis(100))
          .reconnectTimeout(Duration.ofSeconds(1)).open();
      var sent = w.send(moveOf(1));
      CollideException failed = expectError(Status.Code.FAILED_PRECONDITION, "",
          () -> w.flush(Duration.ofSeconds(20)));
      assertEquals("10.0.0.4:50051", failed.getMovedTo());
      assertEquals(0, failed.getSequence());
      expectError(Status.Code.FAILED_PRECONDITION, "", () -> await(sent));
      assertTrue(w.redirected() >= 2, "redirected " + w.redirected());
      assertEquals(1, c.getScene("s").getStats().getVersion());
      w.cancel();
    }
  }

  @Test
  void sendWaitsWhileMaxPendingBatchesAreUnacknowledged() throws Exception {
    try (ServerProcess server = new ServerProcess(); CollideClient c = server.client()) {
      createWithBodies(c, "s");
      UpdateWriter w = c.updateWriter("s").maxPending(2).sendTimeout(Duration.ofMillis(300)).open();
      w.apply(moveOf(1));
      server.pause();
      try {
        var first = w.send(moveOf(2));
        w.send(moveOf(3));
        expectError(Status.Code.DEADLINE_EXCEEDED, "", () -> w.send(moveOf(4)));
        assertEquals(2, w.pending());
        server.resume();
        assertEquals(3, await(first).getVersion());
        w.apply(moveOf(4));
      } finally {
        server.resume();
      }
      w.close();
    }
  }

  @Test
  void aFinalFailureInsideTryWithResourcesIsWhatIsCaught() throws Exception {
    java.nio.file.Path tokens = java.nio.file.Files.createTempFile("collide-tokens", "");
    java.nio.file.Files.writeString(tokens, "admin-token admin\nreader-token reader\n");
    try (ServerProcess server = new ServerProcess("--token_file=" + tokens);
        CollideClient admin = CollideClient.builder(server.address()).token("admin-token").build();
        CollideClient reader =
            CollideClient.builder(server.address()).token("reader-token").build()) {
      createWithBodies(admin, "s");
      // The writer fails for good (PERMISSION_DENIED): apply throws that, and close (its flush)
      // throws it again, as a second exception suppressed by the first (one instance thrown
      // twice would end as IllegalArgumentException "Self-suppression not permitted").
      CollideException caught = assertThrows(CollideException.class, () -> {
        try (UpdateWriter w = reader.updateWriter("s").open()) {
          w.apply(moveOf(1));
        }
      });
      assertEquals(Status.Code.PERMISSION_DENIED, caught.getCode());
      assertEquals(1, caught.getSuppressed().length);
      assertEquals(Status.Code.PERMISSION_DENIED,
          ((CollideException) caught.getSuppressed()[0]).getCode());
    } finally {
      java.nio.file.Files.deleteIfExists(tokens);
    }
  }

  @Test
  void cancelFailsWhatIsPending() throws Exception {
    try (ServerProcess server = new ServerProcess(); CollideClient c = server.client()) {
      createWithBodies(c, "s");
      UpdateWriter w = c.updateWriter("s").open();
      server.pause();
      try {
        var pending = w.send(moveOf(1));
        w.cancel();
        expectError(Status.Code.CANCELLED, "", () -> await(pending));
        expectError(Status.Code.CANCELLED, "", () -> w.send(moveOf(2)));
      } finally {
        server.resume();
      }
    }
  }
}
