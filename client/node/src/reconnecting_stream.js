// The part of the update writer and the query stream that reopens a broken call: its state, the
// backoff timer, and giving up.

import { EventEmitter } from 'node:events';

import grpc from '@grpc/grpc-js';

import { Backoff } from './backoff.js';
import { CollideError } from './errors.js';

/**
 * Stream endings after which a new call may succeed: the server went away, restarted or closed
 * the stream. Anything else (auth, a bad header or message, a limit, an unknown scene, the call's
 * own deadline) is final; the update writer also reopens after a deadline.
 */
export const RETRYABLE_STREAM_ENDS = new Set([
  grpc.status.UNAVAILABLE,
  grpc.status.CANCELLED,
  grpc.status.UNKNOWN,
  grpc.status.INTERNAL,
  grpc.status.ABORTED,
]);

/**
 * A stream that reopens its call after a retryable break, with the reconnect schedule of
 * `Backoff`. Subclasses open a call in `reopen_()` and end themselves in `fail_(error)`, which
 * starts with `stop_(error)`.
 */
export class ReconnectingStream extends EventEmitter {
  /**
   * @param {import('./query_stream.js').QueryStreamOptions} options The backoff options.
   */
  constructor(options) {
    super();
    this.backoff_ = new Backoff(options);
    // The current call, or null (none yet, broken and waiting for the backoff, or idle).
    this.call_ = null;
    this.timer_ = null;
    // 'open' (a call, or none needed yet), 'backoff' (waiting to reopen), 'closed', 'failed'.
    this.state_ = 'open';
    this.error_ = null;
    /** @type {number} How many times the stream was reopened after breaking. */
    this.reconnects = 0;
  }

  /**
   * After a retryable break: reopens the call after the next delay (emitting `reconnecting`),
   * or fails with `giveUp` (the message, and what the error carries besides its cause) once the
   * stream has been broken for the reconnect timeout.
   * @param {CollideError} error The break.
   * @param {(timeoutMs: number) => string} giveUp The message of the final error.
   * @param {object} [details] More of the final error's options (`metadata`).
   */
  scheduleReconnect_(error, giveUp, details = {}) {
    const delayMs = this.backoff_.next();
    if (delayMs === null) {
      const message = `${giveUp(this.backoff_.timeoutMs)} (last error: ${error.message})`;
      this.fail_(new CollideError(error.code, message, { cause: error, ...details }));
      return;
    }
    this.state_ = 'backoff';
    this.emit('reconnecting', { attempt: this.backoff_.attempt, delayMs, error });
    this.timer_ = setTimeout(() => {
      this.timer_ = null;
      if (this.state_ !== 'backoff') return;
      this.reconnects += 1;
      this.reopen_();
    }, delayMs);
  }

  /**
   * Marks the stream failed with `error`, stops the backoff timer and cancels the call.
   * @param {CollideError} error
   */
  stop_(error) {
    this.state_ = 'failed';
    this.error_ = error;
    if (this.timer_) {
      clearTimeout(this.timer_);
      this.timer_ = null;
    }
    const call = this.call_;
    this.call_ = null;
    if (call) call.cancel();
  }
}
