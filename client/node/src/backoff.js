// The reconnect schedule shared by the update writer and the query stream, and the checks of
// their options.

import grpc from '@grpc/grpc-js';

import { CollideError } from './errors.js';

/**
 * Checks an option that must be a finite number >= 0, naming it in the error.
 * @param {unknown} value
 * @param {string} name
 * @returns {number}
 */
export function nonNegativeNumber(value, name) {
  if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value)) {
    throw new CollideError(grpc.status.INVALID_ARGUMENT, `${name}: must be a finite number >= 0`);
  }
  return value;
}

/**
 * Checks an option that must be an integer >= 1, naming it in the error.
 * @param {unknown} value
 * @param {string} name
 * @returns {number}
 */
export function positiveInteger(value, name) {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new CollideError(grpc.status.INVALID_ARGUMENT, `${name}: must be a positive integer`);
  }
  return value;
}

/**
 * The reconnect schedule of a stream that resends what its broken call left unanswered:
 * exponential backoff with jitter (each delay drawn from [ceiling / 2, ceiling], the ceiling
 * doubling from `initialBackoffMs` up to `maxBackoffMs`), given up once the stream has been
 * broken for `reconnectTimeoutMs` without an answer. An answer resets it.
 */
export class Backoff {
  /**
   * @param {import('./query_stream.js').QueryStreamOptions} options The backoff options.
   */
  constructor(options) {
    this.initialMs_ = nonNegativeNumber(options.initialBackoffMs ?? 50, 'initialBackoffMs');
    this.maxMs_ = nonNegativeNumber(options.maxBackoffMs ?? 2000, 'maxBackoffMs');
    /** @type {number} How long a stream may stay broken before giving up, in ms. */
    this.timeoutMs = nonNegativeNumber(
      options.reconnectTimeoutMs ?? 60_000,
      'reconnectTimeoutMs',
    );
    /** @type {number} Reconnect attempts since the last answer. */
    this.attempt = 0;
    this.brokenSince_ = 0;
  }

  /** An answer arrived: the next break starts a new schedule. */
  reset() {
    this.attempt = 0;
    this.brokenSince_ = 0;
  }

  /**
   * The delay before the next attempt, in ms, or null when the stream has been broken for
   * longer than the timeout (give up).
   * @returns {number | null}
   */
  next() {
    const now = Date.now();
    if (this.brokenSince_ === 0) this.brokenSince_ = now;
    if (now - this.brokenSince_ > this.timeoutMs) return null;
    const ceiling = Math.min(this.maxMs_, this.initialMs_ * 2 ** this.attempt);
    this.attempt += 1;
    return Math.round(ceiling * (0.5 + Math.random() / 2));
  }
}
