package dev.collide.client;

import static dev.collide.client.Builders.*;
import static org.junit.jupiter.api.Assertions.*;

import dev.collide.v1.Body;
import dev.collide.v1.Hit;
import dev.collide.v1.Mode;
import dev.collide.v1.QueryResponse;
import dev.collide.v1.RaycastRequest;
import dev.collide.v1.SceneInfo;
import dev.collide.v1.SceneOptions;
import dev.collide.v1.UpdateAck;
import dev.collide.v1.UpdateBatch;
import io.grpc.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class ClientTest {
  static CollideException expectError(Status.Code code, String fieldPath, Executable call) {
    CollideException e = assertThrows(CollideException.class, call);
    assertEquals(code, e.getCode(), e.getMessage());
    assertEquals(fieldPath, e.getFieldPath(), e.getMessage());
    return e;
  }

  /** The distance along a unit direction at which a ray first meets a sphere (the oracle). */
  static double raySphere(double[] o, double[] d, double[] c, double r) {
    double[] m = {o[0] - c[0], o[1] - c[1], o[2] - c[2]};
    double b = m[0] * d[0] + m[1] * d[1] + m[2] * d[2];
    double cc = m[0] * m[0] + m[1] * m[1] + m[2] * m[2] - r * r;
    if (cc <= 0) {
      return 0;
    }
    double disc = b * b - cc;
    if (b > 0 || disc < 0) {
      return Double.NaN;
    }
    return -b - Math.sqrt(disc);
  }

  @Test
  void scenesBodiesAndRaycastsMatchABruteForceOracle() throws Exception {
    long seed = 20240608;
    Random rng = new Random(seed);
    try (ServerProcess server = new ServerProcess(); CollideClient c = server.client()) {
      SceneInfo info = c.createScene("world", SceneOptions.newBuilder().setHistoryTicks(8).build());
      assertEquals(8, info.getOptions().getHistoryTicks());
      List<Body> bodies = new ArrayList<>();
      double[][] centres = new double[201][];
      double[] radii = new double[201];
      for (int id = 1; id <= 200; id++) {
        float x = (float) (rng.nextDouble() * 40 - 20), y = (float) (rng.nextDouble() * 40 - 20),
            z = (float) (rng.nextDouble() * 40 - 20), r = (float) (0.2 + rng.nextDouble() * 2);
        centres[id] = new double[] {x, y, z};
        radii[id] = r;
        bodies.add(body(id, sphere(r), at(x, y, z)));
      }
      assertEquals(1, c.upsertBodies("world", bodies).getVersion());
      assertEquals(200, c.listScenes().get(0).getStats().getBodyCount());
      var got = c.getBodies("world", List.of(7L, 1000L));
      assertEquals(7, got.getBodies(0).getId());
      assertEquals(List.of(1000L), got.getMissingIdsList());
      for (int i = 0; i < 100; i++) {
        double[] o = {(float) (rng.nextDouble() * 60 - 30), (float) (rng.nextDouble() * 60 - 30),
            (float) (rng.nextDouble() * 60 - 30)};
        double[] d = {rng.nextGaussian(), rng.nextGaussian(), rng.nextGaussian()};
        double n = Math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        for (int k = 0; k < 3; k++) {
          d[k] = (float) (d[k] / n);
        }
        QueryResponse r = c.raycast(RaycastRequest.newBuilder().setScene("world")
            .setMode(Mode.MODE_ALL).setMaxHits(1000).setRay(ray(vec((float) o[0], (float) o[1],
                (float) o[2]), vec((float) d[0], (float) d[1], (float) d[2]), 100)).build());
        List<double[]> want = new ArrayList<>();
        for (int id = 1; id <= 200; id++) {
          double dist = raySphere(o, d, centres[id], radii[id]);
          if (!Double.isNaN(dist) && dist <= 100) {
            want.add(new double[] {id, dist});
          }
        }
        want.sort(Comparator.comparingDouble(w -> w[1]));
        assertEquals(want.size(), r.getHitsCount(), "seed " + seed + ", ray " + i);
        for (int k = 0; k < want.size(); k++) {
          Hit h = r.getHits(k);
          assertEquals((long) want.get(k)[0], h.getBodyId(), "seed " + seed + ", ray " + i);
          assertEquals(want.get(k)[1], h.getDistance(), 1e-3, "seed " + seed + ", ray " + i);
        }
      }
      c.deleteScene("world");
      expectError(Status.Code.NOT_FOUND, "scene", () -> c.getScene("world"));
    }
  }

  @Test
  void badInputIsAnExceptionWithItsCodeAndFieldPath() throws Exception {
    try (ServerProcess server = new ServerProcess(); CollideClient c = server.client()) {
      c.createScene("s", null);
      CollideException e = expectError(Status.Code.INVALID_ARGUMENT,
          "bodies[1].shape.sphere.radius", () -> c.upsertBodies("s", List.of(
              body(1, sphere(1), at(0, 0, 0)), body(2, sphere(Float.NaN), at(0, 0, 0)))));
      assertEquals("", e.getMovedTo());
      assertEquals(0, e.getSequence());
      expectError(Status.Code.INVALID_ARGUMENT, "ray.direction", () -> c.raycast(
          RaycastRequest.newBuilder().setScene("s").setRay(ray(vec(0, 0, 0), vec(0, 0, 0), 1))
              .build()));
      expectError(Status.Code.ALREADY_EXISTS, "scene", () -> c.createScene("s", null));
      expectError(Status.Code.NOT_FOUND, "ids[0]", () -> c.removeBodies("s", List.of(-1L)));
    }
  }

  @Test
  void deadlinesBoundEveryCall() throws Exception {
    try (ServerProcess server = new ServerProcess(); CollideClient c = server.client()) {
      c.createScene("s", null);
      RaycastRequest waiting = RaycastRequest.newBuilder().setScene("s").setMinVersion(1000)
          .setRay(ray(vec(0, 0, 0), vec(1, 0, 0), 1)).build();
      long started = System.nanoTime();
      expectError(Status.Code.DEADLINE_EXCEEDED, "",
          () -> c.withDeadline(Duration.ofMillis(300)).raycast(waiting));
      long elapsedMs = (System.nanoTime() - started) / 1_000_000;
      assertTrue(elapsedMs >= 250 && elapsedMs < 5000, elapsedMs + " ms");
    }
  }

  @Test
  void aConnectionClosedAsACallIsWrittenIsUnavailable() {
    // What grpc-java's netty transport reports then (Utils.statusFromThrowable).
    var closed = new java.nio.channels.ClosedChannelException();
    closed.initCause(new java.nio.channels.ClosedChannelException());
    CollideException e = CollideException.from(
        Status.UNKNOWN.withDescription("channel closed").withCause(closed).asRuntimeException());
    assertEquals(Status.Code.UNAVAILABLE, e.getCode());
    assertInstanceOf(java.nio.channels.ClosedChannelException.class, e.getCause().getCause());
    // Other UNKNOWNs stay as they are.
    assertEquals(Status.Code.UNKNOWN,
        CollideException.from(Status.UNKNOWN.withDescription("x").asRuntimeException()).getCode());
  }

  @Test
  void aServerThatIsDownFailsCallsWithUnavailable() throws Exception {
    try (ServerProcess server = new ServerProcess(); CollideClient c = server.client()) {
      c.listScenes();
      server.kill();
      expectError(Status.Code.UNAVAILABLE, "", c::listScenes);
      server.restartSamePort();
      long giveUp = System.nanoTime() + 20_000_000_000L;
      while (true) {
        try {
          c.listScenes();
          break;
        } catch (CollideException e) {
          if (System.nanoTime() > giveUp) {
            throw e;
          }
          Thread.sleep(50);
        }
      }
    }
  }

  @Test
  void tokensAreSentAndRefusalsCarryTheirCodes() throws Exception {
    Path tokens = Files.createTempFile("collide-tokens", "");
    Files.writeString(tokens, "admin-token admin\nreader-token reader\n");
    try (ServerProcess server = new ServerProcess("--token_file=" + tokens);
        CollideClient admin = CollideClient.builder(server.address()).token("admin-token").build();
        CollideClient reader = CollideClient.builder(server.address()).token("reader-token").build();
        CollideClient anonymous = server.client()) {
      admin.createScene("s", null);
      expectError(Status.Code.UNAUTHENTICATED, "authorization", anonymous::listScenes);
      reader.getScene("s");
      expectError(Status.Code.PERMISSION_DENIED, "",
          () -> reader.upsertBodies("s", List.of(body(1, sphere(1), at(0, 0, 0)))));
      try (UpdateWriter w = reader.updateWriter("s").open()) {
        // The refusal comes asynchronously: a send before it keeps its batch, which then fails
        // with it; a send after it throws it.
        CompletableFuture<UpdateAck> future;
        try {
          future = w.send(UpdateBatch.getDefaultInstance());
        } catch (CollideException e) {
          future = CompletableFuture.failedFuture(e);
        }
        var sent = future;
        expectError(Status.Code.PERMISSION_DENIED, "",
            () -> UpdateWriter.await(sent, Duration.ofSeconds(30)));
        expectError(Status.Code.PERMISSION_DENIED, "", () -> w.flush(Duration.ofSeconds(30)));
        expectError(Status.Code.PERMISSION_DENIED, "",
            () -> w.send(UpdateBatch.getDefaultInstance()));
      } catch (CollideException e) {
        assertEquals(Status.Code.PERMISSION_DENIED, e.getCode());
      }
    } finally {
      Files.deleteIfExists(tokens);
    }
  }

  @Test
  void writesToAMovingSceneNameItsDestination() throws Exception {
    try (ServerProcess server = new ServerProcess(); CollideClient c = server.client()) {
      c.createScene("moving", null);
      c.upsertBodies("moving", List.of(body(1, sphere(1), at(0, 0, 0))));
      assertEquals("10.0.0.4:50051", c.setSceneMoving("moving", "10.0.0.4:50051").getMovedTo());
      CollideException e = expectError(Status.Code.FAILED_PRECONDITION, "scene",
          () -> c.upsertBodies("moving", List.of(body(2, sphere(1), at(3, 0, 0)))));
      assertEquals("10.0.0.4:50051", e.getMovedTo());
      // The update writer sends its batch again (not applied, not rejected) until the scene is
      // written here again.
      UpdateWriter w = c.updateWriter("moving").backoff(Duration.ofMillis(50), Duration.ofMillis(100))
          .open();
      var sent = w.send(UpdateBatch.newBuilder().addOps(setPose(1, at(1, 2, 3))).build());
      for (long give = System.nanoTime() + 10_000_000_000L;
          w.redirected() < 2 && System.nanoTime() < give;) {
        Thread.sleep(20);
      }
      assertTrue(w.redirected() >= 2, "redirected " + w.redirected());
      assertFalse(sent.isDone());
      c.clearSceneMoving("moving");
      UpdateAck ack = UpdateWriter.await(sent, Duration.ofSeconds(20));
      assertEquals(2, ack.getVersion());
      assertFalse(ack.getDuplicate());
      w.close();
    }
  }

  @Test
  void float32sPrintAsTheirShortestDecimal() {
    assertEquals("0.1", Float32.shortest(0.1f));
    assertEquals("9", Float32.shortest(9f));
    assertEquals("-0.5", Float32.shortest(-0.5f));
    assertEquals("0.25881904", Float32.shortest(0.25881904f));
    assertEquals("0.0000001", Float32.shortest(1e-7f));
    assertEquals("16777216", Float32.shortest(16777216f));
    assertEquals("1703448.2", Float32.shortest(1703448.25f)); // a tie: the even one
    assertEquals("390695.62", Float32.shortest(390695.625f));
    Random rng = new Random(5);
    for (int i = 0; i < 100000; i++) {
      float f = Float.intBitsToFloat(rng.nextInt());
      if (Float.isNaN(f) || Float.isInfinite(f)) {
        continue;
      }
      String text = Float32.shortest(f);
      assertEquals(f, Float.parseFloat(text), "seed 5: " + f + " printed " + text);
    }
  }
}
