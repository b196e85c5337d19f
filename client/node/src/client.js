/**
 * The collide client: one channel to a collide-server, a promise-returning method per unary rpc,
 * and the two streams (UpdateWriter, QueryStream).
 * @module collide-client/client
 */

import fs from 'node:fs';

import grpc from '@grpc/grpc-js';

import { DEFAULT_CHUNK_VALUES, heightfieldRequests, meshRequests } from './assets.js';
import { CollideError, fromGrpcError } from './errors.js';
import { encodeRequest, service, status } from './proto.js';
import { QueryStream } from './query_stream.js';
import { ExportStream, importRequests } from './scene_transfer.js';
import { UpdateWriter } from './update_writer.js';
import { InterestStream } from './interest_stream.js';
import { WatchStream } from './watch_stream.js';

/** The metadata key that names a call's scene (lets a router shard by scene). */
export const SCENE_HEADER = 'x-collide-scene';

/** A valid scene name: 1 to 128 characters of [A-Za-z0-9_.-], starting with a letter or digit. */
const SCENE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** The deadline of a unary call when the client is given none, in milliseconds. */
export const DEFAULT_DEADLINE_MS = 30_000;

/**
 * @typedef {object} TlsOptions PEM contents (Buffer or string) or, with `*File`, paths to them.
 * @property {Buffer|string} [rootCerts] CA certificates that sign the server's certificate
 *     (default: the system's roots).
 * @property {string} [rootCertsFile]
 * @property {Buffer|string} [privateKey] The client's key, for servers that require client
 *     certificates (with certChain).
 * @property {string} [privateKeyFile]
 * @property {Buffer|string} [certChain] The client's certificate chain.
 * @property {string} [certChainFile]
 * @property {string} [serverNameOverride] The name to verify the server's certificate against
 *     when it differs from the address's host.
 */

/**
 * @typedef {object} ClientOptions
 * @property {string} [token] Sent as `authorization: Bearer <token>` on every call.
 * @property {boolean|TlsOptions} [tls] true (system roots) or TLS settings; absent: plaintext.
 * @property {number} [deadlineMs] Deadline of every unary call (default 30000); a call's own
 *     `deadlineMs` overrides it. Streams have no deadline unless opened with one.
 * @property {Record<string, string|number>} [channelOptions] Extra gRPC channel arguments.
 */

/**
 * @typedef {object} CallOptions
 * @property {number} [deadlineMs] This call's deadline in milliseconds (overrides the client's).
 */

/**
 * A uint64 as read: a decimal string (a JavaScript number cannot hold every uint64). As written:
 * a non-negative safe integer, a decimal string or a BigInt.
 * @typedef {string} Uint64
 */

/** @typedef {{x: number, y: number, z: number}} Vec3 */
/** @typedef {{x: number, y: number, z: number, w: number}} Quat */
/** @typedef {{position: Vec3|null, rotation: Quat|null}} Pose */
/**
 * @typedef {object} SceneOptions
 * @property {number} [fat_margin]
 * @property {number} [max_bodies]
 * @property {'DURABILITY_DEFAULT'|'DURABILITY_NONE'|'DURABILITY_PERIODIC'|
 *            'DURABILITY_ALWAYS'} [durability]
 * @property {number} [history_ticks]
 */
/**
 * @typedef {object} SceneStats
 * @property {Uint64} version Grows by one per applied update batch.
 * @property {number} body_count
 * @property {number} static_body_count
 * @property {number} tree_height
 * @property {Uint64} memory_bytes
 * @property {Uint64} tick The scene's current tick.
 * @property {Uint64} oldest_tick The oldest tick queries may name with at_tick.
 */
/**
 * @typedef {{name: string, options: SceneOptions, stats: SceneStats, moved_to: string}} SceneInfo
 *   `moved_to`: where the scene is moving (writes are refused naming it); empty when it is not.
 */
/**
 * @typedef {object} Body As collide.v1.Body: `shape` holds one of `sphere`, `box`, `capsule`.
 * @property {Uint64} id
 * @property {{sphere?: {radius: number}, box?: {half_extents: Vec3},
 *             capsule?: {radius: number, half_height: number}}} shape
 * @property {Pose} pose
 * @property {number} [category]
 * @property {number} [mask]
 * @property {Uint64} [user_data]
 * @property {'BODY_KIND_DYNAMIC'|'BODY_KIND_STATIC'} [kind]
 */
