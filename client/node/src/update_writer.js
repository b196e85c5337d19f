/**
 * UpdateWriter: one scene's stream of update batches that survives a broken connection without
 * applying any batch twice.
 * @module collide-client/update_writer
 */

import crypto from 'node:crypto';

import grpc from '@grpc/grpc-js';

import { positiveInteger } from './backoff.js';
import { CollideError, fromAnswerError, fromGrpcError } from './errors.js';
import { checkMessage, decodeRequest, encodeRequest } from './proto.js';
import { ReconnectingStream, RETRYABLE_STREAM_ENDS } from './reconnecting_stream.js';
import { readStream } from './stream_end.js';

/**
 * @typedef {object} UpdateWriterOptions
 * @property {import('./client.js').Uint64|number|bigint} [clientId] The writer's id for
 *     deduplication (non-zero; default: random 64 bits). Batches whose (client id, sequence) the
 *     server has already applied in this scene are acknowledged again, never applied twice.
 * @property {import('./client.js').Uint64|number|bigint} [firstSequence] The first batch's
 *     client_sequence (default 1); must be above every sequence the server has seen for this
 *     client id in this scene.
 * @property {number} [maxPending] The most batches held unacknowledged (default 1024): write()
 *     waits for room beyond it.
 * @property {number} [initialBackoffMs] First delay before reopening a broken stream (default 50);
 *     doubles per failed attempt up to maxBackoffMs (default 2000), with jitter.
 * @property {number} [maxBackoffMs]
 * @property {number} [reconnectTimeoutMs] How long the writer keeps reconnecting without an
 *     acknowledgement before it fails (default 60000), also when every stream's batches are
 *     refused unapplied by servers that could not write the scene (the error then has the last
 *     such answer's code and message, and `movedTo` when it named one).
 */

/**
 * A batch the server rejected (nothing of it was applied).
 * @typedef {object} RejectedBatch
 * @property {string} sequence The batch's client_sequence.
 * @property {object} batch The UpdateBatch as sent.
 * @property {CollideError} error The server's code and message (`ops[2].remove: ...`).
 */

/**
 * The server's answer to one batch (collide.v1.UpdateAck).
 * @typedef {object} UpdateAck
 * @property {string} client_sequence
 * @property {string} version The scene version that holds the batch.
 * @property {boolean} durable
 * @property {boolean} duplicate The batch had been applied before (for example before a
 *     reconnect) and was not applied again.
 * @property {{code: number, message: string}|null} error Set when the batch was rejected.
 */

// Stream endings worth reopening the stream for: those of every reconnecting stream, and the
// call's deadline (the writer opens its next call with a new one).
const RETRYABLE = new Set([...RETRYABLE_STREAM_ENDS, grpc.status.DEADLINE_EXCEEDED]);

/** A random non-zero 64-bit client id, as a decimal string. */
export function randomClientId() {
  for (;;) {
    const id = crypto.randomBytes(8).readBigUInt64BE();
    if (id !== 0n) return id.toString();
  }
}

/**
 * Sends update batches to one scene over an UpdateStream (with the `x-collide-scene` header).
 *
 * Every batch is stamped with the writer's client id and the next client_sequence, and kept until
 * the server acknowledges it. When the stream breaks (server restart, network), the writer opens
 * a new one after a backoff and resends the unacknowledged batches in order with the same ids and
 * sequences; the server acknowledges those it had applied as duplicates, so each batch is applied
 * exactly once. Then new batches follow.
 *
 * A batch answered with Error.moved_to (a follower of a replicated scene, or a scene moving away,
 * names the server that writes it) or UNAVAILABLE (the owner cannot write the scene just now: its
 * lease is being renewed, its replicated log is not answering, the server is stopping) was not
 * applied and is not a rejection, and the server answers the stream's later batches the same
 * way: the writer drops the stream and sends them all again on a new one after its backoff (a
 * router in front of the servers sends it to the owner). A moved_to answer counts in
 * `redirected` and emits `redirected` ({sequence, movedTo}); an UNAVAILABLE one counts in
 * `unavailable`.
 *
 * Use `write()` to pipeline (it waits only for room among `maxPending` unacknowledged batches)
 * and `flush()` to wait for all acknowledgements; `apply()` sends one batch and waits for its
 * answer. Events: `ack` (UpdateAck), `rejected` (RejectedBatch, for write() batches),
 * `reconnecting` ({attempt, delayMs, error}), `failed` (CollideError).
 */
