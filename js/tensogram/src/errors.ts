// The error classes of the reference's package (spec 07 G.8). The WASM
// module reports failures through the C ABI: a tgm_error code plus the
// message of tgm_last_error(), which carries the core's prefix
// ("framing error: ..."); the class follows the code, `message` is the text
// without the prefix and `rawMessage` the text as the core wrote it.

/** Base of every error this package throws. */
export abstract class TensogramError extends Error {
  /** The message with the core's prefix ("framing error: ..."). */
  readonly rawMessage: string;
  constructor(message: string, rawMessage?: string) {
    super(message);
    this.rawMessage = rawMessage ?? message;
    this.name = new.target.name;
  }
}

export class FramingError extends TensogramError {}
export class MetadataError extends TensogramError {}
export class EncodingError extends TensogramError {}
export class CompressionError extends TensogramError {}
export class ObjectError extends TensogramError {}
export class IoError extends TensogramError {}
export class RemoteError extends TensogramError {}
/** Argument checks of this package, use before `init()` and use after `close()`. */
export class InvalidArgumentError extends TensogramError {}
export class StreamingLimitError extends TensogramError {}

/** Hash failures of `verifyHash` decoding. */
export abstract class IntegrityError extends TensogramError {
  readonly objectIndex: number | undefined;
  constructor(message: string, rawMessage?: string, objectIndex?: number) {
    super(message, rawMessage);
    this.objectIndex = objectIndex;
  }
}

export class HashMismatchError extends IntegrityError {
  readonly expected?: string;
  readonly actual?: string;
  constructor(message: string, rawMessage?: string, objectIndex?: number, expected?: string, actual?: string) {
    super(message, rawMessage, objectIndex);
    if (expected !== undefined) this.expected = expected;
    if (actual !== undefined) this.actual = actual;
  }
}

export class MissingHashError extends IntegrityError {}

// tgm_error codes (include/tensogram/core/tgm_error.h, spec 04 §C.1).
const enum Code {
  Framing = 1,
  Metadata = 2,
  Encoding = 3,
  Compression = 4,
  Object = 5,
  Io = 6,
  HashMismatch = 7,
  InvalidArg = 8,
  Remote = 10,
  MissingHash = 11,
}

const PREFIXES = [
  "framing error: ",
  "metadata error: ",
  "encoding error: ",
  "compression error: ",
  "object error: ",
  "io error: ",
  "remote error: ",
  "hash mismatch: ",
  "missing hash: ",
  "invalid argument: ",
];

function stripPrefix(raw: string): string {
  for (const p of PREFIXES) {
    if (raw.startsWith(p)) return raw.slice(p.length);
  }
  return raw;
}

function objectIndexOf(text: string): number | undefined {
  const m = /object (?:index )?(\d+)/.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** The error for a failed C ABI call: `code` from the call, `raw` from tgm_last_error(). */
export function errorFromCode(code: number, raw: string): TensogramError {
  const message = stripPrefix(raw);
  switch (code) {
    case Code.Framing:
      return new FramingError(message, raw);
    case Code.Metadata:
      return new MetadataError(message, raw);
    case Code.Encoding:
      return new EncodingError(message, raw);
    case Code.Compression:
      return new CompressionError(message, raw);
    case Code.Object:
      return new ObjectError(message, raw);
    case Code.Io:
      return new IoError(message, raw);
    case Code.Remote:
      return new RemoteError(message, raw);
    case Code.HashMismatch: {
      const digests = /expected ([0-9a-f]{16}).*?(?:actual|got) ([0-9a-f]{16})/.exec(message);
      return new HashMismatchError(message, raw, objectIndexOf(message), digests?.[1], digests?.[2]);
    }
    case Code.MissingHash:
      return new MissingHashError(message, raw, objectIndexOf(message));
    case Code.InvalidArg:
      return new InvalidArgumentError(message, raw);
    default:
      return new FramingError(message, raw);
  }
}
