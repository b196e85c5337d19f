/**
 * Loads collide's API (proto/collide/v1/collide.proto) at run time with @grpc/proto-loader, and
 * checks requests against it before they are sent.
 *
 * Messages are plain objects with the proto's field names (snake_case). uint64 values are read as
 * decimal strings (a JavaScript number cannot hold every uint64); they may be written as a
 * non-negative safe integer, a decimal string or a BigInt. Enums are read as their names
 * (`MODE_ALL`) and may be written as names or numbers. Absent sub-messages read as null, absent
 * scalars as their default, absent proto3 `optional` fields are left out.
 * @module collide-client/proto
 */

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import protoLoader from '@grpc/proto-loader';
import grpc from '@grpc/grpc-js';

import { CollideError } from './errors.js';

const PROTO_FILE = 'collide/v1/collide.proto';
const PACKAGE = 'collide.v1';
const UINT64_MAX = (1n << 64n) - 1n;

/**
 * The directory that holds collide/v1/collide.proto: a copy inside the package (made by
 * `npm pack`), else the repository's proto/ directory.
 * @returns {string}
 */
export function protoDir() {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.join(here, '..', 'proto'), path.join(here, '..', '..', '..', 'proto')];
  for (const dir of candidates) {
    if (fs.existsSync(path.join(dir, PROTO_FILE))) return dir;
  }
  throw new Error(`collide-client: ${PROTO_FILE} not found under ${candidates.join(' or ')}`);
}

/** The package definition of collide.v1 (proto-loader's form). */
export const packageDefinition = protoLoader.loadSync(PROTO_FILE, {
  includeDirs: [protoDir()],
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: false,
});

/**
 * The Collide service's methods by rpc name (`CreateScene`, `UpdateStream`, ...), each with its
 * path and (de)serializers.
 * @type {import('@grpc/proto-loader').ServiceDefinition}
 */
export const service = /** @type {any} */ (packageDefinition[`${PACKAGE}.Collide`]);

/**
 * The grpc status codes by name.
 */
export const status = grpc.status;

/**
 * The shortest decimal number that is the same float32 as `value` (a float32 read from a
 * message): 0.1 for the float32 nearest 0.1, whose exact value is 0.10000000149011612. Encoded
 * again it gives the same float32 bits. Protobuf's JSON mapping writes float fields this way.
 * @param {number} value
 * @returns {number}
 */
export function shortestFloat32(value) {
  if (value === 0 || !Number.isFinite(value)) return value;
  bitsView[0] = value;
  // Next to a power of two the float32 below is twice as near as the one above, so a decimal
  // other than the nearest of its length may be the one that reads back; a subnormal float32
  // has fewer digits than 6: the careful search for both.
  if ((bitsWord[0] & 0x7fffff) === 0 || (bitsWord[0] & 0x7f800000) === 0) {
    return shortestCarefully(value);
  }
  // A normal float32 needs 6 to 9 significant digits, and a shorter decimal that reads back is
  // also the nearest one of 6 digits (its distance is below half a float32 step, far below half a
  // 6-digit step): the shortest number is the nearest decimal of the first length from 6 that
  // reads back. Most need 7 or 8, so 7 is tried first.
  const seven = Number(value.toPrecision(7));
  if (Math.fround(seven) === value) {
    const six = Number(value.toPrecision(6));
    return Math.fround(six) === value ? evenOfTie(value, six, 6) : evenOfTie(value, seven, 7);
  }
  const eight = Number(value.toPrecision(8));
  return Math.fround(eight) === value
    ? evenOfTie(value, eight, 8)
    : evenOfTie(value, Number(value.toPrecision(9)), 9);
}

// `nearest`, toPrecision(digits) of the float32 `value`, or, when it was one of two decimals
// equally near, the one whose last digit is even, as C++'s std::to_chars and the other clients
// print it (toPrecision takes the larger: 1703448.25 is 1703448.2, not 1703448.3). Both of a tie
// are as near, so both read back or neither: the length stays the same.
function evenOfTie(value, nearest, digits) {
  // A tie needs the next digit to be a 5 that ends the value: rare, then checked exactly.
  const longer = value.toExponential(digits);
  if (longer[longer.indexOf('e') - 1] !== '5') return nearest;
  const magnitude = Math.abs(value);
  const [mantissa, exponent] = magnitude.toExponential(digits - 1).split('e');
  const whole = BigInt(mantissa.replace('.', ''));
  const scale = Number(exponent) - (digits - 1);
  if ((whole & 1n) === 0n || !isMidpoint(magnitude, 2n * whole - 1n, scale)) return nearest;
  const even = Number(`${whole - 1n}e${scale}`);
  return value < 0 ? -even : even;
}

function abs(n) {
  return n < 0n ? -n : n;
}

