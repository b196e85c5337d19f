// Type declarations of collide-client (the JavaScript sources carry the same contracts in JSDoc).
// Messages use the field names of proto/collide/v1/collide.proto.

import type { EventEmitter } from 'node:events';
import type { Metadata, status as grpcStatus } from '@grpc/grpc-js';

/** A uint64 as read from the server: a decimal string. */
export type Uint64 = string;
/** A uint64 as written: a non-negative safe integer, a decimal string or a BigInt. */
export type Uint64Input = number | string | bigint;

export interface Vec3 {
  x: number;
  y: number;
  z: number;
}
export interface Quat {
  x: number;
  y: number;
  z: number;
  w: number;
}
export interface Pose {
  position?: Vec3 | null;
  rotation?: Quat | null;
}
export interface Shape {
  sphere?: { radius: number };
  box?: { half_extents: Vec3 };
  capsule?: { radius: number; half_height: number };
  /** An instance of the scene's mesh asset (Client.uploadMesh). */
  mesh?: AssetInstance;
  /** An instance of the scene's heightfield asset (Client.uploadHeightfield). */
  heightfield?: AssetInstance;
}
/** A body's placement of an asset: its name and a uniform scale (absent: 1). */
export interface AssetInstance {
  asset: string;
  scale?: number | null;
}
export type Durability =
  | 'DURABILITY_DEFAULT'
  | 'DURABILITY_NONE'
  | 'DURABILITY_PERIODIC'
  | 'DURABILITY_ALWAYS'
  | 'DURABILITY_REPLICATED';
export type BodyKind = 'BODY_KIND_DYNAMIC' | 'BODY_KIND_STATIC';
export type Mode = 'MODE_CLOSEST' | 'MODE_ANY' | 'MODE_ALL';

export interface SceneOptions {
  fat_margin?: number;
  max_bodies?: number;
  durability?: Durability;
  history_ticks?: number;
}
export interface SceneStats {
  version: Uint64;
  body_count: number;
  static_body_count: number;
  tree_height: number;
  memory_bytes: Uint64;
  tick: Uint64;
  oldest_tick: Uint64;
  asset_count: number;
  asset_triangles: Uint64;
  asset_bytes: Uint64;
  asset_memory_bytes: Uint64;
}
export interface SceneInfo {
  name: string;
  options: SceneOptions;
  stats: SceneStats;
  /** Where the scene is moving (writes are refused naming it); empty when it is not. */
  moved_to: string;
  /** A replicated scene: its owner and the answering server's lag; null for another scene. */
  replication: SceneReplication | null;
}

/** A replicated scene as the answering server holds it (docs/SCALING.md, Replicated scenes). */
export interface SceneReplication {
  owner: string;
  owned: boolean;
  epoch: Uint64;
  applied_sequence: Uint64;
  lag_sequences: Uint64;
  lag_ms: Uint64;
  state: string;
}

/** The answering server's part in replicated scenes (GetServerStatsResponse.replication). */
export interface ReplicationStats {
  enabled: boolean;
  connected: boolean;
  address: string;
  owned_scenes: number;
  followed_scenes: number;
  takeovers: Uint64;
  depositions: Uint64;
  rebuilds: Uint64;
  records_published: Uint64;
  records_applied: Uint64;
  snapshots_published: Uint64;
}

export interface BodyInput {
  id: Uint64Input;
  shape?: Shape;
  pose?: Pose;
  category?: number;
  mask?: number;
  user_data?: Uint64Input;
  kind?: BodyKind;
}
export interface Body {
  id: Uint64;
  shape: Shape | null;
  pose: Pose | null;
  category?: number;
  mask?: number;
  user_data: Uint64;
  kind: BodyKind;
}

export interface WriteResponse {
  version: Uint64;
  durable: boolean;
}
export interface GetBodiesResponse {
  version: Uint64;
  bodies: Body[];
  missing_ids: Uint64[];
}

export interface Filter {
  category?: number;
  mask?: number;
  excluded_ids?: Uint64Input[];
}
export interface Raycast {
  origin: Vec3;
  direction: Vec3;
  max_distance: number;
}
export interface SphereCast extends Raycast {
  radius: number;
}
export interface Overlap {
  shape: Shape;
  pose?: Pose;
}