export class UpdateWriter extends ReconnectingStream {
  /**
   * Use Client.openUpdateWriter.
   * @param {import('./client.js').Client} client
   * @param {string} scene
   * @param {UpdateWriterOptions} [options]
   */
  constructor(client, scene, options = {}) {
    super(options);
    this.client_ = client;
    /** @type {string} The scene this writer updates. */
    this.scene = scene;
    const clientId =
      options.clientId === undefined
        ? randomClientId()
        : checkMessage('UpdateBatch', { client_id: options.clientId }).client_id;
    if (BigInt(clientId) === 0n) {
      throw new CollideError(grpc.status.INVALID_ARGUMENT, 'clientId: must be non-zero');
    }
    /** @type {string} The writer's client id (decimal). */
    this.clientId = String(clientId);
    this.nextSequence_ = BigInt(
      checkMessage('UpdateBatch', { client_sequence: options.firstSequence ?? 1 }).client_sequence,
    );
    this.maxPending_ = positiveInteger(options.maxPending ?? 1024, 'maxPending');

    // Unacknowledged batches in sequence order: {sequence, bytes (encoded), waiter} (waiter: the
    // {resolve, reject} of an apply(), null for a write()).
    this.entries_ = [];
    // close() was called: the stream is half-closed once every batch is sent.
    this.closing_ = false;
    this.rejected_ = [];
    this.roomWaiters_ = [];
    this.flushWaiters_ = [];
    this.closeWaiters_ = [];
    /** @type {string} The version of the latest acknowledgement ('0' before any). */
    this.version = '0';
    /**
     * @type {number} Batches answered by a server that does not write the scene
     *     (Error.moved_to), not applied, and sent again on a new stream.
     */
    this.redirected = 0;
    /**
     * @type {number} Batches answered UNAVAILABLE (the owner cannot write the scene just now: its
     *     lease is being renewed, its replicated log is not answering, the server is stopping) and
     *     resent.
     */
    this.unavailable = 0;
  }

  /** @returns {number} Batches written and not yet acknowledged. */
  get pending() {
    return this.entries_.length;
  }

  /** @returns {string} The client_sequence the next batch gets. */
  get nextSequence() {
    return this.nextSequence_.toString();
  }

  /** @returns {object[]} The unacknowledged batches (as sent), oldest first. */
  unacknowledged() {
    return this.entries_.map((entry) => decodeRequest('UpdateStream', entry.bytes));
  }

  /**
   * Queues a batch and sends it, waiting first while `maxPending` batches are unacknowledged.
   * Resolves with the batch's client_sequence once it is queued; its answer comes through
   * `flush()` (rejections), the `ack`/`rejected` events and `version`.
   * @param {{ops?: object[], moves?: {ids: any[], poses: number[]|Float32Array},
   *          tick?: import('./client.js').Uint64|number|bigint}} batch An UpdateBatch without
   *     scene, client_id and client_sequence (the writer sets them).
   * @returns {Promise<string>}
   */
  async write(batch) {
    await this.waitForRoom_();
    return this.enqueue_(batch, null).sequence;
  }

  /**
   * Sends one batch and resolves with its acknowledgement (possibly `duplicate`); rejects with a
   * CollideError carrying the server's code and field path when the batch was rejected, or the
   * writer's error when the writer failed.
   * @param {object} batch As for write().
   * @returns {Promise<UpdateAck>}
   */
  async apply(batch) {
    await this.waitForRoom_();
    return new Promise((resolve, reject) => this.enqueue_(batch, { resolve, reject }));
  }

