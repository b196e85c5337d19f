/**
 * Moving scenes: ExportScene as an async iterable of its messages, and the requests of an
 * ImportScene call from such messages.
 * @module collide-client/scene_transfer
 */

import { CollideError, fromGrpcError } from './errors.js';
import { encodeRequest } from './proto.js';

/**
 * One ExportScene call. Iterating it (`for await (const message of exported)`) yields the
 * collide.v1 SceneExportMessage messages in order: `message.header` (the scene's options,
 * version, tick and deduplication marks), then `message.chunk` ones (bodies in increasing id
 * order), then `message.trailer` (counts and CRC-32C). The server sends a message once the
 * previous one was taken, so a slow reader holds the server to one chunk. A failed call throws a
 * CollideError (NOT_FOUND for an unknown scene; CANCELLED after cancel()).
 */
export class ExportStream {
  /**
   * Use Client.exportScene.
   * @param {import('./client.js').Client} client
   * @param {{scene: string, max_bodies_per_chunk?: number}} request
   */
  constructor(client, request) {
    /** The exported scene. */
    this.scene = request.scene;
    this.call_ = client.openServerStream('ExportScene', request);
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
    } finally {
      // Leaving the iteration early ends the call.
      this.call_.cancel();
    }
  }

  /** Ends the call (a pending iteration throws CollideError CANCELLED). */
  cancel() {
    this.call_.cancel();
  }
}

/**
 * The encoded ImportSceneRequests of `messages` (an iterable or async iterable of
 * SceneExportMessage objects): the first names the target scene and whether to replace it.
 * Each is checked against the proto as it is taken (a CollideError INVALID_ARGUMENT
 * `messages[3].chunk...` for one that does not fit).
 * @param {Iterable<object>|AsyncIterable<object>} messages
 * @param {string|undefined} scene
 * @param {boolean} replace
 * @returns {AsyncGenerator<Buffer>}
 */
export async function* importRequests(messages, scene, replace) {
  let index = 0;
  for await (const message of messages) {
    const request = { message };
    if (index === 0) {
      if (scene !== undefined) request.scene = scene;
      request.replace = replace;
    }
    let bytes;
    try {
      bytes = encodeRequest('ImportScene', request);
    } catch (error) {
      // The path names the message in the stream (`messages[3].chunk...`, not `message.chunk`).
      if (error instanceof CollideError && error.message.startsWith('message')) {
        throw new CollideError(
          error.code,
          `messages[${index}]${error.message.slice('message'.length)}`,
        );
      }
      throw error;
    }
    yield bytes;
    index++;
  }
}