/** Fields every unary query request has. */
export interface QueryRequest {
  scene: string;
  filter?: Filter;
  mode?: Mode;
  max_hits?: number;
  /** Answer against the scene as it was at the end of this tick. */
  at_tick?: Uint64Input;
  /** With at_tick: interpolate poses that far (in [0, 1)) towards the end of at_tick + 1. */
  tick_fraction?: number;
  /** Answer only once the scene has reached this version (else DEADLINE_EXCEEDED). */
  min_version?: Uint64Input;
}

export interface Hit {
  body_id: Uint64;
  distance: number;
  point: Vec3 | null;
  normal: Vec3 | null;
  depth: number;
  start_overlapping: boolean;
  /** A hit on a mesh or heightfield body: the triangle's index in its asset (else null). */
  triangle?: number | null;
  /** A ray that met the triangle's back. */
  back_face: boolean;
}
export interface QueryResponse {
  version: Uint64;
  hits: Hit[];
  truncated: boolean;
}

export interface AnswerError {
  code: number;
  message: string;
  /** Set when the batch was refused because its scene moved: the server it moved to. */
  moved_to?: string;
}

export interface Query {
  request_id?: Uint64Input;
  raycast?: Raycast;
  sphere_cast?: SphereCast;
  overlap?: Overlap;
  point?: { point: Vec3; radius: number };
  aabb?: { region: { min: Vec3; max: Vec3 } };
  filter?: Filter;
  mode?: Mode;
  max_hits?: number;
  detail?: boolean;
  at_tick?: Uint64Input;
  tick_fraction?: number;
}
export interface QueryResult {
  request_id: Uint64;
  hits: Hit[];
  truncated: boolean;
  error: AnswerError | null;
}
export interface QueryBatch {
  queries: Query[];
  min_version?: Uint64Input;
}
export interface QueryBatchResult {
  version: Uint64;
  results: QueryResult[];
  error: AnswerError | null;
}

export interface UpdateOp {
  upsert?: BodyInput;
  set_pose?: { id: Uint64Input; pose: Pose };
  set_filter?: { id: Uint64Input; category: number; mask: number };
  remove?: Uint64Input;
}
/** An UpdateBatch without scene, client_id and client_sequence (the writer sets them). */
export interface UpdateBatchInput {
  ops?: UpdateOp[];
  moves?: { ids: Uint64Input[]; poses: number[] | Float32Array };
  tick?: Uint64Input;
}
export interface UpdateAck {
  client_sequence: Uint64;
  version: Uint64;
  durable: boolean;
  duplicate: boolean;
  error: AnswerError | null;
}
export interface RejectedBatch {
  sequence: Uint64;
  batch: object;
  error: CollideError;
}

export interface Fence {
  id: Uint64Input;
  shape: Shape;
  pose?: Pose;
  /** The body the fence moves with (its pose is then in the body's frame). */
  attached_to?: Uint64Input;
  filter?: Filter;
}
export interface ContactWatch {
  id: Uint64Input;
  category_a?: number;
  category_b?: number;
}
export interface WatchRequest {
  scene: string;
  fences?: Fence[];
  contacts?: ContactWatch[];
  max_queued_events?: number;
}
export type WatchEventKind =
  'KIND_UNSPECIFIED' | 'KIND_ENTER' | 'KIND_EXIT' | 'KIND_CONTACT_BEGIN' | 'KIND_CONTACT_END';
export interface WatchEvent {
  kind: WatchEventKind;
  fence_id: Uint64;
  contact_id: Uint64;
  body_id: Uint64;
  other_body_id: Uint64;
  point: Vec3 | null;
  normal: Vec3 | null;
}
export interface WatchUpdate {
  version: Uint64;
  tick: Uint64;
  events: WatchEvent[];
}
export interface FenceContents {
  fence_id: Uint64;
  body_ids: Uint64[];
}
export interface ContactPair {
  contact_id: Uint64;
  body_id: Uint64;
  other_body_id: Uint64;
}
export interface WatchSnapshot {
  version: Uint64;
  tick: Uint64;
  resync: boolean;
  fences: FenceContents[];
  contacts: ContactPair[];
}
/** One message of a Watch: a snapshot or an update (the other is null). */
export interface WatchResponse {
  snapshot: WatchSnapshot | null;
  update: WatchUpdate | null;
}

