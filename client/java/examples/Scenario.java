// The cross-language scenario (client/README.md): creates a scene, upserts five bodies in one
// call, runs five unary queries and prints one JSON object per query (a..e), then deletes the
// scene. The C++, Python, Node and Go programs print the same lines for the same server. Floats
// print as the shortest decimal that reads back as the float32 received (Float32.shortest);
// uint64 values as received (unsigned).
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
import java.util.ArrayList;
import java.util.List;

public class Scenario {
  static String vec3(Vec3 v) {
    return "[" + Float32.shortest(v.getX()) + ", " + Float32.shortest(v.getY()) + ", "
        + Float32.shortest(v.getZ()) + "]";
  }

  static String line(String name, QueryResponse r) {
    List<String> hits = new ArrayList<>();
    for (Hit h : r.getHitsList()) {
      hits.add("{\"body_id\": " + Long.toUnsignedString(h.getBodyId()) + ", \"distance\": "
          + Float32.shortest(h.getDistance()) + ", \"point\": " + vec3(h.getPoint())
          + ", \"normal\": " + vec3(h.getNormal()) + ", \"depth\": "
          + Float32.shortest(h.getDepth()) + ", \"start_overlapping\": " + h.getStartOverlapping()
          + "}");
    }
    return "{\"query\": \"" + name + "\", \"version\": " + Long.toUnsignedString(r.getVersion())
        + ", \"hits\": [" + String.join(", ", hits) + "]}";
  }

  public static void main(String[] args) {
    String address = "127.0.0.1:50051";
    String scene = "scenario";
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
