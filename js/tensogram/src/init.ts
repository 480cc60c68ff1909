// Loading the WebAssembly module (spec 07 G.2): `init()` must be awaited once
// before any other call; concurrent and repeated calls share one
// instantiation. The module is our C++ core compiled by Emscripten
// (scripts/build-wasm.sh); its glue is an ES module factory built for the
// "web,worker" environments, so in Node the .wasm bytes are read here and
// handed to it (the glue never needs Node's require()).

import { InvalidArgumentError } from "./errors.js";

/** The part of the Emscripten module this package uses (exports of wasm/exports.txt). */
export interface WasmModule {
  HEAPU8: Uint8Array;
  _malloc(n: number): number;
  _free(p: number): void;
  UTF8ToString(p: number, maxBytes?: number): string;
  stringToUTF8(s: string, p: number, max: number): void;
  lengthBytesUTF8(s: string): number;
  [name: `_tgm_${string}`]: (...args: never[]) => unknown;
}

export interface InitOptions {
  /** Where the .wasm comes from: a URL, a fetch Response, a compiled module or its bytes. */
  wasmInput?: URL | Response | WebAssembly.Module | BufferSource;
}

type Factory = (opts: Record<string, unknown>) => Promise<WasmModule>;

let loaded: WasmModule | undefined;
let loading: Promise<void> | undefined;

const WASM_URL = new URL("./wasm/tensogram_wasm.wasm", import.meta.url);
const GLUE_URL = new URL("./wasm/tensogram_wasm.js", import.meta.url);

async function wasmBytes(input: URL | Response | BufferSource): Promise<ArrayBuffer | ArrayBufferView> {
  if (input instanceof URL) {
    if (input.protocol === "file:") {
      const fs = await import("node:fs/promises");
      return new Uint8Array(await fs.readFile(input));
    }
    const r = await fetch(input);
    if (!r.ok) throw new InvalidArgumentError(`tensogram: cannot fetch ${input.href}: HTTP ${r.status}`);
    return r.arrayBuffer();
  }
  if (typeof Response !== "undefined" && input instanceof Response) return input.arrayBuffer();
  return input as ArrayBuffer | ArrayBufferView;
}

async function load(opts: InitOptions): Promise<void> {
  const glue = (await import(GLUE_URL.href)) as { default: Factory };
  const moduleOpts: Record<string, unknown> = {};
  const input = opts.wasmInput ?? WASM_URL;
  if (input instanceof WebAssembly.Module) {
    moduleOpts["instantiateWasm"] = (
      imports: WebAssembly.Imports,
      done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
    ) => {
      void WebAssembly.instantiate(input, imports).then((instance) => done(instance, input));
      return {};
    };
  } else {
    moduleOpts["wasmBinary"] = await wasmBytes(input);
  }
  loaded = await glue.default(moduleOpts);
}

/** Loads the WebAssembly module; must be awaited once before any other call. */
export function init(opts: InitOptions = {}): Promise<void> {
  if (loaded !== undefined) return Promise.resolve();
  loading ??= load(opts).catch((e: unknown) => {
    loading = undefined;
    throw e;
  });
  return loading;
}

/** The loaded module, or InvalidArgumentError before `init()` (spec 07 G.2). */
export function wasm(): WasmModule {
  if (loaded === undefined) {
    throw new InvalidArgumentError("tensogram: init() must be awaited before using any other API");
  }
  return loaded;
}