export interface ViewCone {
  /** The axis in the observer's frame (non-zero). */
  direction: Vec3;
  /** Radians, in (0, pi]. */
  half_angle: number;
  /** Radians, in [half_angle, pi]; absent: half_angle. */
  leave_half_angle?: number;
}
/** A point of view: fixed at `pose`, or riding body `attached_to` (`pose` in its frame). */
export interface Observer {
  id: Uint64Input;
  attached_to?: Uint64Input;
  pose?: Pose;
  enter_radius: number;
  /** Absent: enter_radius. */
  leave_radius?: number;
  cone?: ViewCone;
  filter?: Filter;
  /** At most this many, the nearest (0: the server's limit). */
  max_relevant?: number;
}
export interface InterestRequest {
  scene: string;
  observers?: Observer[];
  max_queued_events?: number;
  /** Sent with InterestStream.remove. */
  removes?: Uint64Input[];
}
export interface ObserverDelta {
  observer_id: Uint64;
  full: boolean;
  entered: Uint64[];
  left: Uint64[];
}
export interface InterestUpdate {
  version: Uint64;
  tick: Uint64;
  requests_applied: Uint64;
  deltas: ObserverDelta[];
}
export interface RelevantSet {
  observer_id: Uint64;
  body_ids: Uint64[];
}
export interface InterestSnapshot {
  version: Uint64;
  tick: Uint64;
  resync: boolean;
  requests_applied: Uint64;
  sets: RelevantSet[];
}
/** One message of an interest stream: a snapshot or an update (the other is null). */
export interface InterestResponse {
  snapshot: InterestSnapshot | null;
  update: InterestUpdate | null;
}
/** An InterestResponse as InterestStream yields it. */
export interface InterestMessage extends InterestResponse {
  /** True on the snapshot of a stream reopened after a break (full sets again). */
  reconnected: boolean;
}
export interface InterestStreamOptions {
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  reconnectTimeoutMs?: number;
}

/** The server's stream counters and state (GetServerStats; see the proto for each field). */
export interface GetServerStatsResponse {
  update_streams: number;
  query_streams: number;
  streams_opened: Uint64;
  streams_refused: Uint64;
  streams_stalled: Uint64;
  outbound_bytes: Uint64;
  scenes: number;
  writable: boolean;
  write_error: string;
  watch_streams: number;
  watch_fences: Uint64;
  watch_contents: Uint64;
  watch_queued_bytes: Uint64;
  watch_backlog_bytes: Uint64;
  watch_resyncs: Uint64;
  watch_exhausted: Uint64;
  sync_lag_us: Uint64;
  max_sync_lag_us: Uint64;
  server_version: string;
  server_commit: string;
  build_type: string;
  /** An int64, read as a decimal string. */
  start_time_unix_seconds: string;
  uptime_seconds: Uint64;
  resident_memory_bytes: Uint64;
  scene_stats: ServerSceneStats[];
  scenes_omitted: number;
  export_streams: number;
  import_streams: number;
  interest_streams: number;
  interest_observers: Uint64;
  assets: number;
  asset_triangles: Uint64;
  asset_bytes: Uint64;
  asset_memory_bytes: Uint64;
  upload_streams: number;
  replication: ReplicationStats;
  server_address: string;
}

/** One scene's figures in GetServerStatsResponse. */
export interface ServerSceneStats {
  name: string;
  body_count: number;
  static_body_count: number;
  version: Uint64;
  tick: Uint64;
  memory_bytes: Uint64;
  history_bytes: Uint64;
  log_bytes: Uint64;
  asset_count: number;
  asset_triangles: Uint64;
  asset_bytes: Uint64;
  asset_memory_bytes: Uint64;
  replication: SceneReplication | null;
}

