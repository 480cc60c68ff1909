// An independent QUIC peer for the metatensor server (issue 28 item 3):
// Cloudflare's quiche (Rust, BoringSSL) through the @matrixai/quic bindings,
// speaking spec 06 §10 by hand: the handshake with ALPN "metatensor/1",
// OPEN on the control stream (OPENED, HEADER back), then one tensor stream
// per named tensor (GET with FIN; RESPONSE, DATA, FIN back), and a clean
// close of the control stream.
//
//   node peer.mjs HOST PORT RESOURCE CERT_PEM OUT_DIR TENSOR...
//
// The server's certificate is checked by pinning: the leaf it presents must
// be CERT_PEM (the self-signed certificate `metatensor serve` prints).
// BoringSSL will not take a CA:FALSE self-signed leaf as a trust anchor, so
// the library's verification callback does the comparison.  Writes
// OUT_DIR/header.bin and OUT_DIR/<tensor>.bin and prints one JSON line
// {"opened": {...}, "alpn": "...", "tensors": {name: {"offset": n, "length": n}}}.
// Exits non-zero with the error on stderr on any failure.
import { QUICClient } from '@matrixai/quic';
import { webcrypto, X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [host, port, resource, certFile, outDir, ...tensors] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: node peer.mjs HOST PORT RESOURCE CERT_PEM OUT_DIR TENSOR...');
  process.exit(2);
}

// QUIC variable-length integers (RFC 9000 §16), as §10.3 frames use them.
function varint(v) {
  if (v < 64) return Buffer.from([v]);
  if (v < 16384) return Buffer.from([0x40 | (v >> 8), v & 0xff]);
  if (v < 2 ** 30) {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(v);
    b[0] |= 0x80;
    return b;
  }
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(v));
  b[0] |= 0xc0;
  return b;
}
const frame = (type, payload) => Buffer.concat([varint(type), varint(payload.length), payload]);
const json = (type, value) => frame(type, Buffer.from(JSON.stringify(value)));

// §10.3 frames from a web ReadableStream; null at the end of the stream.
class FrameReader {
  constructor(readable) {
    this.reader = readable.getReader();
    this.chunks = [];
    this.size = 0;
  }
  async fill(n) {
    while (this.size < n) {
      const { value, done } = await this.reader.read();
      if (done) return false;
      this.chunks.push(Buffer.from(value));
      this.size += value.length;
    }
    return true;
  }
  take(n) {
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.chunks = all.length > n ? [all.subarray(n)] : [];
    this.size = all.length - n;
    return all.subarray(0, n);
  }
  async varint(allowEnd) {
    if (!(await this.fill(1))) {
      if (allowEnd) return null;
      throw new Error('stream ended inside a frame');
    }
    const len = 1 << (this.chunks[0][0] >> 6);
    if (!(await this.fill(len))) throw new Error('stream ended inside a varint');
    const b = this.take(len);
    let v = BigInt(b[0] & 0x3f);
    for (let i = 1; i < len; i++) v = (v << 8n) | BigInt(b[i]);
    return Number(v);
  }
  async next() {
    const type = await this.varint(true);
    if (type === null) return null;
    const length = await this.varint(false);
    if (!(await this.fill(length))) throw new Error(`stream ended inside frame 0x${type.toString(16)}`);
    return { type, payload: Buffer.from(this.take(length)) };
  }
}

async function expect(reader, type, what) {
  const f = await reader.next();
  if (f === null) throw new Error(`stream ended before ${what}`);
  if (f.type === 0x08) throw new Error(`server ERROR instead of ${what}: ${f.payload.toString()}`);
  if (f.type !== type) throw new Error(`frame 0x${f.type.toString(16)} instead of ${what}`);
  return f.payload;
}

const pinned = new X509Certificate(readFileSync(certFile)).raw;
const client = await QUICClient.createQUICClient(
  {
    host,
    port: Number(port),
    serverName: 'localhost',
    crypto: {
      ops: {
        randomBytes: async (data) => {
          webcrypto.getRandomValues(new Uint8Array(data));
        },
      },
    },
    config: {
      applicationProtos: ['metatensor/1'],
      verifyPeer: true,
      verifyCallback: async (certs) =>
        certs.length > 0 && Buffer.from(certs[0]).equals(pinned)
          ? undefined
          : new Error('the server did not present the pinned certificate'),
      maxIdleTimeout: 10000,
      // Large datagrams on loopback: fewer packets through the bindings' JS
      // event handlers, which bound this peer's rate.
      maxRecvUdpPayloadSize: 65527,
      initialMaxData: 64 * 1024 * 1024,
      initialMaxStreamDataBidiLocal: 16 * 1024 * 1024,
    },
  },
  { timer: 10000 },
);

const out = { tensors: {} };
const control = client.connection.newStream('bidi');
const controlWriter = control.writable.getWriter();
await controlWriter.write(json(0x01, { resource, versions: ['1'] }));
const controlReader = new FrameReader(control.readable);
out.opened = JSON.parse((await expect(controlReader, 0x02, 'OPENED')).toString());
const header = await expect(controlReader, 0x03, 'HEADER');
writeFileSync(join(outDir, 'header.bin'), header);

for (const tensor of tensors) {
  const s = client.connection.newStream('bidi');
  const w = s.writable.getWriter();
  await w.write(json(0x04, { tensor }));
  await w.close();  // FIN after GET (§10.4)
  const r = new FrameReader(s.readable);
  const response = JSON.parse((await expect(r, 0x05, `RESPONSE for ${tensor}`)).toString());
  const data = await expect(r, 0x06, `DATA for ${tensor}`);
  if ((await r.next()) !== null) throw new Error(`bytes after DATA on ${tensor}'s stream`);
  writeFileSync(join(outDir, `${tensor}.bin`), data);
  out.tensors[tensor] = { offset: response.offset, length: data.length };
}
// Closing the control stream ends the connection (§10.4).
await controlWriter.close();
console.log(JSON.stringify(out));
await client.destroy({ force: true });
process.exit(0);
