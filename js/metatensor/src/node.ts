// Node-only entry point: files by path, read header first and then each
// tensor on demand with positioned reads of a file handle (no whole-file
// read, so opening a 1 GiB file costs O(header)).
import { open as fsOpen, rename, unlink, type FileHandle } from "node:fs/promises";
import { MetatensorError } from "./errors.js";
import { MetatensorFile, OpenOptions, SafetensorsFile, open, openMetatensor, openSafetensors } from "./file.js";
import { ByteSource, checkAbort } from "./source.js";
import type { MetatensorWriter } from "./writer.js";

/** A file on disk read with positioned reads. */
export class FileSource implements ByteSource {
  readonly description: string;
  /** Reads issued and bytes read, for tests and diagnostics. */
  readonly stats = { reads: 0, bytes: 0 };
  private constructor(private readonly handle: FileHandle, readonly size: number, path: string) {
    this.description = path;
  }
  static async open(path: string): Promise<FileSource> {
    let h: FileHandle;
    try {
      h = await fsOpen(path, "r");
    } catch (e) {
      throw new MetatensorError("MT_NOT_FOUND", `${path}: ${(e as Error).message}`, { cause: e });
    }
    const st = await h.stat();
    return new FileSource(h, st.size, path);
  }
  async read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    checkAbort(signal);
    if (!(offset >= 0 && length >= 0 && offset + length <= this.size)) {
      throw new MetatensorError("MT_BAD_RANGE", `${this.description}: bytes [${offset}, ${offset + length}) outside a file of ${this.size} bytes`);
    }
    const out = new Uint8Array(length);
    let done = 0;
    this.stats.reads++;
    while (done < length) {
      const { bytesRead } = await this.handle.read(out, done, length - done, offset + done);
      if (bytesRead === 0) throw new MetatensorError("ST_INCOMPLETE", `${this.description}: file shorter than when opened (truncated at ${offset + done})`);
      done += bytesRead;
      checkAbort(signal);
    }
    this.stats.bytes += length;
    return out;
  }
  async close(): Promise<void> {
    await this.handle.close();
  }
}

/** Opens a file by path: a MetatensorFile, or a SafetensorsFile for plain safetensors files. Close it when done. */
export async function openFile(path: string, options: OpenOptions = {}): Promise<MetatensorFile | SafetensorsFile> {
  const src = await FileSource.open(path);
  try {
    return await open(src, options);
  } catch (e) {
    await src.close();
    throw e;
  }
}

/** Opens a metatensor file by path (MT_NOT_METATENSOR for plain safetensors). */
export async function openMetatensorFile(path: string, options: OpenOptions = {}): Promise<MetatensorFile> {
  const src = await FileSource.open(path);
  try {
    return await openMetatensor(src, options);
  } catch (e) {
    await src.close();
    throw e;
  }
}

/** Opens any safetensors file by path. */
export async function openSafetensorsFile(path: string, options: OpenOptions = {}): Promise<SafetensorsFile> {
  const src = await FileSource.open(path);
  try {
    return await openSafetensors(src, options);
  } catch (e) {
    await src.close();
    throw e;
  }
}

/** Writes a file atomically: a temporary file next to `path`, then rename. */
export async function writeFile(path: string, writer: MetatensorWriter): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  const h = await fsOpen(tmp, "w");
  try {
    for (const c of writer.chunks()) await h.write(c);
    await h.sync();
    await h.close();
    await rename(tmp, path);
  } catch (e) {
    await h.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
}
