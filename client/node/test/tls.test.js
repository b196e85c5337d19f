// TLS against a real collide-server: server certificates checked against a CA, and client
// certificates when the server requires them. Certificates are made at test time with the openssl
// command (skipped without it).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client } from '../src/index.js';
import { rejectsWith } from './helpers.js';
import { ServerProcess, tempDir } from './server.js';

function findOpenssl() {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return 'openssl';
  } catch {
    return null;
  }
}

// Writes ca.pem, server.{pem,key} and client.{pem,key} into `dir`.
function makeCertificates(openssl, dir) {
  const file = (name) => path.join(dir, name);
  fs.writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  fs.writeFileSync(file('client.ext'), 'extendedKeyUsage=clientAuth\n');
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const run = (args) => execFileSync(openssl, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  run([
    'req',
    '-x509',
    ...ec,
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=collide test CA',
  ]);
  for (const who of ['server', 'client']) {
    run([
      'req',
      ...ec,
      '-keyout',
      file(`${who}.key`),
      '-out',
      file(`${who}.csr`),
      '-subj',
      `/CN=${who === 'server' ? 'localhost' : who}`,
    ]);
    run([
      'x509',
      '-req',
      '-in',
      file(`${who}.csr`),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file(`${who}.pem`),
      '-days',
      '2',
      '-extfile',
      file(`${who}.ext`),
    ]);
  }
  return file;
}

const openssl = findOpenssl();

describe('TLS', { skip: openssl ? false : 'no openssl command to make certificates' }, () => {
  let dir;
  let file;
  let server;
  let mutual;

  before(async () => {
    dir = tempDir();
    file = makeCertificates(openssl, dir);
    const tls = [`--tls_cert=${file('server.pem')}`, `--tls_key=${file('server.key')}`];
    server = await ServerProcess.start({ args: tls });
    mutual = await ServerProcess.start({ args: [...tls, `--tls_ca=${file('ca.pem')}`] });
  });

  after(async () => {
    await server?.stop();
    await mutual?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a client trusting the CA talks to a TLS server; a plaintext one cannot', async () => {
    const secure = new Client(server.address, { tls: { rootCertsFile: file('ca.pem') } });
    const plain = new Client(server.address, { deadlineMs: 5000 });
    try {
      const scene = await secure.createScene({ scene: 'tls' });
      assert.equal(scene.name, 'tls');
      const writer = secure.openUpdateWriter('tls');
      await writer.apply({ ops: [{ upsert: { id: 1, shape: { sphere: { radius: 1 } } } }] });
      await writer.close();
      assert.equal((await secure.getScene({ scene: 'tls' })).stats.version, '1');
      await assert.rejects(
        plain.listScenes(),
        (error) => error.codeName === 'UNAVAILABLE' || error.codeName === 'DEADLINE_EXCEEDED',
      );
    } finally {
      secure.close();
      plain.close();
    }
  });

  test('a server that requires client certificates accepts one signed by its CA only', async () => {
    const withCertificate = new Client(mutual.address, {
      tls: {
        rootCertsFile: file('ca.pem'),
        privateKeyFile: file('client.key'),
        certChainFile: file('client.pem'),
      },
    });
    const without = new Client(mutual.address, {
      tls: { rootCerts: fs.readFileSync(file('ca.pem')) },
      deadlineMs: 5000,
    });
    try {
      assert.deepEqual(await withCertificate.listScenes(), []);
      await rejectsWith(withCertificate.getScene({ scene: 'none' }), 'NOT_FOUND', 'scene');
      await assert.rejects(
        without.listScenes(),
        (error) => error.codeName === 'UNAVAILABLE' || error.codeName === 'DEADLINE_EXCEEDED',
      );
    } finally {
      withCertificate.close();
      without.close();
    }
  });
});
