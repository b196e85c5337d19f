// Decoding one QueryBatchResult of 10,000 hits (random distances and points): proto-loader's
// decoder alone, the client's (query answers are not rounded: the same decoder), and the same
// decoded then every float32 field set to its shortest decimal (proto.js roundFloat32Fields, as
// the client does for the answers people read). They alternate, 7 rounds of 20 decodes each; the
// medians are printed. No server needed.
//
//   node client/node/bench/decode_hits.js

import protoLoader from '@grpc/proto-loader';

import { protoDir, roundFloat32Fields, service } from '../src/proto.js';

const HITS = 10000;
const client = service.QueryStream.responseDeserialize;
const definition = protoLoader.loadSync('collide/v1/collide.proto', {
  includeDirs: [protoDir()],
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: false,
});
const plain = definition['collide.v1.Collide'].QueryStream.responseDeserialize;

const hits = [];
for (let i = 0; i < HITS; i++) {
  hits.push({
    body_id: String(i),
    distance: Math.random() * 100,
    point: { x: Math.random(), y: Math.random() * 50, z: 3.3 },
    normal: { x: 0.6, y: 0.8, z: 0 },
    depth: 0.1,
  });
}
const bytes = service.QueryStream.responseSerialize({
  version: '5',
  results: [{ request_id: '1', hits }],
});

function time(decode) {
  const start = performance.now();
  for (let k = 0; k < 20; k++) decode(bytes);
  return (performance.now() - start) / 20;
}
const rounded = (b) => roundFloat32Fields('QueryBatchResult', plain(b));
for (let k = 0; k < 3; k++) {
  plain(bytes);
  client(bytes);
  rounded(bytes);
}
const plainTimes = [];
const clientTimes = [];
const roundedTimes = [];
for (let round = 0; round < 7; round++) {
  plainTimes.push(time(plain));
  clientTimes.push(time(client));
  roundedTimes.push(time(rounded));
}
const median = (values) => values.sort((a, b) => a - b)[3];
console.log(
  `${HITS} hits: proto-loader ${median(plainTimes).toFixed(1)} ms, ` +
    `the client ${median(clientTimes).toFixed(1)} ms, ` +
    `every float32 field shortest ${median(roundedTimes).toFixed(1)} ms (medians of 7)`,
);