  /**
   * Resolves once every batch written so far is acknowledged (across reconnects), with the
   * write() batches the server rejected since the previous flush; rejects if the writer failed.
   * @returns {Promise<RejectedBatch[]>}
   */
  async flush() {
    this.throwIfFailed_();
    if (this.entries_.length > 0) {
      await new Promise((resolve, reject) => this.flushWaiters_.push({ resolve, reject }));
    }
    return this.takeRejected_();
  }

  /**
   * Flushes, then closes the stream. Resolves as flush() does.
   * @returns {Promise<RejectedBatch[]>}
   */
  async close() {
    this.throwIfFailed_();
    if (this.state_ !== 'closed') {
      this.closing_ = true;
      const closed = new Promise((resolve, reject) => this.closeWaiters_.push({ resolve, reject }));
      if (this.call_) {
        this.call_.end();
      } else if (this.state_ !== 'backoff') {
        if (this.entries_.length === 0) this.finishClose_();
        else this.openStream_();
      }
      await closed;
    }
    return this.takeRejected_();
  }

  /**
   * Stops at once: cancels the stream; unacknowledged batches stay unacknowledged (see
   * `unacknowledged()`), and every waiting call rejects with CANCELLED.
   */
  cancel() {
    if (this.state_ === 'closed' || this.state_ === 'failed') return;
    this.fail_(new CollideError(grpc.status.CANCELLED, 'update writer: cancelled'));
  }

  throwIfFailed_() {
    if (this.state_ === 'failed') throw this.error_;
  }

  async waitForRoom_() {
    for (;;) {
      this.throwIfFailed_();
      if (this.closing_ || this.state_ === 'closed') {
        throw new CollideError(grpc.status.FAILED_PRECONDITION, 'update writer: closed');
      }
      if (this.entries_.length < this.maxPending_) return;
      await new Promise((resolve, reject) => this.roomWaiters_.push({ resolve, reject }));
    }
  }

  enqueue_(batch, waiter) {
    if (batch === null || typeof batch !== 'object') {
      throw new CollideError(grpc.status.INVALID_ARGUMENT, 'batch: must be an UpdateBatch object');
    }
    for (const field of ['client_id', 'client_sequence']) {
      if (batch[field] !== undefined) {
        throw new CollideError(grpc.status.INVALID_ARGUMENT, `${field}: set by the writer`);
      }
    }
    if (batch.scene !== undefined && batch.scene !== this.scene) {
      throw new CollideError(
        grpc.status.INVALID_ARGUMENT,
        `scene: "${batch.scene}" is not the writer's scene "${this.scene}"`,
      );
    }
    const sequence = this.nextSequence_.toString();
    const bytes = encodeRequest('UpdateStream', {
      ...batch,
      scene: this.scene,
      client_id: this.clientId,
      client_sequence: sequence,
    });
    this.nextSequence_ += 1n;
    const entry = { sequence, bytes, waiter };
    this.entries_.push(entry);
    if (this.call_) {
      this.call_.write(bytes);
    } else if (this.state_ === 'open') {
      this.openStream_();
    }
    // In backoff the batch goes out with the others when the stream reopens.
    return entry;
  }

  openStream_() {
    this.state_ = 'open';
    let call;
    try {
      call = this.client_.openStream('UpdateStream', this.scene);
    } catch (error) {
      this.fail_(fromGrpcError(error));
      return;
    }
    this.call_ = call;
    readStream(
      call,
      (ack) => this.onAck_(call, ack),
      (status) => this.onStreamEnd_(call, status),
    );
    for (const entry of this.entries_) call.write(entry.bytes);
    if (this.closing_) call.end();
  }

