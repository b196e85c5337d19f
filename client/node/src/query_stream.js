/**
 * QueryStream: batches of queries to one scene over one QueryStream call.
 * @module collide-client/query_stream
 */

import grpc from '@grpc/grpc-js';

import { CollideError, fromAnswerError } from './errors.js';
import { encodeRequest } from './proto.js';
import { readStream } from './stream_end.js';

/**
 * @typedef {object} QueryStreamOptions
 * @property {number} [deadlineMs] A deadline for the whole stream (default: none).
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
 * The stream is opened on the first batch. A stream error rejects every unanswered query() and
 * ends the iteration with that error; the QueryStream cannot be used after it.
 */
export class QueryStream {
  /**
   * Use Client.openQueryStream.
   * @param {import('./client.js').Client} client
   * @param {string} scene
   * @param {QueryStreamOptions} [options]
   */
  constructor(client, scene, options = {}) {
    this.client_ = client;
    /** @type {string} The scene this stream queries. */
    this.scene = scene;
    this.deadlineMs_ = options.deadlineMs;
    this.call_ = null;
    // Batches sent and not answered: {waiter} for query(), {} for send().
    this.pending_ = [];
    // Answers to send() batches not yet iterated, and iterators waiting for one.
    this.results_ = [];
    this.readers_ = [];
    this.closing_ = false;
    this.ended_ = false;
    this.error_ = null;
    this.closeWaiters_ = [];
  }

  /** @returns {number} Batches sent and not yet answered. */
  get pending() {
    return this.pending_.length;
  }

  /**
   * Sends a batch and resolves with its answer; rejects with a CollideError when the whole batch
   * was rejected (unknown scene, too many queries) or the stream failed. A rejected query of the
   * batch is an `error` in its result.
   * @param {{queries: Query[], min_version?: import('./client.js').Uint64|number|bigint}} batch
   *     A QueryBatch without `scene` (the stream's).
   * @returns {Promise<QueryBatchResult>}
   */
  query(batch) {
    return new Promise((resolve, reject) => this.send_(batch, { resolve, reject }));
  }

  /**
   * Sends a batch whose answer the async iterator yields (in the order sent). Throws when the
   * stream is closed or failed, or the batch is malformed.
   * @param {{queries: Query[], min_version?: import('./client.js').Uint64|number|bigint}} batch
   */
  send(batch) {
    this.send_(batch, null);
  }

  send_(batch, waiter) {
    if (this.error_) throw this.error_;
    if (this.closing_) {
      throw new CollideError(grpc.status.FAILED_PRECONDITION, 'query stream: closed');
    }
    if (this.ended_) {
      throw new CollideError(grpc.status.UNAVAILABLE, 'query stream: ended by the server');
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
    if (!this.call_) this.open_();
    this.pending_.push({ waiter });
    this.call_.write(bytes);
  }

  open_() {
    const call = this.client_.openStream('QueryStream', this.scene, this.deadlineMs_);
    this.call_ = call;
    readStream(
      call,
      (result) => this.onResult_(result),
      (status) => this.onEnd_(status),
    );
  }

  onResult_(result) {
    const entry = this.pending_.shift();
    if (!entry) return;
    if (entry.waiter) {
      if (result.error) entry.waiter.reject(fromAnswerError(result.error));
      else entry.waiter.resolve(result);
    } else if (this.readers_.length > 0) {
      this.readers_.shift().resolve({ value: result, done: false });
    } else {
      this.results_.push(result);
    }
  }

  onEnd_(status) {
    this.ended_ = true;
    let error = null;
    if (status.code !== grpc.status.OK) {
      error = new CollideError(status.code, status.details, { metadata: status.metadata });
    } else if (this.pending_.length > 0) {
      error = new CollideError(
        grpc.status.UNAVAILABLE,
        'query stream: ended with batches unanswered',
      );
    }
    if (error) this.error_ = error;
    for (const entry of this.pending_.splice(0)) entry.waiter?.reject(error);
    for (const reader of this.readers_.splice(0)) {
      if (error) reader.reject(error);
      else reader.resolve({ value: undefined, done: true });
    }
    for (const waiter of this.closeWaiters_.splice(0)) {
      if (error) waiter.reject(error);
      else waiter.resolve();
    }
  }

  /**
   * Closes the sending side and resolves once every batch sent is answered (iterate the answers
   * of send() batches to consume them); rejects with the stream's error.
   * @returns {Promise<void>}
   */
  close() {
    this.closing_ = true;
    if (this.ended_ || !this.call_) {
      this.ended_ = true;
      return this.error_ ? Promise.reject(this.error_) : Promise.resolve();
    }
    const closed = new Promise((resolve, reject) => this.closeWaiters_.push({ resolve, reject }));
    this.call_.end();
    return closed;
  }

  /** Cancels the stream: unanswered batches fail with CANCELLED. */
  cancel() {
    this.closing_ = true;
    if (this.call_ && !this.ended_) this.call_.cancel();
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
        if (this.ended_) {
          return this.error_
            ? Promise.reject(this.error_)
            : Promise.resolve({ value: undefined, done: true });
        }
        return new Promise((resolve, reject) => this.readers_.push({ resolve, reject }));
      },
      return: () => Promise.resolve({ value: undefined, done: true }),
    };
  }
}
