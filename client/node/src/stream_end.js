/**
 * Reads a gRPC stream's answers and its end in order.
 * @module collide-client/stream_end
 */

/**
 * Calls `onMessage` for each answer of `call` and then, once, `onEnd` with the call's status
 * (code, details, metadata). grpc-js reports the status as soon as it arrives, possibly before
 * the last answers were read; this waits for both the status and the end of the answers.
 * @param {import('@grpc/grpc-js').ClientDuplexStream<any, any>} call
 * @param {(message: any) => void} onMessage
 * @param {(status: import('@grpc/grpc-js').StatusObject) => void} onEnd
 */
export function readStream(call, onMessage, onEnd) {
  let status = null;
  let drained = false;
  let done = false;
  const finish = () => {
    if (done || status === null || !drained) return;
    done = true;
    onEnd(status);
  };
  call.on('data', onMessage);
  // 'error' repeats what 'status' says; listening keeps it from being thrown.
  call.on('error', () => {});
  call.on('status', (s) => {
    status = s;
    finish();
  });
  call.on('end', () => {
    drained = true;
    finish();
  });
  // A destroyed stream may never emit 'end'.
  call.on('close', () => {
    drained = true;
    finish();
  });
}
