/**
 * An interest stream: observers whose relevant bodies the server keeps, streamed as deltas
 * (collide.v1 Interest), with reconnection that resubscribes and receives full sets again.
 * @module collide-client/interest_stream
 */

import grpc from '@grpc/grpc-js';

import { CollideError, fromGrpcError } from './errors.js';
import { encodeRequest } from './proto.js';
import { ReconnectingStream, RETRYABLE_STREAM_ENDS } from './reconnecting_stream.js';
import { readStream } from './stream_end.js';

/**
 * The reconnect options of an interest stream (as the query stream's).
 * @typedef {object} InterestStreamOptions
 * @property {number} [initialBackoffMs] First reconnect delay ceiling (default 50).
 * @property {number} [maxBackoffMs] Largest delay ceiling (default 2,000).
 * @property {number} [reconnectTimeoutMs] How long the stream may stay broken before it fails
 *     with the last error (default 60,000).
 */

/**
 * One interest stream on one scene. Its messages are the collide.v1 InterestResponse messages
 * (first `snapshot`: every observer's set; then one `update` per applied batch that changed a
 * set, and one per upsert() / remove() taking effect), each with `reconnected` added: true on
 * the snapshot of a stream reopened after a break. Read them with `for await (const message of
 * stream)` or as events (`message`, `snapshot`, `update`, `reconnecting`, `error`, `end`).
 * `sets` holds every declared observer's set as the messages say (observer id -> Set of body
 * ids, ids as decimal strings).
 *
 * After a retryable break (the server restarted or went away) the stream reopens with backoff,
 * sends every declared observer again, and its next message is that stream's snapshot. It fails
 * (the iteration throws, `error` is emitted) with a CollideError: NOT_FOUND when the scene is
 * deleted, INVALID_ARGUMENT for a bad observer (`messages[1].observers[0].enter_radius: ...`),
 * RESOURCE_EXHAUSTED at a limit, CANCELLED after cancel(). close() ends it without an error:
 * the iteration ends.
 */
export class InterestStream extends ReconnectingStream {
  /**
   * Use Client.interest.
   * @param {import('./client.js').Client} client
   * @param {{scene: string, observers?: object[], max_queued_events?: number}} request
   * @param {InterestStreamOptions} [options]
   */
  constructor(client, request, options = {}) {
    super(options);
    if (typeof request?.scene !== 'string') {
      throw new CollideError(grpc.status.INVALID_ARGUMENT, 'scene: must be a string');
    }
    /** The scene. */
    this.scene = request.scene;
    this.client_ = client;
    this.maxQueuedEvents_ = request.max_queued_events ?? 0;
    // The declared observers by id (decimal string), as sent.
    this.observers_ = new Map();
    for (const observer of request.observers ?? []) {
      this.observers_.set(String(observer.id), observer);
    }
    /** @type {Map<string, Set<string>>} Every declared observer's set as of the last message. */
    this.sets = new Map();
    // Messages not yet read by the iteration (kept once an iteration started), and its waiters.
    this.iterating_ = false;
    this.messages_ = [];
    this.readers_ = [];
    this.reconnected_ = false;
    this.closing_ = false;
    this.first_ = this.firstRequest_();  // checks the observers before anything is opened
    this.open_();
  }

  firstRequest_() {
    return encodeRequest('Interest', {
      scene: this.scene,
      observers: [...this.observers_.values()],
      max_queued_events: this.maxQueuedEvents_,
    });
  }

  open_() {
    let call;
    try {
      call = this.client_.openStream('Interest', this.scene);
    } catch (error) {
      this.fail_(fromGrpcError(error));
      return;
    }
    this.state_ = 'open';
    this.call_ = call;
    readStream(
      call,
      (message) => this.onMessage_(call, message),
      (status) => this.onEnd_(call, status),
    );
    call.write(this.first_);
  }

  reopen_() {
    this.reconnected_ = true;
    this.first_ = this.firstRequest_();
    this.open_();
  }

  /**
   * Adds or changes observers (one message; kept for a reopened stream).
   * @param {object[]} observers collide.v1 Observer messages.
   * @throws {CollideError} INVALID_ARGUMENT for an observer that does not fit the proto; the
   *     stream's error once it failed.
   */
  upsert(observers) {
    this.send_({ observers }, () => {
      for (const observer of observers) this.observers_.set(String(observer.id), observer);
    });
  }

