/**
 * QueryStream: batches of queries to one scene over one QueryStream call, bounded and resent
 * across a broken connection.
 * @module collide-client/query_stream
 */

import grpc from '@grpc/grpc-js';

import { nonNegativeNumber, positiveInteger } from './backoff.js';
import { CollideError, fromAnswerError, fromGrpcError } from './errors.js';
import { encodeRequest } from './proto.js';
import { ReconnectingStream, RETRYABLE_STREAM_ENDS } from './reconnecting_stream.js';
import { readStream } from './stream_end.js';

/** The most batches a QueryStream holds unanswered when given no `maxPending`. */
export const DEFAULT_MAX_PENDING_BATCHES = 1024;
/** The most bytes of batches a QueryStream holds unanswered when given no `maxPendingBytes`. */
export const DEFAULT_MAX_PENDING_BYTES = 64 * 1024 * 1024;

/**
 * @typedef {object} QueryStreamOptions
 * @property {number} [deadlineMs] A deadline for the whole stream, reconnects included (default:
 *     none).
 * @property {number} [maxPending] The most batches written and not yet answered (default 1024).
 * @property {number} [maxPendingBytes] The most bytes of encoded batches written and not yet
 *     answered (default 64 MiB); a single larger batch is written when nothing else is pending.
 * @property {number} [initialBackoffMs] First delay before reopening a broken stream (default 50);
 *     doubles per failed attempt up to maxBackoffMs (default 2000), with jitter.
 * @property {number} [maxBackoffMs]
 * @property {number} [reconnectTimeoutMs] How long the stream keeps reconnecting without an
 *     answer before it fails (default 60000).
 */

/**
 * One query of a batch (collide.v1.Query): one of `raycast`, `sphere_cast`, `overlap`, `point`,
 * `aabb`, with `request_id`, `filter`, `mode`, `max_hits`, `detail`, and for a past tick
 * `at_tick` and `tick_fraction`.
 * @typedef {object} Query
 */

/**
 * The answer to one batch (collide.v1.QueryBatchResult).
 * @typedef {object} QueryBatchResult
 * @property {string} version The scene version every result was computed against.
 * @property {Array<{request_id: string, hits: import('./client.js').Hit[], truncated: boolean,
 *                   error: {code: number, message: string}|null}>} results One per query, in
 *     order; a rejected query has `error` (`queries[3].raycast.direction: ...`).
 * @property {{code: number, message: string}|null} error Set when the whole batch was rejected.
 */

/**
 * A stream of query batches to one scene (with the `x-collide-scene` header). Each batch is
 * answered in order against one scene version. Either await each batch's answer with `query()`,
 * or `send()` batches and read their answers with `for await (const result of stream)`; the
 * two can be mixed (answers to query() batches are not iterated).
 *
 * Bound: at most `maxPending` batches and `maxPendingBytes` bytes are written to the call and
 * not yet answered (`pending`, `pendingBytes`). Beyond it, `query()` waits (backpressure): its
 * batch is checked and encoded at once but written only when answers make room, in call order
 * (`waiting` counts them). `send()` never waits: when the stream is full (or query() batches
 * wait) it throws RESOURCE_EXHAUSTED; `await ready()` first.
 *
 * Reconnects: when the stream breaks (server restart, network), the QueryStream opens a new one
 * after a backoff (like UpdateWriter) and writes the unanswered batches again, in order; queries
 * are idempotent, so each batch's answer is delivered once (its query() resolves once, or the
 * iterator yields it once), from whichever stream answered it. Events: `reconnecting`
 * ({attempt, delayMs, error}). A final error (auth, RESOURCE_EXHAUSTED, the stream's deadline,
 * no answer for `reconnectTimeoutMs` while reconnecting, cancel(), the client closed) rejects
 * every unanswered and waiting query(), ends the iteration with that error, and the QueryStream
 * cannot be used after it.
 */
export class QueryStream extends ReconnectingStream {
  /**
   * Use Client.openQueryStream.
   * @param {import('./client.js').Client} client
   * @param {string} scene
   * @param {QueryStreamOptions} [options]
   */
  constructor(client, scene, options = {}) {
    super(options);
    this.client_ = client;
    /** @type {string} The scene this stream queries. */
    this.scene = scene;
    this.deadlineMs_ =
      options.deadlineMs === undefined
        ? undefined
        : nonNegativeNumber(options.deadlineMs, 'deadlineMs');
    this.deadlineAt_ = 0;
    this.maxPending_ = positiveInteger(
      options.maxPending ?? DEFAULT_MAX_PENDING_BATCHES,
      'maxPending',
    );
    this.maxPendingBytes_ = positiveInteger(
      options.maxPendingBytes ?? DEFAULT_MAX_PENDING_BYTES,
      'maxPendingBytes',
    );

    // Batches written (to this call or a broken one) and not answered, in order:
    // {bytes, waiter} (waiter: the {resolve, reject} of a query(), null for a send()).
    this.entries_ = [];
    this.pendingBytes_ = 0;
    // query() batches waiting for room, in call order (same shape).
    this.blocked_ = [];
    // ready() callers.
    this.readyWaiters_ = [];
    this.callEnded_ = false;
    this.closing_ = false;
    // Answers to send() batches not yet iterated, and iterators waiting for one.
    this.results_ = [];
    this.readers_ = [];
    this.closeWaiters_ = [];
  }

