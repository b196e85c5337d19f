// collide-server's viewer flags: bad values stop the start with a message that names the flag
// (exit 1 or 2, never a crash), a non-loopback address needs --token_file or
// --allow_insecure_remote, a busy port is refused.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, test } from 'node:test';

import { serverBinary, tempDir } from '../../node/test/server.js';
import { get } from './viewer_server.js';

// Runs collide-server with `flags` until it exits (or 20 s): {code, signal, stderr}.
function run(flags) {
  const dir = tempDir('collide-viewer-flags-');
  return new Promise((resolve) => {
    const child = spawn(serverBinary(), [
      '--address=127.0.0.1:0', `--data_dir=${path.join(dir, 'data')}`, ...flags,
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      fs.rmSync(dir, { recursive: true, force: true });
      resolve({ code, signal, stderr });
    });
  });
}

describe('viewer flags', () => {
  test('refuses bad values, naming the flag', async () => {
    const cases = [
      [['--viewer_address=garbage'], 'viewer_address: "garbage" is not host:port'],
      [['--viewer_address=127.0.0.1:65536'], 'viewer_address: '],
      [['--viewer_address=127.0.0.1:18446744073709551615'], 'the port is a number'],
      [['--viewer_address=127.0.0.1:-1'], 'the port is a number'],
      [['--viewer_address=:0'], 'the host is'],
      [['--viewer_address=999.0.0.1:0'], 'the host is'],
      [['--viewer_address=0.0.0.0:0'], 'viewer_address: refusing to serve 0.0.0.0:0'],
      [['--viewer_address=127.0.0.1:0', '--viewer_max_streams=0'], 'viewer_max_streams: 0 is not from 1 to 64'],
      [['--viewer_address=127.0.0.1:0', '--viewer_max_streams=65'], 'viewer_max_streams: 65'],
      [['--viewer_address=127.0.0.1:0', '--viewer_max_streams=-1'], 'viewer_max_streams: -1'],
      [['--viewer_address=127.0.0.1:0', '--viewer_max_streams=18446744073709551615'], 'viewer_max_streams'],
      [['--viewer_address=127.0.0.1:0', '--viewer_max_streams=NaN'], 'viewer_max_streams'],
      [['--viewer_port_file=/nonexistent/never'], '--viewer_port_file: needs --viewer_address'],
    ];
    for (const [flags, message] of cases) {
      const { code, signal, stderr } = await run(flags);
      assert.equal(signal, null, `${flags}: killed by ${signal}`);
      assert.ok(code === 1 || code === 2, `${flags}: exit ${code}`);
      assert.ok(stderr.includes(message), `${flags}: ${stderr}`);
    }
  });

  test('refuses a port in use', async () => {
    const blocker = net.createServer();
    await new Promise((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address();
    try {
      const { code, stderr } = await run([`--viewer_address=127.0.0.1:${port}`]);
      assert.equal(code, 1);
      assert.ok(stderr.includes(`viewer_address: cannot listen on 127.0.0.1:${port}`), stderr);
    } finally {
      blocker.close();
    }
  });

  test('serves a non-loopback address with --allow_insecure_remote', async () => {
    const dir = tempDir('collide-viewer-remote-');
    const portFile = path.join(dir, 'port');
    const child = spawn(serverBinary(), [
      '--address=127.0.0.1:0', `--data_dir=${path.join(dir, 'data')}`,
      '--viewer_address=0.0.0.0:0', '--allow_insecure_remote', `--viewer_port_file=${portFile}`,
    ], { stdio: 'ignore' });
    try {
      for (let i = 0; i < 200 && !fs.existsSync(portFile); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const port = Number(fs.readFileSync(portFile, 'utf8').trim());
      // Reached over loopback only: this test sends no traffic elsewhere.
      assert.equal((await get(`http://127.0.0.1:${port}/viewer/api/scenes`)).status, 200);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.on('exit', r));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