  /**
   * Removes observers (one message); their sets are dropped at once.
   * @param {Array<number|string|bigint>} ids
   */
  remove(ids) {
    this.send_({ removes: ids }, () => {
      for (const id of ids) {
        this.observers_.delete(String(id));
        this.sets.delete(String(id));
      }
    });
  }

  send_(request, record) {
    if (this.state_ === 'failed') throw this.error_;
    if (this.closing_ || this.state_ === 'closed') {
      throw new CollideError(grpc.status.FAILED_PRECONDITION, 'interest: the stream is closed');
    }
    const bytes = encodeRequest('Interest', request);
    record();
    // Without a call (reconnecting) the change goes out with the reopened stream's first message.
    if (this.call_) this.call_.write(bytes);
  }

  onMessage_(call, message) {
    if (call !== this.call_) return;
    this.backoff_.reset();
    // One of the oneof's two: the other reads as null.
    message.snapshot ??= null;
    message.update ??= null;
    message.reconnected = this.reconnected_ && message.snapshot !== null;
    if (message.snapshot !== null) this.reconnected_ = false;
    this.take_(message);
    this.emit('message', message);
    if (message.snapshot !== null) this.emit('snapshot', message.snapshot, message);
    else this.emit('update', message.update, message);
    if (this.readers_.length > 0) {
      this.readers_.shift().resolve({ value: message, done: false });
    } else if (this.iterating_ || !this.hasMessageListeners_()) {
      this.messages_.push(message);
    }
  }

  hasMessageListeners_() {
    return ['message', 'snapshot', 'update'].some((event) => this.listenerCount(event) > 0);
  }

  take_(message) {
    if (message.snapshot !== null) {
      this.sets = new Map();
      for (const set of message.snapshot.sets) {
        if (this.observers_.has(set.observer_id)) {
          this.sets.set(set.observer_id, new Set(set.body_ids));
        }
      }
      return;
    }
    for (const delta of message.update.deltas) {
      if (!this.observers_.has(delta.observer_id)) continue;  // removed meanwhile
      const current = delta.full ? new Set() : (this.sets.get(delta.observer_id) ?? new Set());
      for (const id of delta.left) current.delete(id);
      for (const id of delta.entered) current.add(id);
      this.sets.set(delta.observer_id, current);
    }
  }

  onEnd_(call, status) {
    if (call !== this.call_) return;
    this.call_ = null;
    if (this.state_ === 'failed' || this.state_ === 'closed') return;
    const error =
      status.code === grpc.status.OK
        ? new CollideError(grpc.status.UNAVAILABLE, 'interest: the stream ended')
        : new CollideError(status.code, status.details, { metadata: status.metadata });
    if (this.client_.closed) {
      this.fail_(this.client_.closedError());
    } else if (!RETRYABLE_STREAM_ENDS.has(error.code)) {
      this.fail_(error);
    } else {
      this.scheduleReconnect_(
        error,
        (timeoutMs) => `interest: no stream for ${timeoutMs} ms while reconnecting`,
        { metadata: error.metadata },
      );
    }
  }

  fail_(error) {
    if (this.state_ === 'failed') return;
    this.stop_(error);
    for (const reader of this.readers_.splice(0)) reader.reject(error);
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }

  /**
   * Ends the stream without an error: the call is cancelled, the iteration ends (after the
   * messages already received) and `end` is emitted. (A half-close would not end it: the server
   * keeps sending the sets to a client that changes nothing more.)
   */
  close() {
    if (this.state_ === 'failed' || this.state_ === 'closed') return;
    this.closing_ = true;
    this.stop_(null);
    this.state_ = 'closed';
    for (const reader of this.readers_.splice(0)) reader.resolve({ value: undefined, done: true });
    this.emit('end');
  }

  /** Ends the stream (a pending iteration throws CollideError CANCELLED). */
  cancel() {
    if (this.state_ === 'failed' || this.state_ === 'closed') return;
    this.fail_(new CollideError(grpc.status.CANCELLED, 'interest: cancelled'));
  }

  /**
   * The messages, in order (those that arrived while nothing listened to `message`, `snapshot`
   * or `update` are kept for the iteration).
   * @returns {AsyncIterator<object>}
   */
  [Symbol.asyncIterator]() {
    this.iterating_ = true;
    return {
      next: () => {
        if (this.messages_.length > 0) {
          return Promise.resolve({ value: this.messages_.shift(), done: false });
        }
        if (this.state_ === 'failed') return Promise.reject(this.error_);
        if (this.state_ === 'closed') return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => this.readers_.push({ resolve, reject }));
      },
      return: () => {
        this.cancel();
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }
}
