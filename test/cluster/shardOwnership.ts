import http2 from 'node:http2';
import protobuf from 'protobufjs';

/**
 * Who owns which history shard, asked of the server itself. The SDK's protos hold only the public API,
 * so the two internal calls used here are spoken as plain gRPC over HTTP/2, with just the message
 * fields read (field numbers from the server's proto/internal/temporal/server/api/ of v1.32.0).
 */
const messages = protobuf.Root.fromJSON({
  nested: {
    WorkflowExecution: { fields: { workflowId: { type: 'string', id: 1 } } },
    DescribeHistoryHostResponse: { fields: { shardIds: { rule: 'repeated', type: 'int32', id: 2 } } },
    DescribeMutableStateRequest: {
      fields: { namespace: { type: 'string', id: 1 }, execution: { type: 'WorkflowExecution', id: 2 } },
    },
    DescribeMutableStateResponse: { fields: { shardId: { type: 'string', id: 1 } } },
  },
});
const RPC_TIMEOUT_MS = 5_000;

/** One unary gRPC call without TLS; rejects with the gRPC status and message unless it is OK. */
function grpcUnary(address: string, method: string, request: Uint8Array): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://${address}`);
    const fail = (error: Error) => {
      session.destroy();
      reject(new Error(`${method} at ${address}: ${error.message}`));
    };
    session.once('error', fail);
    session.setTimeout(RPC_TIMEOUT_MS, () => fail(new Error(`no answer in ${RPC_TIMEOUT_MS} ms`)));
    const stream = session.request({
      ':method': 'POST',
      ':path': method,
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    const chunks: Buffer[] = [];
    // A failed call may answer with headers only, so the status is in the headers or in the trailers.
    const status: { code?: string; message?: string } = {};
    const readStatus = (headers: http2.IncomingHttpHeaders) => {
      if (headers['grpc-status'] === undefined) return;
      status.code = String(headers['grpc-status']);
      status.message = decodeURIComponent(String(headers['grpc-message'] ?? ''));
    };
    stream.on('response', readStatus);
    stream.on('trailers', readStatus);
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('error', fail);
    stream.once('end', () => {
      session.close();
      if (status.code !== '0') {
        reject(new Error(`${method} at ${address}: gRPC status ${status.code}: ${status.message}`));
        return;
      }
      // One length-prefixed message: a compression flag byte, four bytes of length, the message.
      const body = Buffer.concat(chunks);
      resolve(body.length < 5 ? Buffer.alloc(0) : body.subarray(5, 5 + body.readUInt32BE(1)));
    });
    const frame = Buffer.alloc(5 + request.length);
    frame.writeUInt32BE(request.length, 1);
    frame.set(request, 5);
    stream.end(frame);
  });
}

/** The shards the history service at `historyAddress` holds now (its shard controller's, in order). */
export async function ownedShards(historyAddress: string): Promise<number[]> {
  const reply = await grpcUnary(
    historyAddress,
    '/temporal.server.api.historyservice.v1.HistoryService/DescribeHistoryHost',
    new Uint8Array(),
  );
  const { shardIds } = messages.lookupType('DescribeHistoryHostResponse').decode(reply) as unknown as {
    shardIds: number[];
  };
  return [...shardIds].sort((a, b) => a - b);
}

/** The history shard a workflow lives on, as the frontend at `frontendAddress` routes it. */
export async function workflowShard(
  frontendAddress: string,
  namespace: string,
  workflowId: string,
): Promise<number> {
  const request = messages.lookupType('DescribeMutableStateRequest');
  const reply = await grpcUnary(
    frontendAddress,
    '/temporal.server.api.adminservice.v1.AdminService/DescribeMutableState',
    request.encode(request.create({ namespace, execution: { workflowId } })).finish(),
  );
  const { shardId } = messages.lookupType('DescribeMutableStateResponse').decode(reply) as unknown as {
    shardId: string;
  };
  return Number(shardId);
}
