// index.d.ts against proto/collide/v1/collide.proto: the declarations are written by hand, so this
// test is what keeps them from drifting. Every interface named like a proto message declares
// exactly that message's fields, the string unions name exactly the enums' values, every rpc of
// the service is reached by a declared Client method (or is listed below as not offered), and
// the declared methods exist in the implementation.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Client } from '../src/index.js';
import { packageDefinition } from '../src/proto.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const declarations = fs.readFileSync(path.join(here, '..', 'src', 'index.d.ts'), 'utf8');

/** The proto's messages and enums by short name. */
function protoTypes() {
  const messages = new Map();
  const enums = new Map();
  for (const [name, definition] of Object.entries(packageDefinition)) {
    if (!name.startsWith('collide.v1.') || !definition.type) continue;
    const short = name.slice('collide.v1.'.length);
    if (definition.format === 'Protocol Buffer 3 DescriptorProto') {
      messages.set(short, definition.type.field.map((field) => field.name).sort());
      for (const nested of definition.type.enumType ?? []) {
        enums.set(`${short}.${nested.name}`, nested.value.map((value) => value.name).sort());
      }
    } else if (definition.format === 'Protocol Buffer 3 EnumDescriptorProto') {
      enums.set(short, definition.type.value.map((value) => value.name).sort());
    }
  }
  return { messages, enums };
}

/** The top-level `export interface` blocks of index.d.ts: name, extended name, field names. */
function declaredInterfaces() {
  const interfaces = new Map();
  const pattern = /^export interface (\w+)(?: extends (\w+))? \{\n([\s\S]*?)^\}/gm;
  for (const [, name, base, body] of declarations.matchAll(pattern)) {
    // Fields at the block's first indentation level only (not those of inline object types).
    const fields = [...body.matchAll(/^ {2}(\w+)\??:/gm)].map((match) => match[1]);
    interfaces.set(name, { base, fields });
  }
  return interfaces;
}

function fieldsOf(interfaces, name) {
  const declared = interfaces.get(name);
  const inherited = declared.base ? fieldsOf(interfaces, declared.base) : [];
  return [...inherited, ...declared.fields].sort();
}

/** Declared interfaces that stand for a proto message under another name. */
const RENAMED = { BodyInput: 'Body', UpdateBatchInput: 'UpdateBatch', AnswerError: 'Error' };
/** Proto fields a declared interface leaves out because the client sets them itself. */
const SET_BY_CLIENT = {
  QueryBatch: ['scene'],
  UpdateBatchInput: ['scene', 'client_id', 'client_sequence'],
};
/** Declared interfaces that are no proto message (client-side options and shapes). */
const CLIENT_ONLY = new Set([
  'QueryRequest', 'RejectedBatch', 'TlsOptions', 'ClientOptions', 'CallOptions',
  'UpdateWriterOptions', 'QueryStreamOptions', 'InterestStreamOptions', 'InterestMessage',
]);

test('every declared message interface has exactly its proto message fields', () => {
  const { messages } = protoTypes();
  const interfaces = declaredInterfaces();
  assert.ok(interfaces.size > 10, `parsed only ${interfaces.size} interfaces from index.d.ts`);
  const differences = [];
  for (const name of interfaces.keys()) {
    if (CLIENT_ONLY.has(name)) continue;
    const message = RENAMED[name] ?? name;
    assert.ok(messages.has(message), `index.d.ts declares ${name}, which is no proto message`);
    const declared = fieldsOf(interfaces, name);
    const proto = messages.get(message).filter((field) => !(SET_BY_CLIENT[name] ?? []).includes(field));
    const missing = proto.filter((field) => !declared.includes(field));
    const extra = declared.filter((field) => !proto.includes(field));
    if (missing.length > 0 || extra.length > 0) {
      differences.push(`${name} (proto ${message}): missing [${missing}], not in the proto [${extra}]`);
    }
  }
  assert.deepEqual(differences, [], 'index.d.ts and the proto differ');
});

test('the request interfaces declare the fields of the unary query requests', () => {
  const { messages } = protoTypes();
  const common = fieldsOf(declaredInterfaces(), 'QueryRequest');
  for (const [request, own] of [['RaycastRequest', ['ray']], ['SphereCastRequest', ['cast']],
                                ['OverlapRequest', ['overlap', 'detail']]]) {
    assert.deepEqual([...common, ...own].sort(), messages.get(request),
                     `QueryRequest & { ${own.join(', ')} } is not ${request}`);
  }
});

