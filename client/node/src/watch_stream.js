/**
 * A Watch: standing queries (fences with swept enter/exit events, contact watches) on one scene,
 * as an async iterable of the server's messages.
 * @module collide-client/watch_stream
 */

import { fromGrpcError } from './errors.js';

/**
 * One open Watch stream. Iterating it (`for await (const message of watch)`) yields the
 * collide.v1 WatchResponse messages: first `message.snapshot` (what every fence holds, every
 * overlapping pair), then one `message.update` per applied batch that changed something the
 * watch sees (version, tick, events in order), and a snapshot with `resync` set whenever the
 * reader fell so far behind that the server replaced the updates it had queued. The iteration
 * ends by throwing a CollideError: NOT_FOUND when the scene is deleted, CANCELLED after
 * cancel().
 */
export class WatchStream {
  /**
   * Use Client.watch.
   * @param {import('./client.js').Client} client
   * @param {object} request A WatchRequest: {scene, fences, contacts, max_queued_events}.
   */
  constructor(client, request) {
    /** The watched scene. */
    this.scene = request.scene;
    this.call_ = client.openServerStream('Watch', request);
  }

  /**
   * The messages, in order.
   * @returns {AsyncIterator<object>}
   */
  async *[Symbol.asyncIterator]() {
    try {
      for await (const message of this.call_) yield message;
    } catch (error) {
      throw fromGrpcError(error);
    }
  }

  /** Ends the stream (a pending iteration throws CollideError CANCELLED). */
  cancel() {
    this.call_.cancel();
  }
}