/** ExportScene's request. */
export interface ExportSceneRequest {
  scene: string;
  /** The most bodies per chunk (0: 4,096; above 16,384 lowered to it). */
  max_bodies_per_chunk?: number;
}
/** One writer's deduplication mark in an export's header. */
export interface ClientMark {
  client_id: Uint64;
  sequence: Uint64;
  version: Uint64;
}
/** The first message of an export: everything but the bodies. */
export interface SceneExportHeader {
  scene: string;
  options: SceneOptions | null;
  version: Uint64;
  tick: Uint64;
  clients: ClientMark[];
  body_count: Uint64;
  /** The export format (2: the trailer's checksum covers the header, chunks and counts). */
  format: number;
  /** How many assets follow the header. */
  asset_count: Uint64;
}
/** Some of the bodies, in increasing id order across all chunks. */
export interface SceneExportChunk {
  bodies: Body[];
}
/** The last message of an export. */
export interface SceneExportTrailer {
  body_count: Uint64;
  chunk_count: Uint64;
  crc32c: number;
  asset_count: Uint64;
}
/** One message of an export (and of an import): one of its parts, the others null. */
export interface SceneExportMessage {
  header?: SceneExportHeader | null;
  chunk?: SceneExportChunk | null;
  trailer?: SceneExportTrailer | null;
  /** The start of one asset (after the header, before the first chunk). */
  asset?: AssetHeader | null;
  /** Data of the last asset. */
  asset_chunk?: AssetChunk | null;
}

/** A mesh asset's size. */
export interface MeshAssetSize {
  vertex_count: Uint64;
  index_count: Uint64;
}
/** A heightfield asset's size and spacings. */
export interface HeightfieldAssetSize {
  rows: Uint64;
  columns: Uint64;
  spacing_x: number;
  spacing_z: number;
  has_holes: boolean;
}
/** An asset's name, kind and size (an upload's first message, an export's asset). */
export interface AssetHeader {
  name: string;
  mesh?: MeshAssetSize | null;
  heightfield?: HeightfieldAssetSize | null;
  sha256: string;
}
/** Some of an asset's data. */
export interface AssetChunk {
  vertices: number[];
  indices: number[];
  heights: number[];
  holes: Buffer;
}
/** The last message of an upload: the counts and the CRC-32C of what the chunks carried. */
export interface AssetTrailer {
  vertex_count: Uint64;
  index_count: Uint64;
  sample_count: Uint64;
  hole_bytes: Uint64;
  chunk_count: Uint64;
  crc32c: number;
}
export type AssetKind = 'ASSET_KIND_UNSPECIFIED' | 'ASSET_KIND_MESH' | 'ASSET_KIND_HEIGHTFIELD';
/** An asset as the server holds it (ListAssets, an upload's answer). */
export interface AssetInfo {
  name: string;
  kind: AssetKind;
  mesh?: MeshAssetSize | null;
  heightfield?: HeightfieldAssetSize | null;
  triangle_count: Uint64;
  sha256: string;
  bounds: { min: Vec3; max: Vec3 } | null;
  source_bytes: Uint64;
  memory_bytes: Uint64;
  body_count: Uint64;
  max_height_error: number;
}
/** An upload's answer. */
export interface UploadAssetResponse {
  asset: AssetInfo | null;
  /** The scene held this name with this content already: nothing was written. */
  already_present: boolean;
}

export interface TlsOptions {
  rootCerts?: Buffer | string;
  rootCertsFile?: string;
  privateKey?: Buffer | string;
  privateKeyFile?: string;
  certChain?: Buffer | string;
  certChainFile?: string;
  serverNameOverride?: string;
}
export interface ClientOptions {
  token?: string;
  tls?: boolean | TlsOptions;
  deadlineMs?: number;
  channelOptions?: Record<string, string | number>;
}
export interface CallOptions {
  deadlineMs?: number;
}
export interface UpdateWriterOptions {
  clientId?: Uint64Input;
  firstSequence?: Uint64Input;
  maxPending?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  reconnectTimeoutMs?: number;
}
export interface QueryStreamOptions {
  deadlineMs?: number;
  /** The most batches written and not yet answered (default 1024). */
  maxPending?: number;
  /** The most bytes of batches written and not yet answered (default 64 MiB). */
  maxPendingBytes?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  reconnectTimeoutMs?: number;
}

export const SCENE_HEADER: 'x-collide-scene';
export const DEFAULT_DEADLINE_MS: number;
export const CODE_NAMES: Readonly<Record<number, string>>;
export const status: typeof grpcStatus;
/**
 * The shortest decimal that is the same float32 as `value` (a float32 read from a message):
 * 0.1 for the float32 nearest 0.1, whose exact value is 0.10000000149011612.
 */