/** @typedef {{version: Uint64, durable: boolean}} WriteResponse */
/** @typedef {{version: Uint64, bodies: Body[], missing_ids: Uint64[]}} GetBodiesResponse */
/**
 * @typedef {object} Hit
 * @property {Uint64} body_id
 * @property {number} distance
 * @property {Vec3|null} point
 * @property {Vec3|null} normal
 * @property {number} depth
 * @property {boolean} start_overlapping
 */
/** @typedef {{version: Uint64, hits: Hit[], truncated: boolean}} QueryResponse */
/**
 * @typedef {object} ServerStats collide.v1.GetServerStatsResponse: streams open, opened, refused
 *     and stalled, bytes queued, scenes, whether the data directory is writable, the watches'
 *     counters and the fsync lag (see the proto for each field).
 */

/**
 * @typedef {object} QueryOptions Fields shared by RaycastRequest, SphereCastRequest and
 *     OverlapRequest.
 * @property {string} scene
 * @property {{category?: number, mask?: number, excluded_ids?: Uint64[]}} [filter]
 * @property {'MODE_CLOSEST'|'MODE_ANY'|'MODE_ALL'} [mode]
 * @property {number} [max_hits]
 * @property {Uint64|number|bigint} [at_tick] Answer against the scene as it was at this tick.
 * @property {number} [tick_fraction] With at_tick: interpolate that far towards at_tick + 1.
 * @property {Uint64|number|bigint} [min_version] Wait until the scene reaches this version.
 */

function readPem(value, file) {
  if (value !== undefined) return Buffer.isBuffer(value) ? value : Buffer.from(value);
  if (file !== undefined) return fs.readFileSync(file);
  return null;
}

function channelCredentials(tls) {
  if (!tls) return grpc.credentials.createInsecure();
  const options = tls === true ? {} : tls;
  return grpc.credentials.createSsl(
    readPem(options.rootCerts, options.rootCertsFile),
    readPem(options.privateKey, options.privateKeyFile),
    readPem(options.certChain, options.certChainFile),
  );
}

/** The serializer of requests already encoded (encodeRequest). */
const encoded = (bytes) => bytes;

/** The scene a request names: its `scene` field (every collide request but ListScenes). */
function sceneOf(request) {
  return typeof request?.scene === 'string' ? request.scene : undefined;
}

/**
 * A connection to one collide-server. Methods mirror the rpcs of collide.v1.Collide: each takes
 * the request message as a plain object (the proto's field names) and resolves with the answer's
 * contents, or rejects with a {@link CollideError}.
 *
 * @example
 * const client = new Client('127.0.0.1:50051', { token: 'secret' });
 * await client.createScene({ scene: 'arena' });
 * const sphere = { sphere: { radius: 1 } };
 * await client.upsertBodies({
 *   scene: 'arena',
 *   bodies: [{ id: 1, shape: sphere, pose: { position: { x: 0, y: 0, z: 0 } } }],
 * });
 * const { version, hits } = await client.raycast({
 *   scene: 'arena',
 *   mode: 'MODE_ALL',
 *   ray: { origin: { x: -10, y: 0, z: 0 }, direction: { x: 1, y: 0, z: 0 }, max_distance: 100 },
 * });
 */
export class Client {
  /**
   * @param {string} address `host:port` of the server.
   * @param {ClientOptions} [options]
   */
  constructor(address, options = {}) {
    /** @type {string} */
    this.address = address;
    this.token_ = options.token;
    this.deadlineMs_ = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
    const channelOptions = { ...(options.channelOptions ?? {}) };
    if (options.tls && options.tls !== true && options.tls.serverNameOverride) {
      channelOptions['grpc.ssl_target_name_override'] = options.tls.serverNameOverride;
      channelOptions['grpc.default_authority'] = options.tls.serverNameOverride;
    }
    this.grpc_ = new grpc.Client(address, channelCredentials(options.tls), channelOptions);
    /** @type {boolean} Whether close() was called. */
    this.closed = false;
  }

