package dev.collide.client;

import static dev.collide.client.Builders.*;
import static dev.collide.client.ClientTest.expectError;
import static dev.collide.client.UpdateWriterTest.BODIES;
import static dev.collide.client.UpdateWriterTest.await;
import static dev.collide.client.UpdateWriterTest.createWithBodies;
import static org.junit.jupiter.api.Assertions.*;

import dev.collide.v1.Fence;
import dev.collide.v1.Mode;
import dev.collide.v1.QueryBatch;
import dev.collide.v1.QueryBatchResult;
import dev.collide.v1.SceneExportMessage;
import dev.collide.v1.SceneInfo;
import dev.collide.v1.UpdateAck;
import dev.collide.v1.WatchEvent;
import dev.collide.v1.WatchRequest;
import dev.collide.v1.WatchResponse;
import io.grpc.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class StreamsTest {
  @Test
  void theQueryStreamPipelinesBatchesAndReadsItsWrites() throws Exception {
    try (ServerProcess server = new ServerProcess(); CollideClient c = server.client()) {
      createWithBodies(c, "s");
      UpdateWriter w = c.updateWriter("s").open();
      List<CompletableFuture<QueryBatchResult>> answers = new ArrayList<>();
      try (QueryStream q = c.queryStream("s", 8)) {
        for (int n = 1; n <= 50; n++) {
          UpdateAck ack = w.apply(moves(List.of(1L), List.of((float) n, 100f, 0f, 0f, 0f, 0f, 1f)));
          answers.add(q.submit(QueryBatch.newBuilder().setMinVersion(ack.getVersion())
              .addQueries(raycastQuery(n, ray(vec(-100, 100, 0), vec(1, 0, 0), 1000))).build()));
        }
        for (int i = 0; i < answers.size(); i++) {
          QueryBatchResult r = await(answers.get(i));
          // Batch n made version n + 1 with body 1 at x = n; a later version may answer.
          assertTrue(r.getVersion() >= i + 2);
          assertEquals(i + 1, r.getResults(0).getRequestId());
          assertEquals(1, r.getResults(0).getHits(0).getBodyId());
          assertEquals(100 + (r.getVersion() - 1) - 0.5f, r.getResults(0).getHits(0).getDistance());
        }
        QueryBatchResult mixed = q.query(QueryBatch.newBuilder()
            .addQueries(raycastQuery(1, ray(vec(0, 0, 0), vec(0, 0, 0), 1)))
            .addQueries(raycastQuery(2, ray(vec(-100, 100, 0), vec(1, 0, 0), 1000))).build());
        assertTrue(mixed.getResults(0).getError().getMessage().startsWith("queries[0].raycast.direction: "));
        assertEquals(1, mixed.getResults(1).getHitsCount());
      }
      w.close();
      try (QueryStream missing = c.queryStream("missing")) {
        expectError(Status.Code.NOT_FOUND, "scene", () -> missing.query(QueryBatch.newBuilder()
            .addQueries(raycastQuery(1, ray(vec(0, 0, 0), vec(1, 0, 0), 1))).build()));
      }
    }
  }

  @Test
  void theQueryStreamFailsWhatIsInFlightWhenTheServerDiesAndReopensAfter() throws Exception {
    try (ServerProcess server = new ServerProcess(); CollideClient c = server.client();
        QueryStream q = c.queryStream("s")) {
      createWithBodies(c, "s");
      var held = q.submit(QueryBatch.newBuilder().setMinVersion(100)
          .addQueries(raycastQuery(1, ray(vec(0, 0, 0), vec(1, 0, 0), 1))).build());
      Thread.sleep(100);
      server.kill();
      expectError(Status.Code.UNAVAILABLE, "", () -> await(held));
      server.restartSamePort();
      long giveUp = System.nanoTime() + 20_000_000_000L;
      QueryBatchResult r;
      while (true) {
        try {
          r = q.query(QueryBatch.newBuilder().addQueries(raycastQuery(2, ray(vec(-10, 0, 0),
              vec(1, 0, 0), 100)).toBuilder().setMode(Mode.MODE_ALL)).build());
          break;
        } catch (CollideException e) {
          if (System.nanoTime() > giveUp) {
            throw e;
          }
          Thread.sleep(50);
        }
      }
      assertEquals(BODIES, r.getResults(0).getHitsCount());
      assertEquals(9.5f, r.getResults(0).getHits(0).getDistance());
    }
  }

  @Test
  void watchesReportEntersAndEndWhenTheSceneIsDeleted() throws Exception {
    try (ServerProcess server = new ServerProcess(); CollideClient c = server.client()) {
      c.createScene("s", null);
      c.upsertBodies("s", List.of(body(1, sphere(0.5f), at(-10, 0, 0))));
      WatchRequest request = WatchRequest.newBuilder().setScene("s").addFences(Fence.newBuilder()
          .setId(7).setShape(box(0.01f, 2, 2)).setPose(at(0, 0, 0))).build();
      LinkedBlockingQueue<Object> heard = new LinkedBlockingQueue<>();
      try (WatchStream watch = c.watch(request);
          WatchStream listened = c.watch(request, new WatchStream.Listener() {
            @Override
            public void onMessage(WatchResponse message) {
              heard.add(message);
            }

            @Override
            public void onEnd(CollideException error) {
              heard.add(error);
            }
          })) {
        assertNotNull(listened);
        WatchResponse first = watch.next();
        assertTrue(first.hasSnapshot());
        assertEquals(0, first.getSnapshot().getFences(0).getBodyIdsCount());
        assertTrue(((WatchResponse) heard.poll(30, TimeUnit.SECONDS)).hasSnapshot());
        try (UpdateWriter w = c.updateWriter("s").open()) {
          w.apply(moves(List.of(1L), List.of(10f, 0f, 0f, 0f, 0f, 0f, 1f)));
        }
        for (WatchResponse update : List.of(watch.next(), (WatchResponse) heard.poll(30, TimeUnit.SECONDS))) {
          List<WatchEvent> events = update.getUpdate().getEventsList();
          assertEquals(2, events.size());
          assertEquals(WatchEvent.Kind.KIND_ENTER, events.get(0).getKind());
          assertEquals(WatchEvent.Kind.KIND_EXIT, events.get(1).getKind());
          assertEquals(7, events.get(0).getFenceId());
          assertEquals(vec(-0.01f, 0, 0), events.get(0).getPoint());
        }
        c.deleteScene("s");
        expectError(Status.Code.NOT_FOUND, "scene", watch::next);
        CollideException ended = (CollideException) heard.poll(30, TimeUnit.SECONDS);
        assertEquals(Status.Code.NOT_FOUND, ended.getCode());
      }
    }
  }

  @Test
  void scenesExportToFilesAndImportBackInBothFormats() throws Exception {
    Path dir = Files.createTempDirectory("collide-java-export");
    try (ServerProcess server = new ServerProcess(); CollideClient c = server.client()) {
      createWithBodies(c, "s");
      var original = c.getBodies("s", List.of());
      for (String format : List.of("pb", "jsonl")) {
        Path path = dir.resolve("s." + format);
        var summary = c.exportSceneToFile("s", path, format);
        assertEquals(BODIES, summary.bodies());
        assertEquals(1, summary.version());
        SceneInfo info = c.importSceneFile(path, ImportOptions.as("copy-" + format));
        assertEquals(BODIES, info.getStats().getBodyCount());
        assertEquals(original.getBodiesList(), c.getBodies("copy-" + format, List.of()).getBodiesList());
        expectError(Status.Code.ALREADY_EXISTS, "scene",
            () -> c.importSceneFile(path, ImportOptions.as("copy-" + format)));
        c.importSceneFile(path, ImportOptions.as("copy-" + format).replacing());
      }
      int[] chunks = {0};
      try (ExportStream export = c.exportScene("s", 3)) {
        Iterator<SceneExportMessage> counted = new Iterator<>() {
          public boolean hasNext() {
            return export.hasNext();
          }

          public SceneExportMessage next() {
            SceneExportMessage m = export.next();
            chunks[0] += m.hasChunk() ? 1 : 0;
            return m;
          }
        };
        assertEquals(BODIES, c.importScene(counted, ImportOptions.as("streamed")).getStats()
            .getBodyCount());
      }
      assertEquals(4, chunks[0]);
      // Export format 2: a trailer whose checksum (over the header, the chunks and the counts)
      // does not match is DATA_LOSS; a check_only import checks and creates nothing.
      List<SceneExportMessage> messages = new ArrayList<>();
      try (ExportStream export = c.exportScene("s", 0)) {
        export.forEachRemaining(messages::add);
      }
      assertEquals(2, messages.get(0).getHeader().getFormat());
      SceneInfo checked = c.importScene(messages.iterator(), new ImportOptions("checked", false, true));
      assertEquals("checked", checked.getName());
      assertEquals(BODIES, checked.getStats().getBodyCount());
      expectError(Status.Code.NOT_FOUND, "scene", () -> c.getScene("checked"));
      List<SceneExportMessage> tampered = new ArrayList<>(messages);
      SceneExportMessage last = tampered.remove(tampered.size() - 1);
      tampered.add(last.toBuilder().setTrailer(last.getTrailer().toBuilder()
          .setCrc32C(last.getTrailer().getCrc32C() ^ 1)).build());
      expectError(Status.Code.DATA_LOSS, "trailer.crc32c",
          () -> c.importScene(tampered.iterator(), ImportOptions.as("tampered")));
      expectError(Status.Code.NOT_FOUND, "scene", () -> c.getScene("tampered"));
      byte[] data = Files.readAllBytes(dir.resolve("s.pb"));
      data[data.length / 2] ^= 0x40;
      Path damaged = dir.resolve("damaged.pb");
      Files.write(damaged, data);
      assertThrows(CollideException.class, () -> c.importSceneFile(damaged, ImportOptions.as("damaged")));
      expectError(Status.Code.NOT_FOUND, "scene", () -> c.getScene("damaged"));
      // A truncated file (of the undamaged bytes: a damaged chunk could be refused by the server
      // before the reader reaches the cut): the reader names the message, nothing is created.
      byte[] whole = Files.readAllBytes(dir.resolve("s.pb"));
      Files.write(damaged, java.util.Arrays.copyOf(whole, whole.length - 3));
      CollideException truncated = expectError(Status.Code.INVALID_ARGUMENT, "messages[2]",
          () -> c.importSceneFile(damaged, ImportOptions.as("damaged")));
      assertInstanceOf(ExportFiles.FileException.class, truncated.getCause());
      expectError(Status.Code.NOT_FOUND, "scene", () -> c.getScene("damaged"));
      try (ExportStream missing = c.exportScene("missing", 0)) {
        expectError(Status.Code.NOT_FOUND, "scene", missing::hasNext);
      }
    } finally {
      try (var paths = Files.walk(dir)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