export function shortestFloat32(value: number): number;
export function randomClientId(): Uint64;

export class CollideError extends Error {
  constructor(
    code: number,
    message: string,
    extra?: { metadata?: Metadata; sequence?: string; movedTo?: string; cause?: unknown },
  );
  readonly code: number;
  readonly codeName: string;
  readonly fieldPath: string;
  readonly metadata?: Metadata;
  readonly sequence?: Uint64;
  /** The server that writes the scene, when a stream answer named it (Error.moved_to). */
  readonly movedTo?: string;
}

export class Client {
  constructor(address: string, options?: ClientOptions);
  readonly address: string;
  readonly closed: boolean;
  close(): void;
  createScene(
    request: { scene: string; options?: SceneOptions },
    options?: CallOptions,
  ): Promise<SceneInfo>;
  deleteScene(request: { scene: string }, options?: CallOptions): Promise<void>;
  listScenes(options?: CallOptions): Promise<SceneInfo[]>;
  getScene(request: { scene: string }, options?: CallOptions): Promise<SceneInfo>;
  upsertBodies(
    request: { scene: string; bodies: BodyInput[] },
    options?: CallOptions,
  ): Promise<WriteResponse>;
  removeBodies(
    request: { scene: string; ids: Uint64Input[] },
    options?: CallOptions,
  ): Promise<WriteResponse>;
  getBodies(
    request: { scene: string; ids?: Uint64Input[] },
    options?: CallOptions,
  ): Promise<GetBodiesResponse>;
  raycast(request: QueryRequest & { ray: Raycast }, options?: CallOptions): Promise<QueryResponse>;
  sphereCast(
    request: QueryRequest & { cast: SphereCast },
    options?: CallOptions,
  ): Promise<QueryResponse>;
  overlap(
    request: QueryRequest & { overlap: Overlap; detail?: boolean },
    options?: CallOptions,
  ): Promise<QueryResponse>;
  openUpdateWriter(scene: string, options?: UpdateWriterOptions): UpdateWriter;
  openQueryStream(scene: string, options?: QueryStreamOptions): QueryStream;
  serverStats(options?: CallOptions): Promise<GetServerStatsResponse>;
  watch(request: WatchRequest): WatchStream;
  interest(request: InterestRequest, options?: InterestStreamOptions): InterestStream;
  /** A scene at one version, as its export messages (header, chunks, trailer). Admin. */
  exportScene(request: ExportSceneRequest): ExportStream;
  /** Creates a scene from export messages, all or nothing; resolves once durable. Admin. */
  importScene(
    messages: Iterable<SceneExportMessage> | AsyncIterable<SceneExportMessage>,
    options?: { scene?: string; replace?: boolean; deadlineMs?: number },
  ): Promise<SceneInfo>;
  /** Uploads a triangle mesh as an asset of a scene; resolves once durable. Writer. */
  uploadMesh(
    request: {
      scene: string;
      name: string;
      vertices: ArrayLike<number> | ArrayBuffer;
      indices: ArrayLike<number> | ArrayBuffer;
    },
    options?: { deadlineMs?: number; chunkValues?: number },
  ): Promise<UploadAssetResponse>;
  /** Uploads a heightfield as an asset of a scene; resolves once durable. Writer. */
  uploadHeightfield(
    request: {
      scene: string;
      name: string;
      rows: number;
      columns: number;
      heights: ArrayLike<number> | ArrayBuffer;
      spacingX?: number;
      spacingZ?: number;
      holes?: Uint8Array;
    },
    options?: { deadlineMs?: number; chunkValues?: number },
  ): Promise<UploadAssetResponse>;
  /** Every asset of a scene, sorted by name. Reader. */
  listAssets(request: { scene: string }, options?: CallOptions): Promise<AssetInfo[]>;
  /** Deletes an asset no body places. Writer. */
  deleteAsset(request: { scene: string; name: string }, options?: CallOptions): Promise<void>;
}

/** CRC-32C (Castagnoli) of `bytes`, extending `crc`. */
export function crc32c(bytes: Uint8Array, crc?: number): number;

