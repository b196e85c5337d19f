// The cross-language scenario (client/README.md): creates a scene, upserts five bodies in one
// call, runs five unary queries and prints one JSON object per query (a..e), then deletes the
// scene. The C++, Python, Node and Go programs print the same bytes for the same server. Floats
// print as the shortest decimal that reads back as the float32 received, in the notation C++'s
// std::to_chars picks (number); uint64 values as received (unsigned).
//
//   java -cp collide-client-0.1.0.jar:<its dependencies> Scenario.java \
//       --address 127.0.0.1:50051 --scene scenario-java

import static dev.collide.client.Builders.*;

import dev.collide.client.CollideClient;
import dev.collide.client.Float32;
import dev.collide.v1.Body;
import dev.collide.v1.BodyKind;
import dev.collide.v1.Filter;
import dev.collide.v1.Hit;
import dev.collide.v1.Mode;
import dev.collide.v1.Overlap;
import dev.collide.v1.OverlapRequest;
import dev.collide.v1.QueryResponse;
import dev.collide.v1.RaycastRequest;
import dev.collide.v1.SphereCastRequest;
import dev.collide.v1.Vec3;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

public class Scenario {
  /**
   * The shortest decimal that reads back as {@code f} (Float32.shortest's digits), as C++'s
   * std::to_chars prints it: fixed, or d.ddde+XX when that is shorter (a tie: fixed); the fixed
   * form of an integer has all its digits (6528615424, not 6528615400).
   */
  static String number(float f) {
    String sign = (Float.floatToRawIntBits(f) < 0) ? "-" : "";
    f = Math.abs(f);
    if (f == 0) {
      return sign + "0";
    }
    BigDecimal shortest = new BigDecimal(Float32.shortest(f)).stripTrailingZeros();
    String digits = shortest.unscaledValue().toString();
    int n = digits.length();
    int exponent = -shortest.scale(); // f = digits x 10^exponent
    String fixed;
    if (exponent >= 0) {
      fixed = new BigDecimal(f).toBigInteger().toString();
    } else if (-exponent < n) {
      fixed = digits.substring(0, n + exponent) + "." + digits.substring(n + exponent);
    } else {
      fixed = "0." + "0".repeat(-exponent - n) + digits;
    }
    int power = n - 1 + exponent;
    String scientific = digits.charAt(0) + (n > 1 ? "." + digits.substring(1) : "")
        + (power < 0 ? "e-" : "e+") + String.format("%02d", Math.abs(power));
    return sign + (fixed.length() <= scientific.length() ? fixed : scientific);
  }

  static String vec3(Vec3 v) {
    return "[" + number(v.getX()) + ", " + number(v.getY()) + ", " + number(v.getZ()) + "]";
  }

  static String line(String name, QueryResponse r) {
    List<String> hits = new ArrayList<>();
    for (Hit h : r.getHitsList()) {
      hits.add("{\"body_id\": " + Long.toUnsignedString(h.getBodyId()) + ", \"distance\": "
          + number(h.getDistance()) + ", \"point\": " + vec3(h.getPoint())
          + ", \"normal\": " + vec3(h.getNormal()) + ", \"depth\": "
          + number(h.getDepth()) + ", \"start_overlapping\": " + h.getStartOverlapping()
          + "}");
    }
    return "{\"query\": \"" + name + "\", \"version\": " + Long.toUnsignedString(r.getVersion())
        + ", \"hits\": [" + String.join(", ", hits) + "]}";
  }

  /** Each float32 of stdin (its bits, 8 hex digits a line), printed as number prints it. */
  static void printNumbers() throws java.io.IOException {
    var in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
    StringBuilder out = new StringBuilder();
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (!line.isBlank()) {
        out.append(number(Float.intBitsToFloat(Integer.parseUnsignedInt(line.strip(), 16))))
            .append('\n');
      }
    }
    System.out.print(out);
  }

  public static void main(String[] args) throws Exception {
    String address = "127.0.0.1:50051";
    String scene = "scenario";
    if (List.of(args).contains("--numbers")) {
      // Instead of the scenario (a test compares the programs' numbers).
      printNumbers();
      return;
    }
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--address" -> address = args[i + 1];
        case "--scene" -> scene = args[i + 1];
        default -> throw new IllegalArgumentException("unknown flag " + args[i]);
      }
    }
    try (CollideClient client = CollideClient.builder(address).build()) {
      client.createScene(scene, null);
      try {
        client.upsertBodies(scene, List.of(
            body(1, sphere(1), at(0, 0, 0)),
            body(2, box(1, 0.5f, 2), pose(vec(5, 0, 0), quat(0, 0, 0.25881904f, 0.96592583f))),
            body(3, capsule(0.5f, 1), at(10, 0, 0)),
            body(4, sphere(0.5f), at(0, 5, 0)).toBuilder().setCategory(2).build(),
            body(5, box(0.5f, 0.5f, 0.5f), at(-4, 0, 0)).toBuilder()
                .setKind(BodyKind.BODY_KIND_STATIC).build()));
        System.out.println(line("a", client.raycast(RaycastRequest.newBuilder().setScene(scene)
            .setRay(ray(vec(-10, 0, 0), vec(1, 0, 0), 100)).setMode(Mode.MODE_ALL).build())));
        System.out.println(line("b", client.raycast(RaycastRequest.newBuilder().setScene(scene)
            .setRay(ray(vec(0, -10, 0), vec(0, 1, 0), 100)).setMode(Mode.MODE_CLOSEST)
            .setFilter(Filter.newBuilder().setMask(2)).build())));
        System.out.println(line("c", client.sphereCast(SphereCastRequest.newBuilder()
            .setScene(scene).setCast(cast(vec(0, 0, -10), vec(0, 0, 1), 20, 0.25f))
            .setMode(Mode.MODE_ALL).build())));
        System.out.println(line("d", client.overlap(OverlapRequest.newBuilder().setScene(scene)
            .setOverlap(Overlap.newBuilder().setShape(sphere(1.5f)).setPose(at(4.5f, 0.5f, 0)))
            .setDetail(true).setMode(Mode.MODE_ALL).build())));
        System.out.println(line("e", client.sphereCast(SphereCastRequest.newBuilder()
            .setScene(scene).setCast(cast(vec(-10, 0.8f, 0), vec(1, 0, 0), 30, 0.4f))
            .setMode(Mode.MODE_ALL).build())));
      } finally {
        client.deleteScene(scene);
      }
    }
  }
}