// Whether 2 x value (a float32) is exactly sum x 10^exponent.
function isMidpoint(value, sum, exponent) {
  bitsView[0] = value;
  const bits = bitsWord[0];
  const biased = (bits >>> 23) & 0xff;
  // value = m x 2^e exactly.
  let m = BigInt(biased === 0 ? bits & 0x7fffff : (bits & 0x7fffff) | 0x800000);
  const e = (biased === 0 ? -149 : biased - 150) + 1; // the 2 of 2 x value
  let right = sum;
  if (e >= 0) m <<= BigInt(e);
  else right <<= BigInt(-e);
  if (exponent >= 0) right *= 10n ** BigInt(exponent);
  else m *= 10n ** BigInt(-exponent);
  return m === right;
}

const bitsView = new Float32Array(1);
const bitsWord = new Uint32Array(bitsView.buffer);

// shortestFloat32 for a power of two or a subnormal: per length from 1, the nearest decimal and
// its two neighbours.
function shortestCarefully(value) {
  for (let digits = 1; digits <= 9; digits++) {
    const [mantissa, exponent] = value.toExponential(digits - 1).split('e');
    const whole = BigInt(mantissa.replace('.', ''));
    const scale = Number(exponent) - (digits - 1);
    let best;
    let bestWhole;
    for (const step of [0n, -1n, 1n]) {
      const candidate = Number(`${whole + step}e${scale}`);
      if (Math.fround(candidate) !== value) continue;
      // Of two equally near (2 x value is their sum), the even one.
      const tie =
        best !== undefined && isMidpoint(Math.abs(value), abs(whole + step + bestWhole), scale);
      if (
        best === undefined ||
        (tie ? ((whole + step) & 1n) === 0n : Math.abs(candidate - value) < Math.abs(best - value))
      ) {
        best = candidate;
        bestWhole = whole + step;
      }
    }
    if (best !== undefined) return best;
  }
  return value;
}

// Per message type: the fields that are float32 values (typeName null) or messages holding some
// (their type), repeated or not, so that a decoded message is walked only where floats can be.
const floatPlans = new Map();

function floatPlanOf(typeName, visiting = new Set()) {
  let plan = floatPlans.get(typeName);
  if (plan) return plan;
  if (visiting.has(typeName)) return [];
  visiting.add(typeName);
  plan = [];
  for (const [name, field] of fieldsOf(typeName)) {
    if (field.type === 'TYPE_FLOAT') {
      plan.push({ name, repeated: field.repeated, typeName: null });
    } else if (field.type === 'TYPE_MESSAGE' && floatPlanOf(field.typeName, visiting).length > 0) {
      plan.push({ name, repeated: field.repeated, typeName: field.typeName });
    }
  }
  visiting.delete(typeName);
  floatPlans.set(typeName, plan);
  return plan;
}

/**
 * `message` (decoded, a `typeName`) with every float32 field set to its shortest decimal
 * (shortestFloat32), in place.
 * @param {string} typeName
 * @param {any} message
 * @returns {any}
 */
export function roundFloat32Fields(typeName, message) {
  if (message === null || message === undefined) return message;
  for (const { name, repeated, typeName: nested } of floatPlanOf(typeName)) {
    const value = message[name];
    if (value === null || value === undefined) continue;
    if (nested === null) {
      if (repeated) {
        for (let i = 0; i < value.length; i++) value[i] = shortestFloat32(value[i]);
      } else {
        message[name] = shortestFloat32(value);
      }
    } else if (repeated) {
      for (const element of value) roundFloat32Fields(nested, element);
    } else {
      roundFloat32Fields(nested, value);
    }
  }
  return message;
}

// The answers people read (scenes, their options and stats, bodies, imports) have their float32
// fields read as their shortest decimal. The query answers and the streams do not: they are the
// hot path (a 10,000-hit answer decodes about 3.5 times slower rounded), and their floats are
// numbers to compute with; roundFloat32Fields rounds one when it is to be shown.
const kHotRpcs = new Set(['Raycast', 'SphereCast', 'Overlap', 'QueryStream', 'UpdateStream',
  'Watch', 'ExportScene']);
for (const [name, method] of Object.entries(service)) {
  if (kHotRpcs.has(name)) continue;
  const decode = method.responseDeserialize;
  const typeName = method.responseType.type.name;
  method.responseDeserialize = (bytes) => roundFloat32Fields(typeName, decode(bytes));
}

/**
 * The request of `rpc` checked (see checkMessage) and encoded: what the client sends. Encoding at
 * once keeps a request from changing with the caller's objects while it waits to be sent (or, in
 * an UpdateWriter, to be resent).
 * @param {string} rpc The rpc's name in collide.v1.Collide.
 * @param {object} request
 * @returns {Buffer}
 */
export function encodeRequest(rpc, request) {
  const method = service[rpc];
  return method.requestSerialize(checkMessage(method.requestType.type.name, request));
}