export class UpdateWriter extends EventEmitter {
  readonly scene: string;
  readonly clientId: Uint64;
  /** The version of the latest acknowledgement ('0' before any). */
  readonly version: Uint64;
  readonly reconnects: number;
  /** Batches answered by a server that does not write the scene (Error.moved_to) and resent. */
  readonly redirected: number;
  /**
   * Batches answered UNAVAILABLE (the owner cannot write the scene just now: its lease is being
   * renewed, its replicated log is not answering, the server is stopping) and resent.
   */
  readonly unavailable: number;
  readonly pending: number;
  readonly nextSequence: Uint64;
  unacknowledged(): object[];
  write(batch: UpdateBatchInput): Promise<Uint64>;
  apply(batch: UpdateBatchInput): Promise<UpdateAck>;
  flush(): Promise<RejectedBatch[]>;
  close(): Promise<RejectedBatch[]>;
  cancel(): void;
  on(event: 'ack', listener: (ack: UpdateAck) => void): this;
  on(event: 'rejected', listener: (rejected: RejectedBatch) => void): this;
  on(event: 'redirected', listener: (info: { sequence: Uint64; movedTo: string }) => void): this;
  on(
    event: 'reconnecting',
    listener: (info: { attempt: number; delayMs: number; error: CollideError }) => void,
  ): this;
  on(event: 'failed', listener: (error: CollideError) => void): this;
}

export const DEFAULT_MAX_PENDING_BATCHES: number;
export const DEFAULT_MAX_PENDING_BYTES: number;

export class QueryStream extends EventEmitter implements AsyncIterable<QueryBatchResult> {
  readonly scene: string;
  /** Batches written and not yet answered (at most maxPending). */
  readonly pending: number;
  /** Bytes of those batches (at most maxPendingBytes, or one larger batch alone). */
  readonly pendingBytes: number;
  /** query() batches waiting for room, not yet written. */
  readonly waiting: number;
  /** How many times the stream was reopened after breaking. */
  readonly reconnects: number;
  /** Waits while the stream is full (backpressure). */
  query(batch: QueryBatch): Promise<QueryBatchResult>;
  /** Throws RESOURCE_EXHAUSTED while the stream is full: await ready() first. */
  send(batch: QueryBatch): void;
  ready(): Promise<void>;
  close(): Promise<void>;
  cancel(): void;
  [Symbol.asyncIterator](): AsyncIterator<QueryBatchResult>;
  on(
    event: 'reconnecting',
    listener: (info: { attempt: number; delayMs: number; error: CollideError }) => void,
  ): this;
}

/** One open Watch: the server's WatchResponse messages (snapshot, then updates). */
export class WatchStream implements AsyncIterable<WatchResponse> {
  readonly scene: string;
  cancel(): void;
  [Symbol.asyncIterator](): AsyncIterator<WatchResponse>;
}

/**
 * One interest stream: its messages (snapshot, then updates), `sets` kept from them, observers
 * changed on the open stream, reopened and resubscribed after a break.
 */
export class InterestStream implements AsyncIterable<InterestMessage> {
  readonly scene: string;
  /** Observer id -> its relevant body ids, as of the last message. */
  readonly sets: Map<string, Set<string>>;
  /** How many times the stream was reopened after breaking. */
  readonly reconnects: number;
  upsert(observers: Observer[]): void;
  remove(ids: Uint64Input[]): void;
  close(): void;
  cancel(): void;
  [Symbol.asyncIterator](): AsyncIterator<InterestMessage>;
  on(event: 'message', listener: (message: InterestMessage) => void): this;
  on(event: 'snapshot', listener: (snapshot: InterestSnapshot, message: InterestMessage) => void): this;
  on(event: 'update', listener: (update: InterestUpdate, message: InterestMessage) => void): this;
  on(
    event: 'reconnecting',
    listener: (info: { attempt: number; delayMs: number; error: CollideError }) => void,
  ): this;
  on(event: 'error', listener: (error: CollideError) => void): this;
  on(event: 'end', listener: () => void): this;
}

/** One ExportScene call: the export's messages (header, chunks, trailer), in order. */
export class ExportStream implements AsyncIterable<SceneExportMessage> {
  readonly scene: string;
  cancel(): void;
  [Symbol.asyncIterator](): AsyncIterator<SceneExportMessage>;
}
