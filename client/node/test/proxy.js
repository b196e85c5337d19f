/**
 * A TCP proxy in front of a server that can lose everything the server sends: on the connections
 * open when freeze() is called, bytes from the server to the client are dropped from then on
 * while the client's still reach the server — acknowledgements lost in the network. Later
 * connections forward both ways. A connection ends when either side closes.
 */

import net from 'node:net';

export class LossyProxy {
  /**
   * Listens on a free port of 127.0.0.1 and forwards to 127.0.0.1:`targetPort`.
   * @param {number} targetPort
   * @returns {Promise<LossyProxy>}
   */
  static async start(targetPort) {
    const proxy = new LossyProxy(targetPort);
    await new Promise((resolve) => proxy.server_.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  constructor(targetPort) {
    this.targetPort = targetPort;
    // Per open connection: {lossy}.
    this.connections_ = new Set();
    this.sockets_ = new Set();
    this.server_ = net.createServer((client) => this.forward_(client));
  }

  /** @returns {string} host:port to connect to. */
  get address() {
    return `127.0.0.1:${this.server_.address().port}`;
  }

  /** Drops the server's bytes from now on, on every connection open now. */
  freeze() {
    for (const connection of this.connections_) connection.lossy = true;
  }

  forward_(client) {
    const upstream = net.connect(this.targetPort, '127.0.0.1');
    const connection = { lossy: false };
    this.connections_.add(connection);
    client.on('close', () => this.connections_.delete(connection));
    for (const socket of [client, upstream]) {
      this.sockets_.add(socket);
      socket.on('close', () => this.sockets_.delete(socket));
    }
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (!connection.lossy) client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('error', end);
      socket.on('close', end);
    }
  }

  /** Closes the listener and every connection. */
  close() {
    for (const socket of this.sockets_) socket.destroy();
    return new Promise((resolve) => this.server_.close(resolve));
  }
}
