/**
 * collide-client: the Node.js client of the collide collision-query server.
 *
 * @example
 * import { Client } from 'collide-client';
 * const client = new Client('127.0.0.1:50051');
 * const scene = await client.createScene({ scene: 'arena' });
 * @module collide-client
 */

export { Client, DEFAULT_DEADLINE_MS, SCENE_HEADER } from './client.js';
export { CollideError, CODE_NAMES } from './errors.js';
export {
  DEFAULT_MAX_PENDING_BATCHES,
  DEFAULT_MAX_PENDING_BYTES,
  QueryStream,
} from './query_stream.js';
export { crc32c } from './assets.js';
export { InterestStream } from './interest_stream.js';
export { ExportStream } from './scene_transfer.js';
export { UpdateWriter, randomClientId } from './update_writer.js';
export { WatchStream } from './watch_stream.js';
export { shortestFloat32, status } from './proto.js';