test('the declared string unions are the proto enums', () => {
  const { enums } = protoTypes();
  for (const [name, protoName] of [['Durability', 'Durability'], ['BodyKind', 'BodyKind'],
                                   ['Mode', 'Mode'], ['WatchEventKind', 'WatchEvent.Kind']]) {
    const match = declarations.match(new RegExp(`^export type ${name} =([^;]*);`, 'm'));
    assert.ok(match, `index.d.ts declares no type ${name}`);
    const values = [...match[1].matchAll(/'(\w+)'/g)].map((value) => value[1]).sort();
    assert.deepEqual(values, enums.get(protoName),
                     `index.d.ts ${name} and proto enum ${protoName} differ`);
  }
});

/** Each rpc of the service and the Client method that calls it. */
const METHODS = {
  CreateScene: 'createScene', DeleteScene: 'deleteScene', ListScenes: 'listScenes',
  GetScene: 'getScene', UpsertBodies: 'upsertBodies', RemoveBodies: 'removeBodies',
  GetBodies: 'getBodies', UpdateStream: 'openUpdateWriter', QueryStream: 'openQueryStream',
  Raycast: 'raycast', SphereCast: 'sphereCast', Overlap: 'overlap', Watch: 'watch',
  GetServerStats: 'serverStats', ExportScene: 'exportScene', ImportScene: 'importScene',
  UploadAsset: 'uploadMesh', ListAssets: 'listAssets', DeleteAsset: 'deleteAsset',
  Interest: 'interest',
};
/** Rpcs the Node client does not offer (SetSceneMoving: an operator's step of `scene move`). */
const NOT_OFFERED = new Set(['SetSceneMoving']);

test('every rpc is reached by a declared and implemented Client method', () => {
  const rpcs = Object.keys(packageDefinition['collide.v1.Collide']);
  const client = declarations.match(/^export class Client \{\n([\s\S]*?)^\}/m);
  assert.ok(client, 'index.d.ts declares no class Client');
  for (const rpc of rpcs) {
    if (NOT_OFFERED.has(rpc)) continue;
    const method = METHODS[rpc];
    assert.ok(method, `rpc ${rpc} has no Client method in index.d.ts (add it, and to METHODS)`);
    assert.match(client[1], new RegExp(`^ {2}${method}\\(`, 'm'),
                 `index.d.ts Client does not declare ${method} (rpc ${rpc})`);
    assert.equal(typeof Client.prototype[method], 'function', `Client has no ${method}`);
  }
  for (const rpc of [...Object.keys(METHODS), ...NOT_OFFERED]) {
    assert.ok(rpcs.includes(rpc), `rpc ${rpc} is no longer in the proto`);
  }
});

/**
 * Proto messages whose fields the declarations need not name: the response wrappers the Client
 * methods unwrap (listScenes resolves with the scenes), the empty GetServerStatsRequest,
 * ImportScene's request and response (importScene builds the one from export messages and
 * resolves with the other's scene), SetSceneMoving's messages (not offered, above), and the
 * asset calls' wrappers (uploadMesh and uploadHeightfield build UploadAssetRequests from arrays,
 * listAssets resolves with the assets, DeleteAssetResponse is empty).
 */
const UNDECLARED = new Set(['ListScenesResponse', 'GetServerStatsRequest', 'ImportSceneRequest',
  'ImportSceneResponse', 'SetSceneMovingRequest', 'SetSceneMovingResponse', 'UploadAssetRequest',
  'ListAssetsResponse', 'DeleteAssetResponse']);

test('every field of every proto message is declared somewhere in index.d.ts', () => {
  const { messages } = protoTypes();
  for (const name of UNDECLARED) assert.ok(messages.has(name), `${name} is no longer in the proto`);
  const declared = new Set([...declarations.matchAll(/(\w+)\??:/g)].map((match) => match[1]));
  const setByClient = new Set(Object.entries(SET_BY_CLIENT).flatMap(
    ([name, fields]) => fields.map((field) => `${RENAMED[name] ?? name}.${field}`)));
  const missing = [];
  for (const [message, fields] of messages) {
    if (UNDECLARED.has(message)) continue;
    for (const field of fields) {
      if (!declared.has(field) && !setByClient.has(`${message}.${field}`)) {
        missing.push(`${message}.${field}`);
      }
    }
  }
  assert.deepEqual(missing, [], 'proto fields index.d.ts does not declare');
});
