#!/usr/bin/env bash
# The Java client as a Maven artifact: the jar the build makes
# (<build>/client/java/target/collide-client-<version>.jar, its pom inside under
# META-INF/maven/dev.collide/collide-client/) installed with `mvn install:install-file` into a
# local repository, then, in an empty directory outside the source and build trees, a Maven
# project that depends on dev.collide:collide-client:<version> only is built and its program
# raycasts a body, writes through an UpdateWriter and reads a field path from a refused call,
# against a real collide-server. Offline: the local repository is a copy of Debian's
# /usr/share/maven-repo made of symbolic links (so the install writes nothing there), and the
# artifact's dependencies (gRPC, protobuf, netty) resolve from it through the installed pom.
#   java_test.sh <source dir> <build dir> <collide-server>
set -euo pipefail
source_dir=$1
build_dir=$2
server=$3

for tool in java mvn; do
  command -v "$tool" >/dev/null 2>&1 || { echo "$tool not found: skipped"; exit 77; }
done
debian_repo=/usr/share/maven-repo
[ -d "$debian_repo/io/grpc/grpc-netty" ] || { echo "no libgrpc-java in $debian_repo: skipped"; exit 77; }
test_name="java install test"
source "$(dirname "$0")/lib.sh"

version=$(sed -nE 's/^project\(collide VERSION ([0-9.]+).*/\1/p' "$source_dir/CMakeLists.txt")
[ -n "$version" ] || fail "no project version in CMakeLists.txt"
jar=$build_dir/client/java/target/collide-client-$version.jar
[ -f "$jar" ] || fail "the build made no $jar"
(cd "$tmp" && jar tf "$jar") >"$tmp/jar.txt" || fail "jar tf failed"
grep -qx META-INF/maven/dev.collide/collide-client/pom.xml "$tmp/jar.txt" || fail "the jar carries no pom"
grep -qx dev/collide/client/CollideClient.class "$tmp/jar.txt" || fail "the jar has no CollideClient"
grep -qx dev/collide/v1/CollideGrpc.class "$tmp/jar.txt" || fail "the jar has no generated gRPC code"

repo=$tmp/repo
cp -rs "$debian_repo" "$repo"
maven=(mvn -o -q -B -Dmaven.repo.local="$repo")
step "mvn install:install-file -Dfile=<build>/client/java/target/collide-client-$version.jar"
(cd "$tmp" && "${maven[@]}" org.apache.maven.plugins:maven-install-plugin:3.1.0:install-file \
   -Dfile="$jar") >"$tmp/install.log" 2>&1 || fail "install-file failed: $(cat "$tmp/install.log")"
installed=$repo/dev/collide/collide-client/$version
for file in "collide-client-$version.jar" "collide-client-$version.pom"; do
  [ -f "$installed/$file" ] || fail "not installed: $installed/$file"
done
grep -q '<artifactId>grpc-netty</artifactId>' "$installed/collide-client-$version.pom" ||
  fail "the installed pom does not name the client's dependencies"

mkdir -p "$tmp/elsewhere/src/main/java"
cd "$tmp/elsewhere"
# The plugin versions are Debian's (the only ones in its repository).
cat >pom.xml <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>uses-collide</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>dev.collide</groupId>
      <artifactId>collide-client</artifactId>
      <version>$version</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.10.1</version></plugin>
      <plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.0</version></plugin>
      <plugin><artifactId>maven-jar-plugin</artifactId><version>3.3.0</version></plugin>
      <plugin><artifactId>maven-surefire-plugin</artifactId><version>2.22.3</version></plugin>
      <plugin><artifactId>maven-dependency-plugin</artifactId><version>3.5.0</version></plugin>
    </plugins>
  </build>
</project>
EOF
cat >src/main/java/UseCollide.java <<'JAVA'
import static dev.collide.client.Builders.*;

import dev.collide.client.CollideClient;
import dev.collide.client.CollideException;
import dev.collide.client.Float32;
import dev.collide.client.UpdateWriter;
import dev.collide.v1.Hit;
import dev.collide.v1.RaycastRequest;
import dev.collide.v1.UpdateAck;
import java.util.List;

public class UseCollide {
  public static void main(String[] args) throws Exception {
    try (CollideClient client = CollideClient.builder(args[0]).build()) {
      client.createScene("world", null);
      client.upsertBodies("world", List.of(body(7, sphere(1), at(5, 0, 0))));
      Hit hit = client.raycast(RaycastRequest.newBuilder().setScene("world")
          .setRay(ray(vec(0, 0, 0), vec(1, 0, 0), 100)).build()).getHits(0);
      System.out.println("hit body " + hit.getBodyId() + " at distance "
          + Float32.shortest(hit.getDistance()));
      try (UpdateWriter writer = client.updateWriter("world").open()) {
        UpdateAck ack = writer.apply(moves(List.of(7L), List.of(8f, 0f, 0f, 0f, 0f, 0f, 1f)));
        System.out.println("ack version " + ack.getVersion());
      }
      try {
        client.upsertBodies("world", List.of(body(8, sphere(-1), at(0, 0, 0))));
      } catch (CollideException e) {
        System.out.println(e.getCode() + " " + e.getFieldPath());
      }
    }
  }
}
JAVA
step "cd <tmp>/elsewhere && mvn -o package (depends on dev.collide:collide-client:$version)"
"${maven[@]}" package dependency:build-classpath -Dmdep.outputFile=classpath.txt \
  >"$tmp/build.log" 2>&1 || fail "mvn package failed: $(cat "$tmp/build.log")"
grep -q "dev/collide/collide-client/$version/collide-client-$version.jar" classpath.txt ||
  fail "the classpath does not take the installed jar: $(cat classpath.txt)"

step "start collide-server on port 0"
start_server "$tmp/port" "$tmp/server.log" "$server" --address=127.0.0.1:0 --port_file="$tmp/port" \
  --data_dir="$tmp/data" --log_level=warn
step "cd <tmp>/elsewhere && java -cp target/classes:<classpath> UseCollide $address"
output=$(java -cp "target/classes:$(cat classpath.txt)" UseCollide "$address" 2>&1) ||
  fail "the program failed: $output"
echo "$output"
expected="hit body 7 at distance 4
ack version 2
INVALID_ARGUMENT bodies[0].shape.sphere.radius"
[ "$output" = "$expected" ] || fail "the program printed '$output', expected '$expected'"
echo "java install test: ok"
