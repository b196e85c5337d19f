/**
 * A real collide-server process for the tests: started on a free port of 127.0.0.1 with its own
 * data directory, killed and restarted on the same port and directory.
 *
 * The binary comes from $COLLIDE_SERVER (ctest sets it), else the repository's
 * build/server/collide-server.
 */

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** @returns {string} The collide-server binary to test against. */
export function serverBinary() {
  const fromEnv = process.env.COLLIDE_SERVER;
  if (fromEnv) return fromEnv;
  const built = path.join(here, '..', '..', '..', 'build', 'server', 'collide-server');
  if (fs.existsSync(built)) return built;
  throw new Error('set COLLIDE_SERVER to the collide-server binary (or build it in build/)');
}

/** A temporary directory removed by `remove()`. */
export function tempDir(prefix = 'collide-node-') {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** One collide-server process (restartable). */
export class ServerProcess {
  /**
   * Starts a server and waits until it serves.
   * @param {{args?: string[], tokenFile?: string}} [options] Extra flags.
   * @returns {Promise<ServerProcess>}
   */
  static async start(options = {}) {
    const server = new ServerProcess(options);
    await server.launch_('127.0.0.1:0');
    return server;
  }

  constructor(options) {
    this.dir = tempDir();
    this.dataDir = path.join(this.dir, 'data');
    this.args_ = options.args ?? [];
    if (options.tokenFile) this.args_.push(`--token_file=${options.tokenFile}`);
    this.port = 0;
    this.child_ = null;
    this.exited_ = null;
    this.stderr_ = '';
  }

  /** @returns {string} host:port */
  get address() {
    return `127.0.0.1:${this.port}`;
  }

  async launch_(address) {
    const portFile = path.join(this.dir, 'port');
    fs.rmSync(portFile, { force: true });
    const child = spawn(
      serverBinary(),
      [
        `--address=${address}`,
        `--port_file=${portFile}`,
        `--data_dir=${this.dataDir}`,
        '--log_level=warn',
        ...this.args_,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    this.child_ = child;
    // A test process that dies leaves no server behind.
    const killOnExit = () => child.kill('SIGKILL');
    process.on('exit', killOnExit);
    child.on('exit', () => process.off('exit', killOnExit));
    this.stderr_ = '';
    child.stderr.on('data', (chunk) => {
      this.stderr_ += chunk;
    });
    this.exited_ = new Promise((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    let exitedEarly = null;
    this.exited_.then((how) => {
      exitedEarly = how;
    });
    for (let waited = 0; waited < 30_000; waited += 20) {
      if (exitedEarly) {
        throw new Error(`collide-server exited (${JSON.stringify(exitedEarly)}): ${this.stderr_}`);
      }
      if (fs.existsSync(portFile)) {
        this.port = Number(fs.readFileSync(portFile, 'utf8').trim());
        return;
      }
      await sleep(20);
    }
    child.kill('SIGKILL');
    throw new Error(`collide-server wrote no port file in 30 s: ${this.stderr_}`);
  }

  /** Kills the process with SIGKILL and waits for it to be gone. */
  async kill() {
    if (!this.child_) return;
    this.child_.kill('SIGKILL');
    await this.exited_;
    this.child_ = null;
  }

  /** Starts the server again on the same port and data directory (after kill()). */
  async restart() {
    await this.launch_(this.address);
  }

  /** Stops the server (SIGTERM, then SIGKILL after 10 s) and removes its directory. */
  async stop() {
    if (this.child_) {
      this.child_.kill('SIGTERM');
      const timeout = sleep(10_000, 'timeout', { ref: false });
      if ((await Promise.race([this.exited_, timeout])) === 'timeout') await this.kill();
      this.child_ = null;
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
