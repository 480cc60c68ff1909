import { init, encode, TensogramFile } from "@tensogram/tensogram";
await init();
const grid = () => new Float32Array(91*180).map((_, k) => Math.sin(k/97));
const msgs = [0, 6, 12].map((step) => encode({ base: [{ mars: { param: "2t", step } }] }, [{ descriptor: { shape: [91, 180], dtype: "float32", compression: "zstd" }, data: grid() }]));
const m = msgs[1]; const L = m.length; const gap = Number(process.argv[2]); const T = L + gap;
const head = m.slice(0, L-24), tail = m.slice(L-24);
const dh = new DataView(head.buffer), dt = new DataView(tail.buffer);
dh.setBigUint64(16, BigInt(T)); dt.setBigUint64(8, BigInt(T)); if (Number(dt.getBigUint64(0)) === L-24) dt.setBigUint64(0, BigInt(T-24));
const parts = [[0, msgs[0]], [msgs[0].length, head], [msgs[0].length + T - 24, tail], [msgs[0].length + T, msgs[2]]];
const size = msgs[0].length + T + msgs[2].length;
const read = (o, l) => { const out = new Uint8Array(l); for (const [at, b] of parts) { const s = Math.max(o, at), e = Math.min(o + l, at + b.length); if (s < e) out.set(b.subarray(s - at, e - at), s - o); } return out; };
const fetch = async (_u, init) => {
  if (init?.method === "HEAD") return new Response(null, { headers: { "Content-Length": String(size), "Accept-Ranges": "bytes" } });
  const r = /bytes=(\d+)-(\d+)/.exec(new Headers(init.headers).get("Range"));
  return new Response(read(Number(r[1]), Number(r[2]) - Number(r[1]) + 1), { status: 206 });
};
const f = await TensogramFile.fromUrl("tgm:x", { fetch, debug: true });
console.log(f.messageCount, f.messageLayouts);
for (let i = 0; i < f.messageCount; i++) { try { console.log(i, JSON.stringify(await f.messageMetadata(i)).slice(0, 300)); } catch (e) { console.log(i, "ERR", e.message); } }
const o = await f.messageObject(2, 0); console.log(o.objects[0].descriptor.shape);
