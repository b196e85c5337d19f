package dev.collide.client;

import dev.collide.v1.CollideGrpc;
import dev.collide.v1.CreateSceneRequest;
import dev.collide.v1.DeleteSceneRequest;
import dev.collide.v1.GetBodiesRequest;
import dev.collide.v1.GetBodiesResponse;
import dev.collide.v1.GetSceneRequest;
import dev.collide.v1.GetServerStatsRequest;
import dev.collide.v1.GetServerStatsResponse;
import dev.collide.v1.ListScenesRequest;
import dev.collide.v1.OverlapRequest;
import dev.collide.v1.QueryResponse;
import dev.collide.v1.RaycastRequest;
import dev.collide.v1.RemoveBodiesRequest;
import dev.collide.v1.SceneInfo;
import dev.collide.v1.SceneOptions;
import dev.collide.v1.SetSceneMovingRequest;
import dev.collide.v1.SphereCastRequest;
import dev.collide.v1.UpsertBodiesRequest;
import dev.collide.v1.WatchRequest;
import dev.collide.v1.WatchResponse;
import dev.collide.v1.WriteResponse;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.File;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One connection to a collide server; safe for concurrent use. Build one with {@link
 * #builder(String)}, close it when done.
 *
 * <p>One method per rpc, taking and returning the proto's messages ({@code dev.collide.v1}),
 * each under the client's deadline ({@link #withDeadline} for another); streams have their own
 * types: {@link UpdateWriter}, {@link QueryStream}, {@link WatchStream}, {@link ExportStream}.
 * Every failure is a {@link CollideException} with the gRPC code and the field path.
 */
public final class CollideClient implements AutoCloseable {
  /** The metadata key naming the scene of a call (a router can shard by scene). */
  public static final Metadata.Key<String> SCENE_HEADER =
      Metadata.Key.of("x-collide-scene", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final ManagedChannel channel;
  private final boolean ownsChannel;
  private final String token;
  private final Duration deadline;

  private CollideClient(ManagedChannel channel, boolean ownsChannel, String token,
      Duration deadline) {
    this.channel = channel;
    this.ownsChannel = ownsChannel;
    this.token = token;
    this.deadline = deadline;
  }

  /** A builder of a client of the server at {@code address} ("host:port"). */
  public static Builder builder(String address) {
    return new Builder(address);
  }

  /** Options of a client. */
  public static final class Builder {
    private final String address;
    private String token;
    private Duration deadline = Duration.ofSeconds(10);
    private boolean tls;
    private File trustCertificates;
    private File clientCertificate;
    private File clientKey;
    private String serverNameOverride;

    private Builder(String address) {
      this.address = address;
    }

    /** Sends {@code authorization: Bearer <token>} on every call. */
    public Builder token(String token) {
      this.token = token;
      return this;
    }

    /** Bounds every unary call (default 10 s; null: none). Streams have no deadline. */
    public Builder deadline(Duration deadline) {
      this.deadline = deadline;
      return this;
    }

    /** TLS, checked against the system's roots or {@code trustCertificates} (PEM) if not null. */
    public Builder tls(File trustCertificates) {
      this.tls = true;
      this.trustCertificates = trustCertificates;
      return this;
    }

    /** A client certificate and key (PEM), for servers run with --tls_ca. */
    public Builder clientCertificate(File certificate, File key) {
      this.tls = true;
      this.clientCertificate = certificate;
      this.clientKey = key;
      return this;
    }

    /** The name the server's certificate is checked against, when not the address's host. */
    public Builder serverNameOverride(String name) {
      this.serverNameOverride = name;
      return this;
    }

    /** Creates the client; the connection is made in the background. */
    public CollideClient build() {
      NettyChannelBuilder channel = NettyChannelBuilder.forTarget(address)
          .maxInboundMessageSize(Integer.MAX_VALUE)
          .maxInboundMetadataSize(1 << 20);
      if (tls) {
        try {
          var ssl = GrpcSslContexts.forClient();
          if (trustCertificates != null) {
            ssl.trustManager(trustCertificates);
          }
          if (clientCertificate != null) {
            ssl.keyManager(clientCertificate, clientKey);
          }
          channel.sslContext(ssl.build()).useTransportSecurity();
        } catch (javax.net.ssl.SSLException e) {
          throw new CollideException(io.grpc.Status.Code.INVALID_ARGUMENT,
              "tls: " + e.getMessage(), "", 0, e);
        }
        if (serverNameOverride != null) {
          channel.overrideAuthority(serverNameOverride);
        }
      } else {
        channel.usePlaintext();
      }
      return new CollideClient(channel.build(), true, token, deadline);
    }
  }

  /** The same connection, with another deadline for unary calls (null: none). */
  public CollideClient withDeadline(Duration deadline) {
    return new CollideClient(channel, false, token, deadline);
  }

  /** The client's channel. */
  public ManagedChannel channel() {
    return channel;
  }

  /** The client's deadline for unary calls, or null. */
  public Duration deadline() {
    return deadline;
  }

  /** The channel with the metadata every call carries: the token and the scene header. */
  Channel channelFor(String scene) {
    Metadata headers = new Metadata();
    if (token != null && !token.isEmpty()) {
      headers.put(AUTHORIZATION, "Bearer " + token);
    }
    if (scene != null && !scene.isEmpty()) {
      headers.put(SCENE_HEADER, scene);
    }
    return ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(headers));
  }

  /** A blocking stub for a unary call on {@code scene}, with the deadline. */
  CollideGrpc.CollideBlockingStub blocking(String scene) {
    var stub = CollideGrpc.newBlockingStub(channelFor(scene));
    return deadline == null ? stub : stub.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** An async stub for a stream on {@code scene} (no deadline). */
  CollideGrpc.CollideStub async(String scene) {
    return CollideGrpc.newStub(channelFor(scene));
  }

  /** A blocking stub without deadline, for server streams. */
  CollideGrpc.CollideBlockingStub blockingStream(String scene) {
    return CollideGrpc.newBlockingStub(channelFor(scene));
  }

  private static <T> T call(Supplier<T> call) {
    try {
      return call.get();
    } catch (StatusRuntimeException e) {
      throw CollideException.from(e);
    }
  }

  /** Creates an empty scene (options may be null: the defaults). Admin. */
  public SceneInfo createScene(String scene, SceneOptions options) {
    var request = CreateSceneRequest.newBuilder().setScene(scene);
    if (options != null) {
      request.setOptions(options);
    }
    return call(() -> blocking(scene).createScene(request.build()).getScene());
  }

  /** Deletes a scene and its bodies. Admin. */
  public void deleteScene(String scene) {
    call(() -> blocking(scene).deleteScene(DeleteSceneRequest.newBuilder().setScene(scene).build()));
  }

  /** Every scene the caller may see, sorted by name. */
  public List<SceneInfo> listScenes() {
    return call(() -> blocking("").listScenes(ListScenesRequest.getDefaultInstance()).getScenesList());
  }

  /** One scene's settings and counters. */
  public SceneInfo getScene(String scene) {
    return call(() -> blocking(scene).getScene(GetSceneRequest.newBuilder().setScene(scene).build())
        .getScene());
  }

  /** Creates or replaces bodies, as one batch. Writer. */
  public WriteResponse upsertBodies(String scene, Iterable<dev.collide.v1.Body> bodies) {
    return call(() -> blocking(scene).upsertBodies(
        UpsertBodiesRequest.newBuilder().setScene(scene).addAllBodies(bodies).build()));
  }

  /** Removes bodies (each must exist), as one batch. Writer. */
  public WriteResponse removeBodies(String scene, Iterable<Long> ids) {
    return call(() -> blocking(scene).removeBodies(
        RemoveBodiesRequest.newBuilder().setScene(scene).addAllIds(ids).build()));
  }

  /** Reads bodies (no ids: every body of the scene). */
  public GetBodiesResponse getBodies(String scene, Iterable<Long> ids) {
    return call(() -> blocking(scene).getBodies(
        GetBodiesRequest.newBuilder().setScene(scene).addAllIds(ids).build()));
  }

  /** One ray query. */
  public QueryResponse raycast(RaycastRequest request) {
    return call(() -> blocking(request.getScene()).raycast(request));
  }

  /** One sphere cast. */
  public QueryResponse sphereCast(SphereCastRequest request) {
    return call(() -> blocking(request.getScene()).sphereCast(request));
  }

  /** One overlap query. */
  public QueryResponse overlap(OverlapRequest request) {
    return call(() -> blocking(request.getScene()).overlap(request));
  }

  /** The server's build, counters and at most {@code maxScenes} scenes (null: 100). Admin. */
  public GetServerStatsResponse serverStats(Integer maxScenes) {
    var request = GetServerStatsRequest.newBuilder();
    if (maxScenes != null) {
      request.setMaxScenes(maxScenes);
    }
    return call(() -> blocking("").getServerStats(request.build()));
  }

  /** Marks a scene as moving to {@code destination}: its writes are refused. Admin. */
  public SceneInfo setSceneMoving(String scene, String destination) {
    return call(() -> blocking(scene).setSceneMoving(SetSceneMovingRequest.newBuilder()
        .setScene(scene).setDestination(destination).build()).getScene());
  }

  /** Clears the mark of {@link #setSceneMoving}. Admin. */
  public SceneInfo clearSceneMoving(String scene) {
    return call(() -> blocking(scene).setSceneMoving(
        SetSceneMovingRequest.newBuilder().setScene(scene).setClear(true).build()).getScene());
  }

  /** A builder of an {@link UpdateWriter} for {@code scene}. */
  public UpdateWriter.Builder updateWriter(String scene) {
    return new UpdateWriter.Builder(this, scene);
  }

  /** A {@link QueryStream} for {@code scene}, at most {@code maxPending} batches unanswered. */
  public QueryStream queryStream(String scene, int maxPending) {
    return new QueryStream(this, scene, maxPending);
  }

  /** A {@link QueryStream} for {@code scene}, at most 1024 batches unanswered. */
  public QueryStream queryStream(String scene) {
    return queryStream(scene, 1024);
  }

  /** Opens a watch: iterate it, or use {@link #watch(WatchRequest, WatchStream.Listener)}. */
  public WatchStream watch(WatchRequest request) {
    return WatchStream.open(this, request);
  }

  /** Opens a watch whose messages go to {@code listener} on gRPC's threads. */
  public WatchStream watch(WatchRequest request, WatchStream.Listener listener) {
    return WatchStream.open(this, request, listener);
  }

  /** Starts exporting a scene (0: the server's chunk size). Admin. */
  public ExportStream exportScene(String scene, int maxBodiesPerChunk) {
    return ExportStream.open(this, scene, maxBodiesPerChunk);
  }

  /** Writes a scene's export to a file in {@code format} ("pb" or "jsonl"). Admin. */
  public ExportFiles.Summary exportSceneToFile(String scene, java.nio.file.Path path,
      String format) {
    return ExportFiles.exportToFile(this, scene, path, format);
  }

  /** Creates a scene from export messages, all or nothing. Admin. */
  public SceneInfo importScene(java.util.Iterator<dev.collide.v1.SceneExportMessage> messages,
      ImportOptions options) {
    return ExportFiles.importMessages(this, messages, options);
  }

  /** Imports an export file (its format guessed from its first bytes). Admin. */
  public SceneInfo importSceneFile(java.nio.file.Path path, ImportOptions options) {
    return ExportFiles.importFile(this, path, options);
  }

  @Override
  public void close() {
    if (!ownsChannel) {
      return;
    }
    channel.shutdownNow();
    try {
      channel.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
