/**
 * Level geometry uploads (UploadAsset) from arrays: the header, the chunks and the trailer with
 * its counts and CRC-32C (collide.proto, "Level geometry"), as the encoded requests of one call.
 * @module collide-client/assets
 */

import { CollideError } from './errors.js';
import { encodeRequest, status } from './proto.js';

/** Values per list per chunk: 4 bytes each, about 1 MiB a chunk. */
export const DEFAULT_CHUNK_VALUES = 1 << 18;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let crc = n;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
    table[n] = crc >>> 0;
  }
  return table;
})();

/**
 * CRC-32C (Castagnoli) of `bytes`, extending `crc`.
 * @param {Uint8Array} bytes
 * @param {number} [crc]
 * @returns {number}
 */
export function crc32c(bytes, crc = 0) {
  let c = (crc ^ 0xffffffff) >>> 0;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function invalid(message) {
  return new CollideError(status.INVALID_ARGUMENT, message);
}

/**
 * `data` (a Float32Array, any typed array, an ArrayBuffer of float32 values or an array of
 * numbers) as a Float32Array.
 */
function floats(data, what) {
  if (data instanceof Float32Array) return data;
  if (data instanceof ArrayBuffer) {
    if (data.byteLength % 4 !== 0) throw invalid(`${what}: ${data.byteLength} bytes, not float32s`);
    return new Float32Array(data.slice(0));
  }
  if (ArrayBuffer.isView(data) || Array.isArray(data)) {
    const out = Float32Array.from(/** @type {ArrayLike<number>} */ (data));
    return out;
  }
  throw invalid(`${what}: must be a Float32Array, a typed array or an array of numbers`);
}

/** `data` as a Uint32Array, every value an integer in [0, 2^32 - 1]. */
function uint32s(data, what) {
  if (data instanceof Uint32Array) return data;
  if (data instanceof ArrayBuffer) {
    if (data.byteLength % 4 !== 0) throw invalid(`${what}: ${data.byteLength} bytes, not uint32s`);
    return new Uint32Array(data.slice(0));
  }
  if (!ArrayBuffer.isView(data) && !Array.isArray(data)) {
    throw invalid(`${what}: must be a Uint32Array, a typed array or an array of integers`);
  }
  const values = /** @type {ArrayLike<number|bigint>} */ (data);
  const out = new Uint32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = Number(values[i]);
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) {
      throw invalid(`${what}[${i}]: not a uint32: ${values[i]}`);
    }
    out[i] = v;
  }
  return out;
}

function littleEndianBytes(values) {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  const isFloat = values instanceof Float32Array;
  for (let i = 0; i < values.length; i++) {
    if (isFloat) view.setFloat32(4 * i, values[i], true);
    else view.setUint32(4 * i, values[i], true);
  }
  return bytes;
}

/**
 * The encoded UploadAssetRequests of one upload: `header` (an AssetHeader object) with the
 * scene, then chunks of `lists` ([field, Float32Array|Uint32Array|Uint8Array]), then the
 * trailer.
 */
function* requests(scene, header, lists, chunkValues) {
  if (!Number.isInteger(chunkValues) || chunkValues < 1) {
    throw invalid(`chunkValues: must be a positive integer, got ${chunkValues}`);
  }
  yield encodeRequest('UploadAsset', { scene, header });
  let crc = 0;
  let chunks = 0;
  let holeBytes = 0;
  for (const [field, values] of lists) {
    for (let start = 0; start < values.length; start += chunkValues) {
      const part = values.subarray(start, start + chunkValues);
      if (field === 'holes') {
        crc = crc32c(part, crc);
        holeBytes += part.length;
        yield encodeRequest('UploadAsset', { chunk: { holes: Buffer.from(part) } });
      } else {
        crc = crc32c(littleEndianBytes(part), crc);
        yield encodeRequest('UploadAsset', { chunk: { [field]: Array.from(part) } });
      }
      chunks++;
    }
  }
  const trailer = { chunk_count: chunks, crc32c: crc };
  if (header.mesh) {
    trailer.vertex_count = header.mesh.vertex_count;
    trailer.index_count = header.mesh.index_count;
  } else {
    trailer.sample_count = header.heightfield.rows * header.heightfield.columns;
    trailer.hole_bytes = holeBytes;
  }
  yield encodeRequest('UploadAsset', { trailer });
}

/**
 * The requests of a mesh upload: `vertices` x, y, z per vertex (float32), `indices` three per
 * triangle (uint32). Values that cannot be sent throw CollideError INVALID_ARGUMENT at once.
 * @param {string} scene
 * @param {string} name
 * @param {{vertices: ArrayLike<number>|ArrayBuffer, indices: ArrayLike<number>|ArrayBuffer}} mesh
 * @param {number} chunkValues
 * @returns {Buffer[]}
 */
export function meshRequests(scene, name, mesh, chunkValues = DEFAULT_CHUNK_VALUES) {
  if (typeof name !== 'string') throw invalid('name: must be a string');
  if (mesh === null || typeof mesh !== 'object') throw invalid('mesh: must be an object');
  const vertices = floats(mesh.vertices, 'vertices');
  const indices = uint32s(mesh.indices, 'indices');
  if (vertices.length % 3 !== 0) {
    throw invalid(`vertices: ${vertices.length} floats, not 3 per vertex`);
  }
  const header = {
    name,
    mesh: { vertex_count: vertices.length / 3, index_count: indices.length },
  };
  return [...requests(scene, header, [['vertices', vertices], ['indices', indices]],
                      chunkValues)];
}

/**
 * The requests of a heightfield upload: rows x columns heights, row-major (float32), the
 * spacings, and optionally the hole bits ((rows - 1) x (columns - 1) bits, cell c at bit c % 8
 * of byte c / 8).
 * @param {string} scene
 * @param {string} name
 * @param {{rows: number, columns: number, heights: ArrayLike<number>|ArrayBuffer,
 *     spacingX?: number, spacingZ?: number, holes?: Uint8Array}} field
 * @param {number} chunkValues
 * @returns {Buffer[]}
 */
export function heightfieldRequests(scene, name, field, chunkValues = DEFAULT_CHUNK_VALUES) {
  if (typeof name !== 'string') throw invalid('name: must be a string');
  if (field === null || typeof field !== 'object') throw invalid('heightfield: must be an object');
  const { rows, columns, spacingX = 1, spacingZ = 1, holes } = field;
  const heights = floats(field.heights, 'heights');
  const header = {
    name,
    heightfield: {
      rows, columns, spacing_x: spacingX, spacing_z: spacingZ, has_holes: holes !== undefined,
    },
  };
  const lists = [['heights', heights]];
  if (holes !== undefined) {
    if (!(holes instanceof Uint8Array)) throw invalid('holes: must be a Uint8Array');
    lists.push(['holes', holes]);
  }
  return [...requests(scene, header, lists, chunkValues)];
}
