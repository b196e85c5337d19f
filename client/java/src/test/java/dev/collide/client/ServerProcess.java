package dev.collide.client;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real collide-server child process ($COLLIDE_SERVER, which ctest sets) on 127.0.0.1, port 0
 * at first, with its data in a temporary directory.
 */
final class ServerProcess implements AutoCloseable {
  private final String binary;
  final Path dir;
  private final List<String> flags = new ArrayList<>();
  private Process process;
  int port;

  ServerProcess(String... extraFlags) throws Exception {
    binary = System.getenv("COLLIDE_SERVER");
    if (binary == null || binary.isEmpty()) {
      throw new IllegalStateException("set COLLIDE_SERVER to the collide-server binary (ctest does)");
    }
    dir = Files.createTempDirectory("collide-java-");
    flags.add("--data_dir=" + dir.resolve("data"));
    flags.add("--log_level=warn");
    flags.addAll(List.of(extraFlags));
    start(0);
  }

  String address() {
    return "127.0.0.1:" + port;
  }

  CollideClient client() {
    return CollideClient.builder(address()).build();
  }

  /** Starts the server on {@code port} (0: a free one) and waits for its port file. */
  void start(int port) throws Exception {
    Path portFile = dir.resolve("port");
    Files.deleteIfExists(portFile);
    List<String> command = new ArrayList<>(List.of(binary, "--address=127.0.0.1:" + port,
        "--port_file=" + portFile));
    command.addAll(flags);
    File log = dir.resolve("server.log").toFile();
    process = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log)).start();
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (System.nanoTime() < giveUp) {
      if (Files.exists(portFile)) {
        String text = Files.readString(portFile, StandardCharsets.UTF_8);
        if (text.endsWith("\n")) {
          this.port = Integer.parseInt(text.trim());
          return;
        }
      }
      if (!process.isAlive()) {
        throw new IOException("collide-server exited: " + logs());
      }
      Thread.sleep(20);
    }
    process.destroyForcibly();
    throw new IOException("collide-server wrote no port file in 20 s: " + logs());
  }

  /** Starts the server again on its port and data (the port may linger: tries for 10 s). */
  void restartSamePort() throws Exception {
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      try {
        start(port);
        return;
      } catch (IOException e) {
        if (System.nanoTime() > giveUp) {
          throw e;
        }
        Thread.sleep(100);
      }
    }
  }

  /** SIGKILL, and waits for the exit. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  /** SIGSTOP or SIGCONT. */
  private void signal(String name) throws Exception {
    new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start().waitFor();
  }

  /**
   * Stops the server with SIGSTOP and waits until every thread of it is stopped (a stopped
   * server answers nothing). The signal does not stop them at once: the thread the kernel picks
   * to take it stops the others when it next runs, and until then they go on answering.
   */
  void pause() throws Exception {
    signal("STOP");
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!allThreadsStopped()) {
      if (System.nanoTime() > giveUp) {
        throw new IllegalStateException("collide-server's threads did not all stop within 10 s");
      }
      Thread.sleep(1);
    }
  }

  /** Continues a paused server. */
  void resume() throws Exception {
    signal("CONT");
  }

  /** Whether /proc/<pid>/task/<tid>/stat ("tid (command) state ...") says T for every thread. */
  private boolean allThreadsStopped() {
    Path tasks = Path.of("/proc", Long.toString(process.pid()), "task");
    try (var threads = Files.list(tasks)) {
      List<Path> all = threads.toList();
      if (all.isEmpty()) {
        return false;
      }
      for (Path thread : all) {
        String stat = Files.readString(thread.resolve("stat"));
        int end = stat.lastIndexOf(')');
        if (end < 0 || end + 2 >= stat.length() || stat.charAt(end + 2) != 'T') {
          return false;
        }
      }
      return true;
    } catch (IOException | java.io.UncheckedIOException e) {
      return false;  // a thread that ended meanwhile: look again
    }
  }

  String logs() {
    try {
      return Files.readString(dir.resolve("server.log"));
    } catch (IOException e) {
      return "";
    }
  }

  @Override
  public void close() throws IOException {
    if (process != null && process.isAlive()) {
      process.destroy();
      try {
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
    try (var paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
