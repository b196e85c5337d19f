/**
 * Errors of the collide client: every failed call rejects with a {@link CollideError}.
 * @module collide-client/errors
 */

import grpc from '@grpc/grpc-js';

/**
 * gRPC status code names by number (google.rpc.Code).
 * @type {Readonly<Record<number, string>>}
 */
export const CODE_NAMES = Object.freeze(
  Object.fromEntries(Object.entries(grpc.status).map(([name, code]) => [code, name])),
);

/**
 * A failed call, a rejected stream batch, or a request the client refused to send.
 *
 * `message` is the server's message unchanged: for bad input it starts with the field path of the
 * offending value (`ray.direction: must be finite and non-zero`), which is also in `fieldPath`.
 */
export class CollideError extends Error {
  /**
   * @param {number} code gRPC status code (3 INVALID_ARGUMENT, 5 NOT_FOUND, ...).
   * @param {string} message The server's message (`<field path>: <reason>` for bad input).
   * @param {{metadata?: import('@grpc/grpc-js').Metadata, sequence?: string, movedTo?: string,
   *          cause?: unknown}} [extra] The trailing metadata of a failed call, the
   *     client_sequence of a rejected update batch, the address of the server that writes the
   *     scene (a stream answer's Error.moved_to), the underlying error.
   */
  constructor(code, message, extra = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'CollideError';
    /** @type {number} gRPC status code. */
    this.code = code;
    /** @type {string} The code's name, for example `INVALID_ARGUMENT`. */
    this.codeName = CODE_NAMES[code] ?? `CODE_${code}`;
    /**
     * @type {string} The field path the message starts with (`ops[2].set_pose.pose.rotation`), or
     *     '' when the message names none.
     */
    this.fieldPath = fieldPathOf(message);
    /** @type {import('@grpc/grpc-js').Metadata | undefined} Trailing metadata of a failed call. */
    this.metadata = extra.metadata;
    /** @type {string | undefined} The client_sequence of a rejected update batch. */
    this.sequence = extra.sequence;
    /**
     * @type {string | undefined} The server that writes the scene, when a stream answer named it
     *     (Error.moved_to: the scene moved there, or the server answering follows it).
     */
    this.movedTo = extra.movedTo;
  }
}

// A field path: proto field names, dots and [index] subscripts, before ': '.
const FIELD_PATH =
  /^([A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])*(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])*)*): /;

/**
 * The field path a server message starts with, or ''.
 * @param {string} message
 * @returns {string}
 */
export function fieldPathOf(message) {
  const match = FIELD_PATH.exec(message);
  return match ? match[1] : '';
}

/**
 * The CollideError for an error of @grpc/grpc-js (a ServiceError, or any other Error).
 * @param {any} error
 * @returns {CollideError}
 */
export function fromGrpcError(error) {
  if (error instanceof CollideError) return error;
  if (error && typeof error.code === 'number') {
    return new CollideError(error.code, error.details ?? error.message ?? '', {
      metadata: error.metadata,
      cause: error,
    });
  }
  return new CollideError(grpc.status.UNKNOWN, String(error?.message ?? error), { cause: error });
}

/**
 * The CollideError for an Error message of a stream answer (UpdateAck.error,
 * QueryBatchResult.error, QueryResult.error).
 * @param {{code: number, message: string, moved_to?: string}} error
 * @param {string} [sequence] The rejected update batch's client_sequence.
 * @returns {CollideError}
 */
export function fromAnswerError(error, sequence) {
  return new CollideError(error.code, error.message, {
    sequence,
    ...(error.moved_to ? { movedTo: error.moved_to } : {}),
  });
}