  onAck_(call, ack) {
    if (call !== this.call_) return;
    const entry = this.entries_[0];
    if (!entry || ack.client_sequence !== entry.sequence) {
      this.fail_(
        new CollideError(
          grpc.status.DATA_LOSS,
          `update stream: ack for sequence ${ack.client_sequence}, expected ` +
            `${entry ? entry.sequence : 'none'}`,
        ),
      );
      return;
    }
    if (ack.error && (ack.error.moved_to || ack.error.code === grpc.status.UNAVAILABLE)) {
      this.redirect_(call, fromAnswerError(ack.error, entry.sequence));
      return;
    }
    this.entries_.shift();
    this.backoff_.reset();
    if (ack.error) {
      const error = fromAnswerError(ack.error, entry.sequence);
      if (entry.waiter) {
        entry.waiter.reject(error);
      } else {
        const rejected = {
          sequence: entry.sequence,
          batch: decodeRequest('UpdateStream', entry.bytes),
          error,
        };
        this.rejected_.push(rejected);
        this.emit('rejected', rejected);
      }
    } else {
      if (BigInt(ack.version) > BigInt(this.version)) this.version = ack.version;
      if (entry.waiter) entry.waiter.resolve(ack);
    }
    this.emit('ack', ack);
    if (this.roomWaiters_.length > 0) this.roomWaiters_.shift().resolve();
    if (this.entries_.length === 0) {
      for (const waiter of this.flushWaiters_.splice(0)) waiter.resolve();
    }
  }

  onStreamEnd_(call, status) {
    if (call !== this.call_) return;
    this.call_ = null;
    if (this.entries_.length === 0 && (status.code === grpc.status.OK || this.closing_)) {
      if (this.closing_) this.finishClose_();
      return;
    }
    if (this.entries_.length === 0) {
      // Broken while idle: the next batch opens a new stream.
      return;
    }
    const error = new CollideError(
      status.code === grpc.status.OK ? grpc.status.UNAVAILABLE : status.code,
      status.code === grpc.status.OK
        ? 'update stream: ended with batches unacknowledged'
        : status.details,
      { metadata: status.metadata },
    );
    if (this.client_.closed) {
      this.fail_(this.client_.closedError());
      return;
    }
    if (!RETRYABLE.has(error.code)) {
      this.fail_(error);
      return;
    }
    this.scheduleReconnect_(
      error,
      (timeoutMs) => `update stream: no acknowledgement for ${timeoutMs} ms while reconnecting`,
    );
  }

  /**
   * The oldest batch was answered by a server that does not write the scene (Error.moved_to), or
   * by an owner that cannot write it just now (UNAVAILABLE): nothing of it was applied, nor of
   * the batches behind it on this call (the server refuses them all). The call is dropped with its
   * remaining answers, and the batches go again on a new one after the backoff, which an answer
   * that applies resets.
   * @param {object} call
   * @param {CollideError} error
   */
  redirect_(call, error) {
    this.call_ = null;
    call.cancel();
    if (error.movedTo) {
      this.redirected += 1;
      this.emit('redirected', { sequence: error.sequence, movedTo: error.movedTo });
    } else {
      this.unavailable += 1;
    }
    this.scheduleReconnect_(
      error,
      (timeoutMs) =>
        `update stream: gave up after ${timeoutMs} ms of batches refused unapplied by servers ` +
        `that could not write scene "${this.scene}"`,
      error.movedTo ? { movedTo: error.movedTo } : {},
    );
  }

  reopen_() {
    this.openStream_();
  }

  finishClose_() {
    this.state_ = 'closed';
    for (const waiter of this.closeWaiters_.splice(0)) waiter.resolve();
  }

  fail_(error) {
    this.stop_(error);
    for (const entry of this.entries_) entry.waiter?.reject(error);
    for (const entry of this.entries_) entry.waiter = null;
    for (const list of [this.roomWaiters_, this.flushWaiters_, this.closeWaiters_]) {
      for (const waiter of list.splice(0)) waiter.reject(error);
    }
    if (this.listenerCount('failed') > 0) this.emit('failed', error);
  }

  takeRejected_() {
    return this.rejected_.splice(0);
  }
}