/**
 * Decodes a request that encodeRequest made (for showing what was sent).
 * @param {string} rpc
 * @param {Buffer} bytes
 * @returns {object}
 */
export function decodeRequest(rpc, bytes) {
  return service[rpc].requestDeserialize(bytes);
}

// Per message type: field name -> {type, typeName, repeated}.
const fieldTables = new Map();

function fieldsOf(typeName) {
  let table = fieldTables.get(typeName);
  if (table) return table;
  const definition = /** @type {any} */ (packageDefinition[`${PACKAGE}.${typeName}`]);
  if (!definition || !definition.type) throw new Error(`collide-client: no message ${typeName}`);
  table = new Map();
  for (const field of definition.type.field) {
    table.set(field.name, {
      type: field.type,
      typeName: field.typeName,
      repeated: field.label === 'LABEL_REPEATED',
    });
  }
  fieldTables.set(typeName, table);
  return table;
}

const enumNames = new Map();

function enumValuesOf(typeName) {
  let values = enumNames.get(typeName);
  if (values) return values;
  const definition = /** @type {any} */ (packageDefinition[`${PACKAGE}.${typeName}`]);
  values = new Map(definition.type.value.map((value) => [value.name, value.number]));
  enumNames.set(typeName, values);
  return values;
}

function invalid(fieldPath, reason) {
  return new CollideError(status.INVALID_ARGUMENT, `${fieldPath}: ${reason}`);
}

function checkUint64(value, fieldPath) {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && value >= 0) return value;
    throw invalid(
      fieldPath,
      `${value} is not a uint64 that a number holds exactly (use a ` +
        'decimal string or a BigInt)',
    );
  }
  if (typeof value === 'bigint') {
    if (value >= 0n && value <= UINT64_MAX) return value.toString();
    throw invalid(fieldPath, `${value} is out of the uint64 range`);
  }
  if (typeof value === 'string') {
    if (/^[0-9]{1,20}$/.test(value) && BigInt(value) <= UINT64_MAX) return value;
    throw invalid(fieldPath, `"${value}" is not a decimal uint64`);
  }
  throw invalid(
    fieldPath,
    `a uint64 must be a number, a decimal string or a BigInt, not ${typeof value}`,
  );
}

// Scalar types the encoder checks well enough itself.
const PASSED_AS_IS = new Set([
  'TYPE_FLOAT',
  'TYPE_DOUBLE',
  'TYPE_UINT32',
  'TYPE_INT32',
  'TYPE_BOOL',
  'TYPE_STRING',
]);

function checkValue(field, value, fieldPath) {
  switch (field.type) {
    case 'TYPE_UINT64':
      return checkUint64(value, fieldPath);
    case 'TYPE_MESSAGE':
      return checkMessage(field.typeName, value, fieldPath);
    case 'TYPE_ENUM': {
      const values = enumValuesOf(field.typeName);
      if (typeof value === 'string' && values.has(value)) return value;
      if (typeof value === 'number' && [...values.values()].includes(value)) return value;
      throw invalid(
        fieldPath,
        `${JSON.stringify(value)} is not a ${field.typeName} (one of ` +
          `${[...values.keys()].join(', ')})`,
      );
    }
    default:
      return value;
  }
}

/**
 * `message` ready to encode as a `typeName`: a copy with uint64 values as decimal strings, which
 * shares the arrays of other scalars (floats, uint32s) with `message`, so encode it before
 * `message` may change. Throws a
 * CollideError (INVALID_ARGUMENT, with the field path) for a field the message type does not
 * have, a uint64 that is not one, or an unknown enum value — which the encoder would otherwise
 * turn silently into 0.
 * @param {string} typeName A message of collide.v1, for example `UpsertBodiesRequest`.
 * @param {object} message
 * @param {string} [fieldPath] The path of `message` in the request ('' for the root).
 * @returns {object}
 */
export function checkMessage(typeName, message, fieldPath = '') {
  if (message === null || message === undefined) return message;
  if (typeof message !== 'object' || Array.isArray(message)) {
    throw invalid(fieldPath || typeName, `must be an object (a ${typeName} message)`);
  }
  const fields = fieldsOf(typeName);
  const copy = {};
  for (const [name, value] of Object.entries(message)) {
    const here = fieldPath ? `${fieldPath}.${name}` : name;
    const field = fields.get(name);
    if (!field) throw invalid(here, `${typeName} has no field "${name}"`);
    if (value === null || value === undefined) continue;
    if (field.repeated) {
      if (!Array.isArray(value) && !ArrayBuffer.isView(value)) {
        throw invalid(here, 'must be an array');
      }
      copy[name] = PASSED_AS_IS.has(field.type)
        ? value
        : Array.from(value, (element, i) => checkValue(field, element, `${here}[${i}]`));
    } else {
      copy[name] = checkValue(field, value, here);
    }
  }
  return copy;
}