  /**
   * Closes the channel; calls in flight fail with CANCELLED or UNAVAILABLE, later calls with
   * FAILED_PRECONDITION, and open writers stop (their unacknowledged batches are kept).
   */
  close() {
    this.closed = true;
    this.grpc_.close();
  }

  /** @returns {CollideError} The error of a call made after close(). */
  closedError() {
    return new CollideError(grpc.status.FAILED_PRECONDITION, 'client: closed');
  }

  /**
   * The metadata of a call: the token and the scene header (for a valid scene name).
   * @param {string|undefined} scene
   * @returns {grpc.Metadata}
   */
  metadata(scene) {
    const metadata = new grpc.Metadata();
    if (this.token_ !== undefined) metadata.set('authorization', `Bearer ${this.token_}`);
    // Only a valid name goes into the header: another (too long, a space, non-ASCII) could break
    // the call itself, while without the header the server answers `scene: <why>`.
    if (scene !== undefined && SCENE_NAME.test(scene)) metadata.set(SCENE_HEADER, scene);
    return metadata;
  }

  /**
   * gRPC call options for a deadline in milliseconds (none when undefined or Infinity).
   * @param {number|undefined} deadlineMs
   */
  static callOptions(deadlineMs) {
    if (deadlineMs === undefined || deadlineMs === Infinity) return {};
    return { deadline: new Date(Date.now() + deadlineMs) };
  }

