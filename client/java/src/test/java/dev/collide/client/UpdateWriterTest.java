package dev.collide.client;

import static dev.collide.client.Builders.*;
import static dev.collide.client.ClientTest.expectError;
import static org.junit.jupiter.api.Assertions.*;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import com.google.protobuf.util.JsonFormat;
import dev.collide.v1.Body;
import dev.collide.v1.Durability;
import dev.collide.v1.SceneOptions;
import dev.collide.v1.UpdateAck;
import dev.collide.v1.UpdateBatch;
import io.grpc.Status;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
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

  /** nats-server on PATH, else /usr/sbin/nats-server; null when there is none. */
  static Path natsServerBinary() {
    List<Path> candidates = new ArrayList<>();
    String path = System.getenv("PATH");
    if (path != null) {
      for (String dir : path.split(File.pathSeparator)) {
        if (!dir.isEmpty()) {
          candidates.add(Path.of(dir, "nats-server"));
        }
      }
    }
    candidates.add(Path.of("/usr/sbin/nats-server"));
    return candidates.stream().filter(Files::isExecutable).findFirst().orElse(null);
  }

  /**
   * A real nats-server child process with JetStream, on a free port of 127.0.0.1, its data and
   * ports file in a temporary directory.
   */
  static final class NatsServer implements AutoCloseable {
    final Path dir;
    final Process process;
    final String url;

    NatsServer(Path binary) throws Exception {
      dir = Files.createTempDirectory("collide-java-nats-");
      process = new ProcessBuilder(binary.toString(), "-js", "-a", "127.0.0.1", "-p", "-1", "-m",
          "-1", "-sd", dir.resolve("js").toString(), "--ports_file_dir", dir.toString())
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("nats.log").toFile()))
          .start();
      url = readUrl(dir.resolve("nats-server_" + process.pid() + ".ports"));
    }

    /** The client url of the ports file ({"nats":["nats://127.0.0.1:PORT"],...}), once whole. */
    private String readUrl(Path portsFile) throws Exception {
      long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (System.nanoTime() < giveUp) {
        if (Files.exists(portsFile)) {
          try {
            Struct.Builder ports = Struct.newBuilder();
            JsonFormat.parser().merge(Files.readString(portsFile), ports);
            var nats = ports.getFieldsOrThrow("nats").getListValue();
            if (nats.getValuesCount() > 0) {
              return nats.getValues(0).getStringValue();
            }
          } catch (InvalidProtocolBufferException | IllegalArgumentException e) {
            // Half written: read it again.
          }
        }
        if (!process.isAlive()) {
          throw new IOException("nats-server exited: " + logs());
        }
        Thread.sleep(20);
      }
      throw new IOException("nats-server wrote no ports file in 20 s: " + logs());
    }

    /** Sends SIGSTOP or SIGCONT with kill(1), which must succeed. */
    void signal(String name) throws IOException, InterruptedException {
      Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid()))
          .redirectErrorStream(true).start();
      String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertEquals(0, kill.waitFor(), "kill -" + name + ": " + output);
    }

    String logs() {
      try {
        return Files.readString(dir.resolve("nats.log"));
      } catch (IOException e) {
        return "";
      }
    }

    /** Continues it (it may be stopped), kills it and waits, then removes its directory. */
    @Override
    public void close() throws IOException {
      try {
        if (process.isAlive()) {
          signal("CONT");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        process.destroyForcibly();
        try {
          process.waitFor();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        try (var paths = Files.walk(dir)) {
          paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
    }
  }

  /**
   * A replicated scene's owner whose lease runs out before the owners' bucket renews it (its
   * nats-server stopped with SIGSTOP for about 1.8 s, three 600 ms leases) refuses writes with
   * UNAVAILABLE, and every later batch of the same stream the same way, unapplied. The writer
   * keeps those batches and resends them on a new stream until they apply: none rejected, each
   * applied exactly once.
   */
  @Test
  void batchesAnsweredUnavailableWhileTheOwnersLeaseRanOutAreResentAndAppliedOnce()
      throws Exception {
    Path natsBinary = natsServerBinary();
    Assumptions.assumeTrue(natsBinary != null,
        "nats-server is not installed (scripts/lib/setup.sh installs Debian's nats-server)");
    int total = 150;
    try (NatsServer nats = new NatsServer(natsBinary);
        ServerProcess server = new ServerProcess("--nats_url=" + nats.url,
            "--replication_replicas=1", "--replication_lease_ms=600",
            "--replication_publish_timeout_ms=1000");
        CollideClient c = server.client()) {
      // The server may still be connecting to NATS: UNAVAILABLE until it is.
      SceneOptions replicated =
          SceneOptions.newBuilder().setDurability(Durability.DURABILITY_REPLICATED).build();
      for (long give = System.nanoTime() + 20_000_000_000L;;) {
        try {
          c.createScene("r", replicated);
          break;
        } catch (CollideException e) {
          if (e.getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > give) {
            throw e;
          }
          Thread.sleep(100);
        }
      }
      long before = c.getScene("r").getStats().getVersion();
      UpdateWriter w = c.updateWriter("r").backoff(Duration.ofMillis(10), Duration.ofMillis(100))
          .reconnectTimeout(Duration.ofSeconds(30)).open();
      List<CompletableFuture<UpdateAck>> futures = new ArrayList<>();
      try {
        for (int i = 0; i < total; i++) {
          if (i == 30) {
            nats.signal("STOP");
          }
          if (i == 120) {
            nats.signal("CONT");
          }
          futures.add(w.send(UpdateBatch.newBuilder()
              .addOps(upsert(body(1 + i, sphere(0.5f), at(1 + i, 0, 0)))).build()));
          Thread.sleep(20);
        }
      } finally {
        nats.signal("CONT");
      }
      CollideException[] closed = {null};
      try {
        w.close(Duration.ofSeconds(30));
      } catch (CollideException e) {
        closed[0] = e;
      }
      List<String> rejected = new ArrayList<>();
      int acknowledged = 0;
      for (var f : futures) {
        try {
          await(f);
          acknowledged++;
        } catch (CollideException e) {
          rejected.add(e.getMessage());
        }
      }
      assertEquals("", String.join("\n", rejected), "rejected batches");
      assertNull(closed[0], () -> closed[0] + "\n" + server.logs());
      assertEquals(total, acknowledged);
      assertTrue(w.unavailable() >= 1, "no batch was sent while the lease had run out");
      assertEquals(before + total, c.getScene("r").getStats().getVersion(),
          "a batch was applied twice or lost");
      List<Long> ids = new ArrayList<>();
      for (Body b : c.getBodies("r", List.of()).getBodiesList()) {
        ids.add(b.getId());
      }
      for (long id = 1; id <= total; id++) {
        assertTrue(ids.contains(id), "body " + id);
      }
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