  /** @returns {number} Batches written and not yet answered (at most maxPending). */
  get pending() {
    return this.entries_.length;
  }

  /** @returns {number} Bytes of the batches written and not yet answered. */
  get pendingBytes() {
    return this.pendingBytes_;
  }

  /** @returns {number} query() batches waiting for room (not yet written). */
  get waiting() {
    return this.blocked_.length;
  }

  /**
   * Sends a batch and resolves with its answer (waiting first while the stream is full); rejects
   * with a CollideError when the whole batch was rejected (unknown scene, too many queries) or
   * the stream failed. A rejected query of the batch is an `error` in its result.
   * @param {{queries: Query[], min_version?: import('./client.js').Uint64|number|bigint}} batch
   *     A QueryBatch without `scene` (the stream's).
   * @returns {Promise<QueryBatchResult>}
   */
  query(batch) {
    return new Promise((resolve, reject) => {
      const entry = { bytes: this.encode_(batch), waiter: { resolve, reject } };
      if (this.blocked_.length === 0 && this.hasRoom_(entry.bytes.length)) this.write_(entry);
      else this.blocked_.push(entry);
    });
  }

  /**
   * Sends a batch whose answer the async iterator yields (in the order sent). Throws when the
   * stream is closed or failed, the batch is malformed, or the stream is full
   * (RESOURCE_EXHAUSTED: await ready() first).
   * @param {{queries: Query[], min_version?: import('./client.js').Uint64|number|bigint}} batch
   */
  send(batch) {
    const bytes = this.encode_(batch);
    if (this.blocked_.length > 0 || !this.hasRoom_(bytes.length)) {
      throw new CollideError(
        grpc.status.RESOURCE_EXHAUSTED,
        `query stream: full (${this.entries_.length} batches, ${this.pendingBytes_} bytes ` +
          `unanswered, ${this.blocked_.length} waiting; maxPending ${this.maxPending_}, ` +
          `maxPendingBytes ${this.maxPendingBytes_}): await ready() before send()`,
      );
    }
    this.write_({ bytes, waiter: null });
  }

  /**
   * Resolves once the stream has room for another batch (fewer than maxPending batches and
   * maxPendingBytes bytes unanswered, no query() waiting); rejects with the stream's error.
   * @returns {Promise<void>}
   */
  ready() {
    if (this.state_ === 'failed') return Promise.reject(this.error_);
    if (this.hasSomeRoom_()) return Promise.resolve();
    return new Promise((resolve, reject) => this.readyWaiters_.push({ resolve, reject }));
  }

  encode_(batch) {
    if (this.state_ === 'failed') throw this.error_;
    if (this.closing_ || this.state_ === 'closed') {
      throw new CollideError(grpc.status.FAILED_PRECONDITION, 'query stream: closed');
    }
    if (batch === null || typeof batch !== 'object') {
      throw new CollideError(grpc.status.INVALID_ARGUMENT, 'batch: must be a QueryBatch object');
    }
    if (batch.scene !== undefined && batch.scene !== this.scene) {
      throw new CollideError(
        grpc.status.INVALID_ARGUMENT,
        `scene: "${batch.scene}" is not the stream's scene "${this.scene}"`,
      );
    }
    const bytes = encodeRequest('QueryStream', { ...batch, scene: this.scene });
    if (this.client_.closed) throw this.client_.closedError();
    return bytes;
  }

  hasRoom_(size) {
    if (this.entries_.length >= this.maxPending_) return false;
    return this.entries_.length === 0 || this.pendingBytes_ + size <= this.maxPendingBytes_;
  }

  hasSomeRoom_() {
    return (
      this.blocked_.length === 0 &&
      this.entries_.length < this.maxPending_ &&
      (this.entries_.length === 0 || this.pendingBytes_ < this.maxPendingBytes_)
    );
  }

  write_(entry) {
    this.entries_.push(entry);
    this.pendingBytes_ += entry.bytes.length;
    if (this.call_) {
      this.call_.write(entry.bytes);
    } else if (this.state_ === 'open') {
      this.open_();
    }
    // In backoff the batch goes out with the others when the stream reopens.
  }

  open_() {
    this.state_ = 'open';
    let deadlineMs;
    if (this.deadlineMs_ !== undefined) {
      if (this.deadlineAt_ === 0) this.deadlineAt_ = Date.now() + this.deadlineMs_;
      deadlineMs = this.deadlineAt_ - Date.now();
      if (deadlineMs <= 0) {
        this.fail_(
          new CollideError(grpc.status.DEADLINE_EXCEEDED, 'query stream: deadline exceeded'),
        );
        return;
      }
    }
    let call;
    try {
      call = this.client_.openStream('QueryStream', this.scene, deadlineMs);
    } catch (error) {
      this.fail_(fromGrpcError(error));
      return;
    }
    this.call_ = call;
    this.callEnded_ = false;
    readStream(
      call,
      (result) => this.onResult_(call, result),
      (status) => this.onEnd_(call, status),
    );
    for (const entry of this.entries_) call.write(entry.bytes);
    this.endIfClosing_();
  }