  /**
   * Runs one unary rpc.
   * @param {string} rpc The rpc's name in collide.v1.Collide.
   * @param {object} request
   * @param {CallOptions} [options]
   * @returns {Promise<any>} The response message.
   */
  unary(rpc, request, options = {}) {
    const method = service[rpc];
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(this.closedError());
        return;
      }
      let bytes;
      try {
        bytes = encodeRequest(rpc, request ?? {});
      } catch (error) {
        reject(error);
        return;
      }
      this.grpc_.makeUnaryRequest(
        method.path,
        encoded,
        method.responseDeserialize,
        bytes,
        this.metadata(sceneOf(request)),
        Client.callOptions(options.deadlineMs ?? this.deadlineMs_),
        (error, response) => (error ? reject(fromGrpcError(error)) : resolve(response)),
      );
    });
  }

  /**
   * Opens a bidirectional stream of `rpc` for one scene (for UpdateWriter and QueryStream); it
   * takes requests encoded with encodeRequest.
   * @param {string} rpc
   * @param {string} scene
   * @param {number} [deadlineMs] none by default
   * @returns {grpc.ClientDuplexStream<any, any>}
   * @throws {CollideError} FAILED_PRECONDITION after close().
   */
  openStream(rpc, scene, deadlineMs) {
    if (this.closed) throw this.closedError();
    const method = service[rpc];
    return this.grpc_.makeBidiStreamRequest(
      method.path,
      encoded,
      method.responseDeserialize,
      this.metadata(scene),
      Client.callOptions(deadlineMs),
    );
  }

  /**
   * Opens a server-streaming call of `rpc` with `request` (checked and encoded here) for the
   * scene it names (for WatchStream); no deadline.
   * @param {string} rpc
   * @param {{scene: string}} request
   * @returns {grpc.ClientReadableStream<any>}
   * @throws {CollideError} INVALID_ARGUMENT for a request that does not fit the proto;
   *     FAILED_PRECONDITION after close().
   */
  openServerStream(rpc, request) {
    if (this.closed) throw this.closedError();
    const method = service[rpc];
    return this.grpc_.makeServerStreamRequest(
      method.path,
      encoded,
      method.responseDeserialize,
      encodeRequest(rpc, request),
      this.metadata(request.scene),
      {},
    );
  }

  /**
   * Creates an empty scene. ALREADY_EXISTS if the name is taken. Admin.
   * @param {{scene: string, options?: SceneOptions}} request
   * @param {CallOptions} [options]
   * @returns {Promise<SceneInfo>} The new scene (defaults filled in).
   */
  async createScene(request, options) {
    return (await this.unary('CreateScene', request, options)).scene;
  }

  /**
   * Deletes a scene and its bodies. Admin.
   * @param {{scene: string}} request
   * @param {CallOptions} [options]
   * @returns {Promise<void>}
   */
  async deleteScene(request, options) {
    await this.unary('DeleteScene', request, options);
  }

  /**
   * Every scene the caller's token may see, sorted by name. Reader.
   * @param {CallOptions} [options]
   * @returns {Promise<SceneInfo[]>}
   */
  async listScenes(options) {
    return (await this.unary('ListScenes', {}, options)).scenes;
  }

  /**
   * One scene's settings and counters (its version and tick among them). Reader.
   * @param {{scene: string}} request
   * @param {CallOptions} [options]
   * @returns {Promise<SceneInfo>}
   */
  async getScene(request, options) {
    return (await this.unary('GetScene', request, options)).scene;
  }

  /**
   * Creates or replaces bodies, as one batch. Writer.
   * @param {{scene: string, bodies: Body[]}} request
   * @param {CallOptions} [options]
   * @returns {Promise<WriteResponse>} The version that holds the write.
   */
  upsertBodies(request, options) {
    return this.unary('UpsertBodies', request, options);
  }

  /**
   * Removes bodies, as one batch; each must exist. Writer.
   * @param {{scene: string, ids: Array<Uint64|number|bigint>}} request
   * @param {CallOptions} [options]
   * @returns {Promise<WriteResponse>}
   */
  removeBodies(request, options) {
    return this.unary('RemoveBodies', request, options);
  }

  /**
   * Reads bodies (every body when `ids` is empty). Reader.
   * @param {{scene: string, ids?: Array<Uint64|number|bigint>}} request
   * @param {CallOptions} [options]
   * @returns {Promise<GetBodiesResponse>}
   */
  getBodies(request, options) {
    return this.unary('GetBodies', request, options);
  }

  /**
   * One ray cast. Reader.
   * @param {QueryOptions & {ray: {origin: Vec3, direction: Vec3, max_distance: number}}} request
   * @param {CallOptions} [options]
   * @returns {Promise<QueryResponse>}
   */
  raycast(request, options) {
    return this.unary('Raycast', request, options);
  }

  /**
   * One sphere cast. Reader.
   * @param {QueryOptions & {cast: {origin: Vec3, direction: Vec3, max_distance: number,
   *                                radius: number}}} request
   * @param {CallOptions} [options]
   * @returns {Promise<QueryResponse>}
   */
  sphereCast(request, options) {
    return this.unary('SphereCast', request, options);
  }

  /**
   * The bodies a posed shape overlaps. Reader.
   * @param {QueryOptions & {overlap: {shape: Body['shape'], pose: Pose}, detail?: boolean}} request
   * @param {CallOptions} [options]
   * @returns {Promise<QueryResponse>}
   */
  overlap(request, options) {
    return this.unary('Overlap', request, options);
  }

  /**
   * The server's stream counters and state (collide.v1.GetServerStatsResponse as a plain object:
   * uint64 counters as decimal strings). Admin.
   * @param {CallOptions} [options]
   * @returns {Promise<ServerStats>}
   */
  serverStats(options) {
    return this.unary('GetServerStats', {}, options);
  }

  /**
   * Opens an update writer for one scene: batches stamped with a client id and increasing
   * sequences, kept until acknowledged and resent after a reconnect. Writer.
   * @param {string} scene
   * @param {import('./update_writer.js').UpdateWriterOptions} [options]
   * @returns {UpdateWriter}
   */
  openUpdateWriter(scene, options) {
    if (typeof scene !== 'string') {
      throw new CollideError(grpc.status.INVALID_ARGUMENT, 'scene: must be a string');
    }
    return new UpdateWriter(this, scene, options);
  }

  /**
   * Opens a query stream for one scene. Reader.
   * @param {string} scene
   * @param {import('./query_stream.js').QueryStreamOptions} [options]
   * @returns {QueryStream}
   */
  openQueryStream(scene, options) {
    if (typeof scene !== 'string') {
      throw new CollideError(grpc.status.INVALID_ARGUMENT, 'scene: must be a string');
    }
    return new QueryStream(this, scene, options);
  }

  /**
   * Opens a Watch on `request.scene`: fences (trigger volumes, fixed or attached to bodies) with
   * swept enter/exit events and contact watches; see WatchStream. Reader.
   * @param {{scene: string, fences?: object[], contacts?: object[], max_queued_events?: number}} request
   * @returns {WatchStream}
   * @throws {CollideError} INVALID_ARGUMENT for a request that does not fit the proto;
   *     FAILED_PRECONDITION after close().
   */
  watch(request) {
    if (this.closed) throw this.closedError();
    return new WatchStream(this, request);
  }

  /**
   * Opens an interest stream on `request.scene`: observers (fixed, or riding bodies) whose
   * relevant bodies the server keeps, streamed as a snapshot then deltas, with observers changed
   * on the open stream and reconnection that resubscribes; see InterestStream. Reader.
   * @param {{scene: string, observers?: object[], max_queued_events?: number}} request
   * @param {import('./interest_stream.js').InterestStreamOptions} [options]
   * @returns {InterestStream}
   * @throws {CollideError} INVALID_ARGUMENT for a request that does not fit the proto;
   *     FAILED_PRECONDITION after close().
   */
  interest(request, options) {
    if (this.closed) throw this.closedError();
    return new InterestStream(this, request, options);
  }

  /**
   * Exports a scene at one version: an async iterable of its collide.v1 SceneExportMessage
   * messages (a header, chunks of at most `max_bodies_per_chunk` bodies — 0: the server's
   * default, 4,096 — and a trailer); see ExportStream. Admin.
   * @param {{scene: string, max_bodies_per_chunk?: number}} request
   * @returns {ExportStream}
   * @throws {CollideError} INVALID_ARGUMENT for a request that does not fit the proto;
   *     FAILED_PRECONDITION after close().
   */
  exportScene(request) {
    if (this.closed) throw this.closedError();
    return new ExportStream(this, request);
  }

  /**
   * Creates a scene from the messages of an export (an iterable or async iterable of
   * SceneExportMessage objects, for example an ExportStream of another server), all or nothing;
   * resolves with the new scene once the server made it durable. `scene`: the new scene's name
   * (default: the header's); `replace`: replace a scene of that name (else ALREADY_EXISTS).
   * Messages are sent as they are taken, with the stream's flow control. A message that does not
   * fit the proto rejects with INVALID_ARGUMENT `messages[i]...`, and an error thrown by the
   * source rejects with that error; either way nothing is imported. Admin.
   * @param {Iterable<object>|AsyncIterable<object>} messages
   * @param {{scene?: string, replace?: boolean, deadlineMs?: number}} [options] No deadline by
   *     default.
   * @returns {Promise<SceneInfo>}
   */
  importScene(messages, options = {}) {
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(this.closedError());
        return;
      }
      const { scene, replace = false, deadlineMs } = options;
      if (scene !== undefined && typeof scene !== 'string') {
        reject(new CollideError(status.INVALID_ARGUMENT, 'scene: must be a string'));
        return;
      }
      if (typeof replace !== 'boolean') {
        reject(new CollideError(status.INVALID_ARGUMENT, 'replace: must be a boolean'));
        return;
      }
      if (messages === null || typeof messages !== 'object' ||
          (typeof messages[Symbol.iterator] !== 'function' &&
           typeof messages[Symbol.asyncIterator] !== 'function')) {
        reject(new CollideError(status.INVALID_ARGUMENT,
                                'messages: must be an iterable of SceneExportMessage objects'));
        return;
      }
      const method = service.ImportScene;
      let sourceError;
      let ended = false;
      const call = this.grpc_.makeClientStreamRequest(
        method.path,
        encoded,
        method.responseDeserialize,
        this.metadata(scene),
        Client.callOptions(deadlineMs),
        (error, response) => {
          ended = true;
          if (sourceError !== undefined) reject(sourceError);
          else if (error) reject(fromGrpcError(error));
          else resolve(response.scene);
        },
      );
      // Resolves once the call can take more (or has ended).
      const writable = () => new Promise((done) => {
        const finish = () => {
          call.off('drain', finish);
          call.off('status', finish);
          done();
        };
        call.on('drain', finish);
        call.on('status', finish);
      });
      (async () => {
        try {
          for await (const bytes of importRequests(messages, scene, replace)) {
            if (ended) return;
            if (!call.write(bytes)) await writable();
          }
          if (!ended) call.end();
        } catch (error) {
          sourceError = error;
          call.cancel();
        }
      })();
    });
  }

  /**
   * Uploads a triangle mesh as asset `name` of `scene` (UploadAsset), all or nothing; resolves
   * once the asset is durable with the UploadAssetResponse (`asset`: its AssetInfo, sha256 and
   * triangle_count among them; `already_present`: the scene held this name with this content).
   * `vertices`: x, y, z per vertex (a Float32Array, any typed array, an ArrayBuffer of float32
   * values or an array of numbers); `indices`: three per triangle (uint32). Bodies place it as
   * `shape: {mesh: {asset: name, scale}}`. Errors name the elements (`vertices[12]: must be
   * finite`). Writer.
   * @param {{scene: string, name: string, vertices: ArrayLike<number>|ArrayBuffer,
   *     indices: ArrayLike<number>|ArrayBuffer}} request
   * @param {{deadlineMs?: number, chunkValues?: number}} [options]
   * @returns {Promise<object>}
   */
  uploadMesh(request, options = {}) {
    return this.upload_(request, (scene, chunkValues) =>
      meshRequests(scene, request.name, request, chunkValues), options);
  }

  /**
   * Uploads a heightfield as asset `name` of `scene`, as uploadMesh: `rows` x `columns` heights,
   * row-major, `spacingX` and `spacingZ` (default 1), optional `holes` (a Uint8Array of
   * (rows - 1) x (columns - 1) bits). Bodies place it as `shape: {heightfield: {asset: name}}`.
   * Writer.
   * @param {{scene: string, name: string, rows: number, columns: number,
   *     heights: ArrayLike<number>|ArrayBuffer, spacingX?: number, spacingZ?: number,
   *     holes?: Uint8Array}} request
   * @param {{deadlineMs?: number, chunkValues?: number}} [options]
   * @returns {Promise<object>}
   */
  uploadHeightfield(request, options = {}) {
    return this.upload_(request, (scene, chunkValues) =>
      heightfieldRequests(scene, request.name, request, chunkValues), options);
  }

  /**
   * Every asset of a scene, sorted by name (AssetInfo objects). Reader.
   * @param {{scene: string}} request
   * @param {CallOptions} [options]
   * @returns {Promise<object[]>}
   */
  async listAssets(request, options) {
    return (await this.unary('ListAssets', request, options)).assets;
  }

  /**
   * Deletes an asset no body places (FAILED_PRECONDITION otherwise). Writer.
   * @param {{scene: string, name: string}} request
   * @param {CallOptions} [options]
   * @returns {Promise<void>}
   */
  async deleteAsset(request, options) {
    await this.unary('DeleteAsset', request, options);
  }

  upload_(request, build, options) {
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(this.closedError());
        return;
      }
      if (request === null || typeof request !== 'object' || typeof request.scene !== 'string') {
        reject(new CollideError(status.INVALID_ARGUMENT, 'scene: must be a string'));
        return;
      }
      const { deadlineMs, chunkValues = DEFAULT_CHUNK_VALUES } = options;
      let messages;
      try {
        messages = build(request.scene, chunkValues);
      } catch (error) {
        reject(error);
        return;
      }
      const method = service.UploadAsset;
      let ended = false;
      const call = this.grpc_.makeClientStreamRequest(
        method.path,
        encoded,
        method.responseDeserialize,
        this.metadata(request.scene),
        Client.callOptions(deadlineMs),
        (error, response) => {
          ended = true;
          if (error) reject(fromGrpcError(error));
          else resolve(response);
        },
      );
      (async () => {
        for (const bytes of messages) {
          if (ended) return;
          if (!call.write(bytes)) {
            await new Promise((done) => {
              const finish = () => {
                call.off('drain', finish);
                call.off('status', finish);
                done();
              };
              call.on('drain', finish);
              call.on('status', finish);
            });
          }
        }
        if (!ended) call.end();
      })();
    });
  }
}
