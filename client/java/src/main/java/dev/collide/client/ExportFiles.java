package dev.collide.client;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.collide.v1.ImportSceneRequest;
import dev.collide.v1.ImportSceneResponse;
import dev.collide.v1.SceneExportMessage;
import dev.collide.v1.SceneInfo;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Export files: the messages of ExportScene stored in order, in the formats of {@code collide
 * scene export}: "pb" (length-delimited protobuf: each message preceded by its length as a
 * varint) or "jsonl" (one JSON object per line, the proto3 JSON form with the proto's field
 * names). Files go both ways between this client, the others and the CLI.
 */
public final class ExportFiles {
  /** The largest message a file may hold. */
  public static final int MAX_MESSAGE_BYTES = 64 << 20;

  private ExportFiles() {}

  /** What an export file holds. */
  public record Summary(long version, long tick, long bodies, long chunks, long bytes) {}

  /** A file that is not a well-formed export file: the message that could not be read. */
  public static final class FileException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int index;

    FileException(int index, String reason) {
      super("message " + index + ": " + reason);
      this.index = index;
    }

    /** The message that could not be read (0 for the first). */
    public int index() {
      return index;
    }
  }

  private static String checkFormat(String format) {
    if (!format.equals("pb") && !format.equals("jsonl")) {
      throw new CollideException(Status.Code.INVALID_ARGUMENT,
          "format: expected pb or jsonl, got \"" + format + "\"");
    }
    return format;
  }

  /** The format of a file starting with {@code first}: a JSON line starts with {"}. */
  public static String guessFormat(byte[] first) {
    return first.length >= 2 && first[0] == '{' && first[1] == '"' ? "jsonl" : "pb";
  }

  /** Appends one message to {@code out} in {@code format}. */
  public static void write(OutputStream out, String format, SceneExportMessage message)
      throws IOException {
    if (checkFormat(format).equals("jsonl")) {
      String line = JsonFormat.printer().preservingProtoFieldNames().omittingInsignificantWhitespace()
          .print(message);
      out.write(line.getBytes(StandardCharsets.UTF_8));
      out.write('\n');
    } else {
      message.writeDelimitedTo(out);
    }
  }

  /** The messages of the export file at {@code path} (format null: guessed), read as taken. */
  public static Iterator<SceneExportMessage> read(Path path, String format) throws IOException {
    InputStream in = new BufferedInputStream(Files.newInputStream(path), 1 << 16);
    if (format == null) {
      in.mark(2);
      format = guessFormat(in.readNBytes(2));
      in.reset();
    }
    if (checkFormat(format).equals("jsonl")) {
      BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      return new Reader(() -> {
        String line;
        while ((line = lines.readLine()) != null && line.isBlank()) {}
        if (line == null) {
          lines.close();
          return null;
        }
        SceneExportMessage.Builder m = SceneExportMessage.newBuilder();
        JsonFormat.parser().merge(line, m);
        return m.build();
      });
    }
    return new Reader(() -> {
      int first = in.read();
      if (first < 0) {
        in.close();
        return null;
      }
      int length = first & 0x7f;
      for (int shift = 7, b = first; (b & 0x80) != 0; shift += 7) {
        b = in.read();
        if (b < 0 || shift > 28) {
          throw new IOException("the file ends inside its length, or a bad length");
        }
        length |= (b & 0x7f) << shift;
      }
      if (length < 0 || length > MAX_MESSAGE_BYTES) {
        throw new IOException("over the limit of 64 MiB");
      }
      byte[] data = in.readNBytes(length);
      if (data.length != length) {
        throw new IOException("the file ends inside the message");
      }
      return SceneExportMessage.parseFrom(data);
    });
  }

  private interface Next {
    SceneExportMessage next() throws IOException;
  }

  /** Reads one message ahead; a message that does not parse is a FileException. */
  private static final class Reader implements Iterator<SceneExportMessage> {
    private final Next source;
    private SceneExportMessage ahead;
    private boolean done;
    private int index;

    Reader(Next source) {
      this.source = source;
    }

    @Override
    public boolean hasNext() {
      if (ahead == null && !done) {
        try {
          ahead = source.next();
        } catch (InvalidProtocolBufferException e) {
          throw new FileException(index, "not an export message (" + e.getMessage() + ")");
        } catch (IOException e) {
          throw new FileException(index, e.getMessage());
        }
        done = ahead == null;
      }
      return ahead != null;
    }

    @Override
    public SceneExportMessage next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      SceneExportMessage m = ahead;
      ahead = null;
      index++;
      return m;
    }
  }

  static Summary exportToFile(CollideClient client, String scene, Path path, String format) {
    checkFormat(format);
    long version = 0, tick = 0, bodies = 0, chunks = 0;
    boolean ok = false;
    try (ExportStream export = client.exportScene(scene, 0);
        OutputStream out = new java.io.BufferedOutputStream(Files.newOutputStream(path))) {
      while (export.hasNext()) {
        SceneExportMessage m = export.next();
        write(out, format, m);
        if (m.hasHeader()) {
          version = m.getHeader().getVersion();
          tick = m.getHeader().getTick();
        }
        if (m.hasTrailer()) {
          bodies = m.getTrailer().getBodyCount();
          chunks = m.getTrailer().getChunkCount();
        }
      }
      ok = true;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      if (!ok) {
        try {
          Files.deleteIfExists(path);
        } catch (IOException e) {
          // The export's error matters more.
        }
      }
    }
    try {
      return new Summary(version, tick, bodies, chunks, Files.size(path));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static SceneInfo importMessages(CollideClient client, Iterator<SceneExportMessage> messages,
      ImportOptions options) {
    ImportOptions o = options != null ? options : new ImportOptions(null, false, false);
    String scene = o.scene() != null ? o.scene() : "";
    CompletableFuture<SceneInfo> answer = new CompletableFuture<>();
    AtomicReference<ClientCallStreamObserver<ImportSceneRequest>> holder = new AtomicReference<>();
    client.async(scene).importScene(new ClientResponseObserver<ImportSceneRequest, ImportSceneResponse>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<ImportSceneRequest> stream) {
        holder.set(stream);
      }

      @Override
      public void onNext(ImportSceneResponse response) {
        answer.complete(response.getScene());
      }

      @Override
      public void onError(Throwable error) {
        answer.completeExceptionally(CollideException.from(error));
      }

      @Override
      public void onCompleted() {
        answer.completeExceptionally(new CollideException(Status.Code.INTERNAL,
            "import: no answer"));
      }
    });
    ClientCallStreamObserver<ImportSceneRequest> requests = holder.get();
    boolean first = true;
    try {
      while (!answer.isDone() && messages.hasNext()) {
        ImportSceneRequest.Builder request = ImportSceneRequest.newBuilder()
            .setMessage(messages.next());
        if (first) {
          request.setScene(scene).setReplace(o.replace()).setCheckOnly(o.checkOnly());
          first = false;
        }
        requests.onNext(request.build());
      }
    } catch (RuntimeException e) {
      requests.cancel("import: the source failed", e);
      throw e;
    }
    requests.onCompleted();
    return UpdateWriter.await(answer, Duration.ofMinutes(10));
  }

  static SceneInfo importFile(CollideClient client, Path path, ImportOptions options) {
    Iterator<SceneExportMessage> messages;
    try {
      messages = read(path, null);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try {
      return importMessages(client, messages, options);
    } catch (FileException e) {
      throw new CollideException(Status.Code.INVALID_ARGUMENT,
          "messages[" + e.index() + "]: " + e.getMessage().replaceFirst("^message \\d+: ", "")
              + " (" + path + ")", "", 0, e);
    }
  }
}
