// The page's side of the decoding worker: one promise per request, and a
// watchdog that stops a request running longer than TIMEOUT_MS by
// terminating the worker (its file is then closed: the page says so).

import type { FieldData, FileIndex, MtFlat, MtPage, Reply, Request } from "./protocol.js";

export const TIMEOUT_MS = 60_000;

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> };
type Body = Request extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

export class Decoder {
  private worker: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor() {
    this.worker = this.start();
  }

  private start(): Worker {
    const w = new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });
    w.onmessage = (ev: MessageEvent<Reply>) => {
      const p = this.pending.get(ev.data.id);
      if (p === undefined) return;
      this.pending.delete(ev.data.id);
      clearTimeout(p.timer);
      if (ev.data.ok) p.resolve(ev.data.value);
      else p.reject(new Error(ev.data.error));
    };
    w.onerror = (ev) => {
      ev.preventDefault();
      this.restart(`the decoder stopped: ${ev.message || "worker error"}`);
    };
    return w;
  }

  private restart(why: string): void {
    this.worker.terminate();
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error(why));
    }
    this.pending.clear();
    this.worker = this.start();
  }

  private call<T>(body: Body, transfer: Transferable[] = []): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => this.restart(`decoding took longer than ${TIMEOUT_MS / 1000} s and was stopped; open the file again`),
        TIMEOUT_MS,
      );
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.worker.postMessage({ ...body, id } as Request, transfer);
    });
  }

  /** Opens a Blob (read lazily) or an absolute URL (read with Range requests). */
  open(input: Blob | string, name: string): Promise<FileIndex> {
    return this.call({ kind: "open", input, name });
  }
  field(msg: number, obj: number): Promise<FieldData> {
    return this.call({ kind: "field", msg, obj });
  }
  /** The value of element `index` in each frame. */
  point(frames: { msg: number; obj: number }[], index: number): Promise<Float64Array> {
    return this.call({ kind: "point", frames, index });
  }
  mtFlat(name: string): Promise<MtFlat> {
    return this.call({ kind: "mt-flat", name });
  }
  mtPage(name: string, start: number, count: number): Promise<MtPage> {
    return this.call({ kind: "mt-page", name, start, count });
  }
}