  // Half-closes the call once close() was called and every batch is written.
  endIfClosing_() {
    if (this.closing_ && this.call_ && !this.callEnded_ && this.blocked_.length === 0) {
      this.callEnded_ = true;
      this.call_.end();
    }
  }

  onResult_(call, result) {
    if (call !== this.call_) return;
    const entry = this.entries_.shift();
    if (!entry) {
      this.fail_(new CollideError(grpc.status.DATA_LOSS, 'query stream: an answer to no batch'));
      return;
    }
    this.pendingBytes_ -= entry.bytes.length;
    this.backoff_.reset();
    if (entry.waiter) {
      if (result.error) entry.waiter.reject(fromAnswerError(result.error));
      else entry.waiter.resolve(result);
    } else if (this.readers_.length > 0) {
      this.readers_.shift().resolve({ value: result, done: false });
    } else {
      this.results_.push(result);
    }
    while (this.blocked_.length > 0 && this.hasRoom_(this.blocked_[0].bytes.length)) {
      this.write_(this.blocked_.shift());
    }
    if (this.hasSomeRoom_()) {
      for (const waiter of this.readyWaiters_.splice(0)) waiter.resolve();
    }
    this.endIfClosing_();
  }

  onEnd_(call, status) {
    if (call !== this.call_) return;
    this.call_ = null;
    const unanswered = this.entries_.length > 0 || this.blocked_.length > 0;
    if (!unanswered && (status.code === grpc.status.OK || this.closing_)) {
      if (this.closing_) this.finishClose_();
      // Else ended while idle: the next batch opens a new call.
      return;
    }
    const error =
      status.code === grpc.status.OK
        ? new CollideError(grpc.status.UNAVAILABLE, 'query stream: ended with batches unanswered')
        : new CollideError(status.code, status.details, { metadata: status.metadata });
    if (this.client_.closed) {
      this.fail_(this.client_.closedError());
    } else if (!RETRYABLE_STREAM_ENDS.has(error.code)) {
      this.fail_(error);
    } else if (unanswered) {
      this.scheduleReconnect_(
        error,
        (timeoutMs) => `query stream: no answer for ${timeoutMs} ms while reconnecting`,
        { metadata: error.metadata },
      );
    }
    // Broken while idle (retryable): the next batch opens a new call.
  }

  reopen_() {
    this.open_();
  }

  finishClose_() {
    this.state_ = 'closed';
    for (const reader of this.readers_.splice(0)) reader.resolve({ value: undefined, done: true });
    for (const waiter of this.closeWaiters_.splice(0)) waiter.resolve();
  }

  fail_(error) {
    if (this.state_ === 'failed') return;
    this.stop_(error);
    for (const entry of [...this.entries_.splice(0), ...this.blocked_.splice(0)]) {
      entry.waiter?.reject(error);
    }
    this.pendingBytes_ = 0;
    for (const list of [this.readyWaiters_, this.readers_, this.closeWaiters_]) {
      for (const waiter of list.splice(0)) waiter.reject(error);
    }
  }

  /**
   * Closes the sending side and resolves once every batch sent (or waiting in query()) is
   * answered, across reconnects (iterate the answers of send() batches to consume them); rejects
   * with the stream's error.
   * @returns {Promise<void>}
   */
  close() {
    if (this.state_ === 'failed') return Promise.reject(this.error_);
    if (this.state_ === 'closed') return Promise.resolve();
    this.closing_ = true;
    const closed = new Promise((resolve, reject) => this.closeWaiters_.push({ resolve, reject }));
    if (this.call_) {
      this.endIfClosing_();
    } else if (this.state_ !== 'backoff') {
      if (this.entries_.length === 0 && this.blocked_.length === 0) this.finishClose_();
      else this.open_();
    }
    return closed;
  }

  /** Cancels the stream: unanswered and waiting batches fail with CANCELLED. */
  cancel() {
    if (this.state_ === 'closed' || this.state_ === 'failed') return;
    this.closing_ = true;
    this.fail_(new CollideError(grpc.status.CANCELLED, 'query stream: cancelled'));
  }

  /**
   * Yields the answers to send() batches in order; ends after close() once all are answered,
   * throws the stream's error.
   * @returns {AsyncIterator<QueryBatchResult>}
   */
  [Symbol.asyncIterator]() {
    return {
      next: () => {
        if (this.results_.length > 0) {
          return Promise.resolve({ value: this.results_.shift(), done: false });
        }
        if (this.state_ === 'failed') return Promise.reject(this.error_);
        if (this.state_ === 'closed') return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => this.readers_.push({ resolve, reject }));
      },
      return: () => Promise.resolve({ value: undefined, done: true }),
    };
  }
}
